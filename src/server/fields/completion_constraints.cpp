// The constraint fields (native-completion.md §3.8, grammar.md §3-4): json_schema or
// grammar, response_format, grammar_lazy, grammar_triggers and preserved_tokens. The rows
// check each value's shape; finish_constraints() then settles the grammar text, compiles it
// and resolves the triggers, so a bad grammar is a 400 before the task is queued.
#include <algorithm>

#include "grammar/grammar.h"
#include "json_schema/json_schema.h"
#include "server/fields/completion_fields.h"
#include "tokenizer/tokenizer.h"

namespace hearth::server::fields {

namespace {

using scheduler::GrammarTrigger;

enum TriggerType { kToken = 0, kWord = 1, kPattern = 2, kPatternFull = 3 };

std::vector<int32_t> tokenize_special(const tokenizer::Tokenizer& tok, const std::string& text) {
  return tok.tokenize(text, false, true);
}

std::string regex_escape(const std::string& text) {
  static const std::string kSpecial = R"(.^$|()[]{}*+?\/-)";
  std::string out;
  for (char c : text) {
    if (kSpecial.find(c) != std::string::npos) out += '\\';
    out += c;
  }
  return out;
}

ApiError trigger_error(const std::string& why) {
  return invalid_request("Field 'grammar_triggers': " + why);
}

std::optional<ApiError> convert_schema(const Json& schema, const std::string& field,
                                       std::string& text) {
  auto converted = json_schema::to_gbnf(schema);
  if (!converted.is_ok()) {
    return invalid_request("Field '" + field + "': \"" + field +
                           "\": " + converted.status().message());
  }
  text = std::move(converted.value());
  return std::nullopt;
}

// The grammar text the request asks for: a converted json_schema (or response_format) when
// that is sent and `grammar` is absent, else `grammar`, else the server default.
std::optional<ApiError> grammar_text(const Json& body, const RequestDefaults& defaults,
                                     std::string& text) {
  auto schema = body.find("json_schema");
  auto grammar = body.find("grammar");
  const bool has_schema = schema != body.end() && !schema->is_null();
  if (grammar != body.end() && !grammar->is_null() && !grammar->is_string()) {
    return type_error("grammar", "string", *grammar);
  }
  if (grammar == body.end()) {
    if (auto format = response_format_schema(body.value("response_format", Json()), has_schema)) {
      return convert_schema(*format, "response_format", text);
    }
    if (has_schema) return convert_schema(*schema, "json_schema", text);
    text = defaults.grammar;
    return std::nullopt;
  }
  if (grammar->is_null()) {
    // A null grammar beside a schema means no grammar at all (the reference's quirk).
    text = has_schema ? "" : defaults.grammar;
    return std::nullopt;
  }
  text = grammar->get<std::string>();
  return std::nullopt;
}

// A trigger made final: word triggers of one token become token triggers.
std::optional<ApiError> resolve_trigger(GrammarTrigger trigger, const tokenizer::Tokenizer& tok,
                                        scheduler::GrammarSettings& g) {
  sampling::GrammarConfig& c = g.config;
  switch (trigger.type) {
    case kToken:
      c.trigger_tokens.push_back(trigger.token);
      break;
    case kWord: {
      std::vector<int32_t> ids = tokenize_special(tok, trigger.value);
      if (ids.size() == 1) {
        if (!std::binary_search(g.preserved_tokens.begin(), g.preserved_tokens.end(), ids[0])) {
          return trigger_error("Grammar trigger word should be marked as preserved token: " +
                               trigger.value);
        }
        trigger = {kToken, trigger.value, ids[0]};
        c.trigger_tokens.push_back(ids[0]);
      } else {
        c.trigger_patterns.push_back(regex_escape(trigger.value));
      }
      break;
    }
    case kPattern:
      c.trigger_patterns.push_back(trigger.value);
      break;
    case kPatternFull: {
      std::string p = trigger.value;
      if (p.empty() || p.front() != '^') p = "^" + p;
      if (p.size() < 2 || p.back() != '$') p += "$";
      c.trigger_patterns.push_back(p);
      break;
    }
    default:
      break;
  }
  g.triggers.push_back(std::move(trigger));
  return std::nullopt;
}

}  // namespace

// The schema a `response_format` asks for (openai-compat.md §4.7, as without Jinja): none for
// "text"; for "json_object" its `schema`, else {} unless `json_schema` was sent; for
// "json_schema" its json_schema.schema (else {}). The reference's native routes ignore the
// member; Hearth honours it (a recorded difference).
std::optional<Json> response_format_schema(const Json& response_format, bool has_schema) {
  if (response_format.is_null()) return std::nullopt;
  const Json* rf = &response_format;
  auto type_it = rf->find("type");
  const std::string type =
      type_it == rf->end() || type_it->is_null() ? "text" : type_it->get<std::string>();
  if (type == "json_object") {
    auto inner = rf->find("schema");
    if (inner != rf->end() && !inner->is_null()) return *inner;
    if (!has_schema) return Json::object();
    return std::nullopt;
  }
  if (type == "json_schema") {
    auto js = rf->find("json_schema");
    if (js != rf->end() && js->is_object()) {
      auto inner = js->find("schema");
      if (inner != js->end() && !inner->is_null()) return *inner;
    }
    return Json::object();
  }
  return std::nullopt;  // "text"
}

std::optional<ApiError> check_schema_value(const Json& v, const std::string& used,
                                           CompletionSettings&, const FieldContext&) {
  if (used == "grammar") {
    if (!v.is_string()) return type_error(used, "string", v);
    return std::nullopt;
  }
  // The reference converts whatever it is given; a schema is an object.
  if (!v.is_object()) return field_error(used, "must be a JSON Schema object");
  return std::nullopt;
}

std::optional<ApiError> check_response_format(const Json& v, const std::string& used,
                                              CompletionSettings&, const FieldContext&) {
  return validate_response_format(v, used);
}

std::optional<ApiError> validate_response_format(const Json& v, const std::string& used) {
  if (!v.is_object()) return type_error(used, "object", v);
  auto type = v.find("type");
  if (type == v.end() || type->is_null()) return std::nullopt;
  if (!type->is_string()) return type_error("response_format.type", "string", *type);
  const std::string& name = type->get_ref<const std::string&>();
  if (name != "text" && name != "json_object" && name != "json_schema") {
    return invalid_request(
        "response_format type must be one of \"text\" or \"json_object\", but got: " + name);
  }
  auto schema = v.find("schema");
  if (schema != v.end() && !schema->is_null() && !schema->is_object()) {
    return field_error("response_format.schema", "must be a JSON Schema object");
  }
  auto js = v.find("json_schema");
  if (js != v.end() && !js->is_null()) {
    if (!js->is_object()) return type_error("response_format.json_schema", "object", *js);
    auto inner = js->find("schema");
    if (inner != js->end() && !inner->is_null() && !inner->is_object()) {
      return field_error("response_format.json_schema.schema", "must be a JSON Schema object");
    }
  }
  return std::nullopt;
}

std::optional<ApiError> parse_preserved(const Json& v, const std::string& used,
                                        CompletionSettings& out, const FieldContext& ctx) {
  if (!v.is_array()) return type_error(used, "array", v);
  std::vector<int32_t>& kept = out.task.grammar.preserved_tokens;
  for (const Json& t : v) {
    if (!t.is_string()) return type_error(used, "string", t);
    std::vector<int32_t> ids = tokenize_special(*ctx.tok, t.get<std::string>());
    if (ids.size() == 1) kept.push_back(ids[0]);
  }
  std::sort(kept.begin(), kept.end());
  kept.erase(std::unique(kept.begin(), kept.end()), kept.end());
  return std::nullopt;
}

std::optional<ApiError> parse_triggers(const Json& v, const std::string& used,
                                       CompletionSettings& out, const FieldContext& ctx) {
  if (!v.is_array()) return type_error(used, "array", v);
  for (const Json& t : v) {
    if (!t.is_object() || !t.contains("type") || !t["type"].is_number_integer() ||
        !t.contains("value") || !t["value"].is_string()) {
      return trigger_error(
          "each trigger must be an object with an integer 'type' and a string 'value'");
    }
    const int64_t type = t["type"].get<int64_t>();
    if (type < kToken || type > kPatternFull) {
      return trigger_error("unknown trigger type " + std::to_string(type) +
                           " (0 token, 1 word, 2 pattern, 3 full pattern)");
    }
    GrammarTrigger trigger{static_cast<int32_t>(type), t["value"].get<std::string>(), -1};
    if (type == kToken) {
      auto token = t.find("token");
      if (token == t.end() || !token->is_number_integer()) {
        return trigger_error("a token trigger (type 0) needs an integer 'token'");
      }
      const int64_t id = token->get<int64_t>();
      if (id < 0 || id >= ctx.tok->n_vocab()) return trigger_error("trigger token id out of range");
      trigger.token = static_cast<int32_t>(id);
    }
    out.pending_triggers.push_back(std::move(trigger));
  }
  if (out.task.grammar.config.lazy && out.pending_triggers.empty()) {
    return trigger_error("Error: no triggers set for lazy grammar!");
  }
  return std::nullopt;
}

std::optional<ApiError> finish_constraints(const Json& body, const FieldContext& ctx,
                                           CompletionSettings& out) {
  scheduler::GrammarSettings& g = out.task.grammar;
  if (auto err = grammar_text(body, *ctx.defaults, g.text)) return err;
  for (GrammarTrigger& trigger : out.pending_triggers) {
    if (auto err = resolve_trigger(std::move(trigger), *ctx.tok, g)) return err;
  }
  out.pending_triggers.clear();
  if (g.text.empty()) return std::nullopt;
  auto parsed = grammar::parse(
      g.text, [&](std::string_view text) { return ctx.tok->tokenize(text, false, true); });
  if (!parsed.is_ok()) {
    return invalid_request("Failed to initialize samplers: failed to parse grammar: " +
                           parsed.status().message());
  }
  g.config.grammar = std::move(parsed.value());
  if (Status st = sampling::check_trigger_patterns(g.config.trigger_patterns); !st.is_ok()) {
    return invalid_request("Failed to initialize samplers: " + st.message());
  }
  return std::nullopt;
}

}  // namespace hearth::server::fields
