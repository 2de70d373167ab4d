// Tool-call grammar of Gemma 4: call:name{key:value,...}. The template's format_argument
// writes keys bare and in dictsort order (case-insensitive), strings between <|"|> quotes,
// lists in [...], numbers, true/false/null as JSON does, and no spaces. The arguments follow
// the tool's parameters schema: declared keys only, the required ones always; strings with
// their enums and lengths; numbers, integers and booleans through the JSON-schema converter
// (their text is the same as JSON's, ranges included); arrays, anyOf/oneOf, const and local
// $refs. A schema this literal cannot express more closely (allOf, patterns, free-form
// objects) takes any Gemma value of its kind.
#include <algorithm>
#include <map>
#include <set>

#include "chat/openai_messages.h"
#include "json_schema/json_schema.h"
#include "server/json_util.h"
#include "server/openai/tool_grammar.h"

namespace hearth::server::openai {

namespace {

constexpr const char* kQuote = "<|\"|>";
constexpr int kMaxDepth = 32;

// A non-negative integer keyword of a schema (minLength, maxItems), if it is one.
std::optional<uint64_t> count_of(const Json& schema, const char* key) {
  if (!schema.contains(key) || !schema[key].is_number_unsigned()) return std::nullopt;
  return schema[key].get<uint64_t>();
}

// Keys in Jinja's dictsort order: case-insensitive, ties kept apart case-sensitively.
std::vector<std::string> sorted_keys(const Json& object) {
  std::vector<std::string> keys;
  for (const auto& [key, value] : object.items()) keys.push_back(key);
  auto lower = [](std::string s) {
    for (char& c : s) c = static_cast<char>(c >= 'A' && c <= 'Z' ? c - 'A' + 'a' : c);
    return s;
  };
  std::sort(keys.begin(), keys.end(), [&](const std::string& a, const std::string& b) {
    const std::string la = lower(a), lb = lower(b);
    return la != lb ? la < lb : a < b;
  });
  return keys;
}

// A JSON value as the template writes an argument: {k:v,...}, [v,...], <|"|>text<|"|>.
std::string gemma_text(const Json& v) {
  if (v.is_string()) return kQuote + v.get<std::string>() + kQuote;
  if (v.is_object()) {
    std::string out = "{";
    for (const std::string& key : sorted_keys(v)) {
      out += (out.size() > 1 ? "," : "") + key + ":" + gemma_text(v[key]);
    }
    return out + "}";
  }
  if (v.is_array()) {
    std::string out = "[";
    for (const Json& item : v) out += (out.size() > 1 ? "," : "") + gemma_text(item);
    return out + "]";
  }
  return v.dump();
}

// The rules for one tool's arguments: each schema node becomes a rule prefix + "vN".
class GemmaRules {
 public:
  GemmaRules(const chat::Tool& tool, const Json& root, std::string prefix, std::string& rules)
      : tool_(tool), root_(root), prefix_(std::move(prefix)), rules_(rules) {}

  // The rule (a name or a generic rule) for values of `schema`.
  std::optional<ApiError> value(const Json& schema, int depth, std::string& rule) {
    if (!schema.is_object() || schema.empty() || depth > kMaxDepth) {
      rule = "gemma-value";
      return std::nullopt;
    }
    if (schema.contains("$ref")) return reference(schema["$ref"], depth, rule);
    std::string body;
    if (auto err = body_of(schema, depth, body)) return err;
    rule = emit(body);
    return std::nullopt;
  }

 private:
  std::string emit(const std::string& body) {
    const std::string name = prefix_ + "v" + std::to_string(count_++);
    rules_ += name + " ::= " + body + "\n";
    return name;
  }

  std::optional<ApiError> error(const std::string& what) const {
    return invalid_request("JSON schema conversion failed:\n" + what + " (tool '" + tool_.name +
                           "')");
  }

