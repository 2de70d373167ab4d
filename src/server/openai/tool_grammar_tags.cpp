// Tool-call grammars of the families that write parameters in tags (Qwen3-Coder and
// Seed-OSS <parameter=k>, GLM <arg_key>/<arg_value>, MiniMax M2 and DSML invoke tags): the
// tool's properties in schema order, the required ones always, the others optional; a
// string parameter is text without '<' (or one of its enum values), any other a JSON value
// of its schema. LFM2's Python calls: f(k=value, ...) with JSON values.
#include "chat/openai_messages.h"
#include "json_schema/json_schema.h"
#include "server/json_util.h"
#include "server/openai/tool_grammar.h"

namespace hearth::server::openai {

namespace {

bool is_string_schema(const Json& schema) {
  return schema.is_object() && schema.contains("type") && schema["type"] == "string";
}

std::optional<ApiError> json_value_rule(const Json& schema, const std::string& prefix,
                                        std::string& rules, std::string& rule);

// The value rule of one parameter (its rules appended to `rules`).
std::optional<ApiError> value_rule(const Json& schema, const std::string& prefix,
                                   std::string& rules, std::string& rule) {
  rule = prefix + "value";
  if (is_string_schema(schema)) {
    if (schema.contains("enum") && schema["enum"].is_array() && !schema["enum"].empty()) {
      std::string alternatives;
      for (const Json& v : schema["enum"]) {
        if (!v.is_string()) continue;
        alternatives += (alternatives.empty() ? "" : " | ") + gbnf_literal(v.get<std::string>());
      }
      rules += rule + " ::= " + alternatives + "\n";
      return std::nullopt;
    }
    std::string repeat = "*";
    if (schema.contains("maxLength") && schema["maxLength"].is_number_unsigned()) {
      repeat = "{0," + std::to_string(schema["maxLength"].get<uint64_t>()) + "}";
    }
    rules += rule + " ::= [^<]" + repeat + "\n";
    return std::nullopt;
  }
  return json_value_rule(schema, prefix, rules, rule);
}

// A parameter's value as JSON of its schema (its rules appended to `rules`).
std::optional<ApiError> json_value_rule(const Json& schema, const std::string& prefix,
                                        std::string& rules, std::string& rule) {
  Result<json_schema::Conversion> converted = json_schema::convert(schema);
  if (!converted.is_ok()) {
    return invalid_request(converted.status().message());
  }
  rules += prefix_rules(bounded_numbers(converted->gbnf), prefix);
  rule = prefix + "root";
  return std::nullopt;
}

// Kimi K3's type attribute of a parameter: the JSON type its value has (the template's
// xtml_type), any of them when the schema does not say.
std::string xtml_type(const Json& schema) {
  const std::string type =
      schema.is_object() && schema.contains("type") && schema["type"].is_string()
          ? schema["type"].get<std::string>()
          : "";
  if (type == "integer" || type == "number") return gbnf_literal("number");
  if (type == "string" || type == "boolean" || type == "null" || type == "object" ||
      type == "array") {
    return gbnf_literal(type);
  }
  return "( \"string\" | \"number\" | \"boolean\" | \"null\" | \"object\" | \"array\" )";
}

// One parameter as the family writes it.
std::string param_text(const chat::ToolCallFormat& f, const std::string& key,
                       const std::string& value, const Json& schema) {
  const bool is_string = is_string_schema(schema);
  switch (f.style) {
    case chat::ToolCallStyle::kXmlParameters:
      return gbnf_literal("<parameter=" + key + ">\n") + " " + value + " " +
             gbnf_literal("\n</parameter>\n");
    case chat::ToolCallStyle::kKeyValueTags: {
      // key_open key key_close [value_open] value value_close (GLM's <arg_key>...</arg_value>)
      const std::string open = f.value_open.empty() ? "" : gbnf_literal(f.value_open) + " ";
      return gbnf_literal(f.key_open + key + f.key_close) + " tag-space " + open + value + " " +
             gbnf_literal(f.value_close) + " tag-space";
    }
    case chat::ToolCallStyle::kInvokeTags: {
      const bool dsml = f.param_open.find("DSML") != std::string::npos;
      std::string open =
          gbnf_literal(f.param_open + key + "\"" +
                       (dsml ? (is_string ? " string=\"true\"" : " string=\"false\"") : "") +
                       (f.typed_params ? "" : f.tag_end));
      if (f.typed_params) {
        open += " " + gbnf_literal(" type=\"") + " " + xtml_type(schema) + " " +
                gbnf_literal("\"" + f.tag_end);
      }
      return open + " " + value + " " + gbnf_literal(f.param_close) + " tag-space";
    }
    default:
      return "";
  }
}

std::string call_head(const chat::ToolCallFormat& f, const std::string& name) {
  switch (f.style) {
    case chat::ToolCallStyle::kXmlParameters:
      return gbnf_literal("<function=" + name + ">\n");
    case chat::ToolCallStyle::kKeyValueTags:
      return gbnf_literal(name + (f.name_end.empty() ? "\n" : f.name_end)) + " tag-space";
    case chat::ToolCallStyle::kInvokeTags:
      if (f.indexed_calls) {
        // Kimi K3: <|open|>call tool="f" index="1"<|sep|>
        return gbnf_literal(f.name_prefix + name + "\" index=\"") + " [1-9] [0-9]{0,2} " +
               gbnf_literal("\"" + f.tag_end) + " tag-space";
      }
      return gbnf_literal(f.name_prefix + name + "\"" + f.tag_end) + " tag-space";
    default:
      return "";
  }
}

std::string call_tail(const chat::ToolCallFormat& f) {
  switch (f.style) {
    case chat::ToolCallStyle::kXmlParameters:
      return " " + gbnf_literal("</function>");
    case chat::ToolCallStyle::kInvokeTags:
      return " " + gbnf_literal(f.call_end);
    default:
      return "";  // GLM: the call's end marker closes it
  }
}

// A tool's parameters schema: its properties (in schema order) and the required names.
struct ToolParameters {
  Json properties = Json::object();
  std::set<std::string> required;
};

ToolParameters parameters_of(const Json& schema) {
  ToolParameters out;
  if (!schema.is_object()) return out;
  out.properties = schema.value("properties", Json::object());
  if (!out.properties.is_object()) out.properties = Json::object();
  if (schema.contains("required") && schema["required"].is_array()) {
    for (const Json& r : schema["required"]) {
      if (r.is_string()) out.required.insert(r.get<std::string>());
    }
  }
  return out;
}

ToolParameters tool_parameters(const chat::Tool& tool) {
  return parameters_of(chat::tool_schema(tool));
}

}  // namespace

std::optional<ApiError> tagged_call_rule(const chat::ToolCallFormat& f, const chat::Tool& tool,
                                         const std::string& prefix, std::string& rules,
                                         std::string& body) {
  const ToolParameters schema = tool_parameters(tool);
  const Json& properties = schema.properties;
  const std::set<std::string>& required = schema.required;
  body = call_head(f, tool.name);
  size_t n = 0;
  for (const auto& [key, property] : properties.items()) {
    std::string value;
    const std::string param_prefix = prefix + "p" + std::to_string(n++) + "-";
    if (auto err = value_rule(property, param_prefix, rules, value)) return err;
    const std::string text = param_text(f, key, value, property);
    body += " " + (required.count(key) ? text : "( " + text + " )?");
  }
  body += call_tail(f);
  return std::nullopt;
}

namespace {

// MiniMax M3's elements (tool_grammar.h): the value of one element of `schema` and its close.
class ElementRules {
 public:
  ElementRules(const chat::ToolCallFormat& f, std::string prefix, std::string& rules)
      : f_(f), prefix_(std::move(prefix)), rules_(rules) {}