  // A local reference (#/$defs/x, #/definitions/x): one rule per target, so recursive
  // schemas give recursive rules.
  std::optional<ApiError> reference(const Json& ref, int depth, std::string& rule) {
    if (!ref.is_string() || ref.get<std::string>().rfind("#", 0) != 0) {
      return error("only local $ref are supported");
    }
    const std::string path = ref.get<std::string>().substr(1);
    if (auto it = refs_.find(path); it != refs_.end()) {
      rule = it->second;
      return std::nullopt;
    }
    const Json* target = nullptr;
    try {
      target = &root_.at(Json::json_pointer(path));
    } catch (const Json::exception&) {
      return error("unresolvable $ref '" + ref.get<std::string>() + "'");
    }
    rule = prefix_ + "ref" + std::to_string(refs_.size());
    refs_[path] = rule;
    std::string body;
    if (auto err = body_of(*target, depth + 1, body)) return err;
    rules_ += rule + " ::= " + body + "\n";
    return std::nullopt;
  }

  std::optional<ApiError> alternatives(const Json& options, int depth, std::string& body) {
    for (const Json& option : options) {
      std::string rule;
      if (auto err = value(option, depth + 1, rule)) return err;
      body += (body.empty() ? "" : " | ") + rule;
    }
    if (body.empty()) body = "gemma-value";
    return std::nullopt;
  }

  std::optional<ApiError> body_of(const Json& schema, int depth, std::string& body) {
    if (!schema.is_object() || schema.empty() || depth > kMaxDepth) {
      body = "gemma-value";
      return std::nullopt;
    }
    if (schema.contains("$ref")) return reference(schema["$ref"], depth, body);
    if (schema.contains("const")) {
      body = gbnf_literal(gemma_text(schema["const"]));
      return std::nullopt;
    }
    if (schema.contains("enum") && schema["enum"].is_array() && !schema["enum"].empty()) {
      for (const Json& v : schema["enum"]) {
        body += (body.empty() ? "" : " | ") + gbnf_literal(gemma_text(v));
      }
      return std::nullopt;
    }
    for (const char* key : {"anyOf", "oneOf"}) {
      if (schema.contains(key) && schema[key].is_array()) {
        return alternatives(schema[key], depth, body);
      }
    }
    const Json type = schema.value("type", Json());
    if (type.is_array()) {
      Json options = Json::array();
      for (const Json& t : type) {
        Json one = schema;
        one["type"] = t;
        options.push_back(std::move(one));
      }
      return alternatives(options, depth, body);
    }
    const std::string kind = type.is_string() ? type.get<std::string>() : "";
    if (kind == "object" || (kind.empty() && schema.contains("properties"))) {
      return object(schema, depth, body);
    }
    if (kind == "array") return array(schema, depth, body);
    if (kind == "string") return string(schema, body);
    if (kind == "integer" || kind == "number" || kind == "boolean" || kind == "null") {
      return scalar(schema, body);
    }
    if (!kind.empty()) return scalar(schema, body);  // the converter names what it lacks
    body = "gemma-value";
    return std::nullopt;
  }

  std::optional<ApiError> string(const Json& schema, std::string& body) {
    const uint64_t min = count_of(schema, "minLength").value_or(0);
    std::string chars = "gemma-char*";
    if (const std::optional<uint64_t> max = count_of(schema, "maxLength")) {
      chars = "gemma-char{" + std::to_string(min) + "," + std::to_string(std::max(min, *max)) + "}";
    } else if (min > 0) {
      chars = "gemma-char{" + std::to_string(min) + ",}";
    }
    body = "gemma-quote " + chars + " gemma-quote";
    return std::nullopt;
  }

  // Numbers, integers, booleans and null read as JSON does: the converter's rules.
  std::optional<ApiError> scalar(const Json& schema, std::string& body) {
    Result<json_schema::Conversion> converted = json_schema::convert(schema);
    if (!converted.is_ok()) return invalid_request(converted.status().message());
    const std::string prefix = prefix_ + "j" + std::to_string(count_++) + "-";
    std::string gbnf = bounded_numbers(converted->gbnf);
    // No space after a value: the template writes none.
    for (size_t at = gbnf.find(" space\n"); at != std::string::npos; at = gbnf.find(" space\n")) {
      gbnf.erase(at, 6);
    }
    rules_ += prefix_rules(gbnf, prefix);
    body = prefix + "root";
    return std::nullopt;
  }