  // open + tag + ">" value close + tag + ">".
  std::optional<ApiError> element(const std::string& tag, const Json& schema, int depth,
                                  std::string& out) {
    std::string value;
    if (auto err = value_of(schema, depth, value)) return err;
    out = gbnf_literal(f_.param_open + tag + ">") + " " + value + " " +
          gbnf_literal(f_.param_close + tag + ">");
    return std::nullopt;
  }

  // The members in schema order, the required ones always, each optional one at most
  // once (the reference lets optional ones repeat in any order, which a model can loop in).
  std::optional<ApiError> members(const Json& schema, int depth, std::string& out) {
    const ToolParameters p = parameters_of(schema);
    out.clear();
    for (const auto& [key, property] : p.properties.items()) {
      std::string e;
      if (auto err = element(key, property, depth + 1, e)) return err;
      const std::string spaced = out.empty() ? e : "tag-space " + e;
      out += (out.empty() ? "" : " ") + (p.required.count(key) ? spaced : "( " + spaced + " )?");
    }
    return std::nullopt;
  }

 private:
  std::optional<ApiError> value_of(const Json& schema, int depth, std::string& out) {
    const std::string name = prefix_ + "e" + std::to_string(count_++);
    std::string body;
    const std::string type =
        schema.is_object() && schema.contains("type") && schema["type"].is_string()
            ? schema["type"].get<std::string>()
            : "";
    if (type == "string" && schema.contains("enum") && schema["enum"].is_array()) {
      for (const Json& v : schema["enum"]) {
        if (v.is_string()) body += (body.empty() ? "" : " | ") + gbnf_literal(v.get<std::string>());
      }
    } else if (type == "string" && schema.contains("maxLength") &&
               schema["maxLength"].is_number_unsigned()) {
      body = "[^\\]]{0," + std::to_string(schema["maxLength"].get<uint64_t>()) + "}";
    } else if (type == "string") {
      body = "( [^\\]] | \"]\" [^<] )*";  // text without the namespace token's "]<"
    } else if (type == "object" && schema.contains("properties") && depth < 16) {
      if (auto err = members(schema, depth, body)) return err;
      body = "tag-space " + body + " tag-space";
    } else if (type == "array" && schema.contains("items") && depth < 16) {
      std::string item;
      if (auto err = element("item", schema["items"], depth + 1, item)) return err;
      const uint64_t min = schema.value("minItems", Json(0)).is_number_unsigned()
                               ? schema["minItems"].get<uint64_t>()
                               : 0;
      std::string repeat = "{" + std::to_string(min) + ",}";
      if (schema.contains("maxItems") && schema["maxItems"].is_number_unsigned()) {
        repeat = "{" + std::to_string(min) + "," +
                 std::to_string(std::max(min, schema["maxItems"].get<uint64_t>())) + "}";
      }
      body = "( tag-space " + item + " )" + repeat + " tag-space";
    } else if (schema.is_object() && (schema.contains("anyOf") || schema.contains("oneOf")) &&
               depth < 16) {
      const Json& options = schema.contains("anyOf") ? schema["anyOf"] : schema["oneOf"];
      for (const Json& option : options) {
        std::string v;
        if (auto err = value_of(option, depth + 1, v)) return err;
        body += (body.empty() ? "" : " | ") + v;
      }
    }
    if (body.empty()) {
      if (auto err = json_value_rule(schema, name + "-", rules_, body)) return err;
    }
    rules_ += name + " ::= " + body + "\n";
    out = name;
    return std::nullopt;
  }