  std::optional<ApiError> array(const Json& schema, int depth, std::string& body) {
    std::string item;
    if (auto err = value(schema.value("items", Json::object()), depth + 1, item)) return err;
    const uint64_t min = count_of(schema, "minItems").value_or(0);
    const std::optional<uint64_t> max_items = count_of(schema, "maxItems");
    const bool bounded = max_items.has_value();
    const uint64_t max = bounded ? std::max(min, *max_items) : 0;
    if (bounded && max == 0) {
      body = "\"[]\"";
      return std::nullopt;
    }
    const std::string more = "( \",\" " + item + " ){" + std::to_string(min > 0 ? min - 1 : 0) +
                             "," + (bounded ? std::to_string(max - 1) : "") + "}";
    const std::string items = item + " " + more;
    body = "\"[\" " + (min > 0 ? items : "( " + items + " )?") + " \"]\"";
    return std::nullopt;
  }

  // {k:v,...}: the declared keys in dictsort order, the required ones always, a comma
  // between the present ones. start_i is "keys i.. with none written yet".
  std::optional<ApiError> object(const Json& schema, int depth, std::string& body) {
    const Json properties = schema.value("properties", Json::object());
    if (!properties.is_object() || properties.empty()) {
      body = "gemma-dict";
      return std::nullopt;
    }
    std::set<std::string> required;
    if (schema.contains("required") && schema["required"].is_array()) {
      for (const Json& r : schema["required"]) {
        if (r.is_string()) required.insert(r.get<std::string>());
      }
    }
    const std::vector<std::string> keys = sorted_keys(properties);
    std::vector<std::string> members;
    for (const std::string& key : keys) {
      std::string rule;
      if (auto err = value(properties[key], depth + 1, rule)) return err;
      members.push_back(gbnf_literal(key + ":") + " " + rule);
    }
    // After a written key, each later key is ",member", optional unless required.
    auto rest = [&](size_t from) {
      std::string out;
      for (size_t j = from; j < keys.size(); ++j) {
        const std::string m = "\",\" " + members[j];
        out += " " + (required.count(keys[j]) ? m : "( " + m + " )?");
      }
      return out;
    };
    // An expression as one symbol: a rule name stays, a sequence gets a rule.
    auto symbol = [&](const std::string& expr) {
      return expr.find(' ') == std::string::npos ? expr : emit(expr);
    };
    std::string start;  // start_n: nothing
    for (size_t i = keys.size(); i-- > 0;) {
      const std::string here = members[i] + rest(i + 1);
      if (required.count(keys[i])) {
        start = here;
      } else {
        start = emit(start.empty() ? "( " + here + " )?" : here + " | " + symbol(start));
      }
    }
    body = "\"{\" " + (start.empty() ? "" : start + " ") + "\"}\"";
    return std::nullopt;
  }

  const chat::Tool& tool_;
  const Json& root_;
  const std::string prefix_;
  std::string& rules_;
  size_t count_ = 0;
  std::map<std::string, std::string> refs_;
};

}  // namespace

std::string gemma_value_rules() {
  return "gemma-quote ::= \"<|\\\"|>\"\n"
         "gemma-char ::= [^<] | \"<\" [^|]\n"
         "gemma-value ::= gemma-quote gemma-char* gemma-quote | gemma-dict | gemma-list | "
         "gemma-number | \"true\" | \"false\" | \"null\"\n"
         "gemma-dict ::= \"{\" ( gemma-member ( \",\" gemma-member )* )? \"}\"\n"
         "gemma-member ::= [a-zA-Z0-9_$.-]+ \":\" gemma-value\n"
         "gemma-list ::= \"[\" ( gemma-value ( \",\" gemma-value )* )? \"]\"\n"
         "gemma-number ::= \"-\"? [0-9]{1,16} ( \".\" [0-9]{1,16} )? "
         "( [eE] [-+]? [0-9]{1,2} )?\n";
}

std::optional<ApiError> gemma_call_rule(const chat::Tool& tool, const std::string& prefix,
                                        std::string& rules, std::string& body) {
  const Json& schema = chat::tool_schema(tool);
  GemmaRules gemma(tool, schema, prefix, rules);
  std::string args = "gemma-dict";
  if (schema.contains("properties") || schema.contains("$ref")) {
    if (auto err = gemma.value(schema, 0, args)) return err;
  }
  body = gbnf_literal(tool.name) + " " + args;
  return std::nullopt;
}

}  // namespace hearth::server::openai