  const chat::ToolCallFormat& f_;
  const std::string prefix_;
  std::string& rules_;
  size_t count_ = 0;
};

}  // namespace

std::optional<ApiError> element_call_rule(const chat::ToolCallFormat& f, const chat::Tool& tool,
                                          const std::string& prefix, std::string& rules,
                                          std::string& body) {
  ElementRules elements(f, prefix, rules);
  std::string members;
  if (auto err = elements.members(chat::tool_schema(tool), 0, members)) return err;
  body = gbnf_literal(f.name_prefix + tool.name + "\">") + " tag-space " +
         (members.empty() ? "" : members + " tag-space ") + gbnf_literal(f.call_end);
  return std::nullopt;
}

std::optional<ApiError> python_call_rule(const chat::Tool& tool, const std::string& prefix,
                                         std::string& rules, std::string& body) {
  const ToolParameters schema = tool_parameters(tool);
  const Json& properties = schema.properties;
  const std::set<std::string>& required = schema.required;
  // k=value with the value JSON of its schema (a JSON string is a Python string too).
  std::vector<std::string> needed, optional;
  size_t n = 0;
  for (const auto& [key, property] : properties.items()) {
    std::string value;
    const std::string param_prefix = prefix + "p" + std::to_string(n++) + "-";
    if (auto err = json_value_rule(property, param_prefix, rules, value)) return err;
    const std::string text = gbnf_literal(key + "=") + " " + value;
    (required.count(key) ? needed : optional).push_back(text);
  }
  // The required arguments first, each optional one after them; without required ones,
  // any of the arguments, comma-separated.
  std::string params;
  for (const std::string& p : needed) params += (params.empty() ? "" : " \", \" ") + p;
  if (!needed.empty()) {
    for (const std::string& p : optional) params += " ( \", \" " + p + " )?";
  } else if (!optional.empty()) {
    std::string any;
    for (const std::string& p : optional) any += (any.empty() ? "( " : " | ") + p;
    any += " )";
    params = "( " + any + " ( \", \" " + any + " )* )?";
  }
  body = gbnf_literal(tool.name + "(") + (params.empty() ? "" : " " + params) + " \")\"";
  return std::nullopt;
}

}  // namespace hearth::server::openai
