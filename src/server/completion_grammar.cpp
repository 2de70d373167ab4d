// The constraint fields (native-completion.md §3.8, grammar.md §3-4): json_schema or
// grammar, grammar_lazy, grammar_triggers and preserved_tokens. The grammar is parsed and
// the trigger patterns compiled here, so a bad one is a 400 before the task is queued.
#include <algorithm>

#include "grammar/grammar.h"
#include "json_schema/json_schema.h"
#include "server/completion_params_internal.h"
#include "tokenizer/tokenizer.h"

namespace hearth::server::detail {

namespace {

using scheduler::GrammarTrigger;

enum TriggerType { kToken = 0, kWord = 1, kPattern = 2, kPatternFull = 3 };

// The schema a `response_format` asks for (openai-compat.md §4.7, as without Jinja): none for
// "text"; for "json_object" its `schema`, else {} unless `json_schema` was sent; for
// "json_schema" its json_schema.schema (else {}). The reference's native routes ignore the
// member; Hearth honours it (a recorded difference).
std::optional<ApiError> response_format_schema(const Json& body, bool has_schema,
                                               std::optional<Json>& schema) {
  auto rf = body.find("response_format");
  if (rf == body.end() || rf->is_null()) return std::nullopt;
  if (!rf->is_object()) return type_error("response_format", "object", *rf);
  auto type_it = rf->find("type");
  if (type_it != rf->end() && !type_it->is_null() && !type_it->is_string()) {
    return type_error("response_format.type", "string", *type_it);
  }
  const std::string type =
      type_it == rf->end() || type_it->is_null() ? "text" : type_it->get<std::string>();
  if (type == "text") return std::nullopt;
  if (type == "json_object") {
    auto inner = rf->find("schema");
    if (inner != rf->end() && !inner->is_null()) {
      schema = *inner;
    } else if (!has_schema) {
      schema = Json::object();
    }
    return std::nullopt;
  }
  if (type == "json_schema") {
    const Json* inner = nullptr;
    auto js = rf->find("json_schema");
    if (js != rf->end() && js->is_object() && js->contains("schema")) inner = &(*js)["schema"];
    schema = inner != nullptr && !inner->is_null() ? *inner : Json::object();
    return std::nullopt;
  }
  return invalid_request(
      "response_format type must be one of \"text\" or \"json_object\", but "
      "got: " +
      type);
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
  std::optional<Json> format_schema;
  if (auto err = response_format_schema(body, has_schema, format_schema)) return err;
  if (grammar == body.end()) {
    if (format_schema) return convert_schema(*format_schema, "response_format", text);
    if (has_schema) return convert_schema(*schema, "json_schema", text);
  }
  if (grammar != body.end() && grammar->is_null()) {
    // A null grammar beside a schema means no grammar at all (the reference's quirk).
    text = has_schema ? "" : defaults.grammar;
    return std::nullopt;
  }
  if (grammar != body.end()) {
    if (!grammar->is_string()) return type_error("grammar", "string", *grammar);
    text = grammar->get<std::string>();
    return std::nullopt;
  }
  text = defaults.grammar;
  return std::nullopt;
}

std::vector<int32_t> tokenize_special(const tokenizer::Tokenizer& tok, const std::string& text) {
  return tok.tokenize(text, false, true);
}

std::optional<ApiError> parse_preserved(const Json& body, const tokenizer::Tokenizer& tok,
                                        scheduler::GrammarSettings& g) {
  auto it = body.find("preserved_tokens");
  if (it == body.end() || it->is_null()) return std::nullopt;
  if (!it->is_array()) return type_error("preserved_tokens", "array", *it);
  for (const Json& t : *it) {
    if (!t.is_string()) return type_error("preserved_tokens", "string", t);
    std::vector<int32_t> ids = tokenize_special(tok, t.get<std::string>());
    if (ids.size() == 1) g.preserved_tokens.push_back(ids[0]);
  }
  std::sort(g.preserved_tokens.begin(), g.preserved_tokens.end());
  g.preserved_tokens.erase(std::unique(g.preserved_tokens.begin(), g.preserved_tokens.end()),
                           g.preserved_tokens.end());
  return std::nullopt;
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

// One trigger: its echo and what the grammar sampler will watch for.
std::optional<ApiError> add_trigger(const Json& t, const tokenizer::Tokenizer& tok,
                                    scheduler::GrammarSettings& g) {
  if (!t.is_object() || !t.contains("type") || !t["type"].is_number_integer() ||
      !t.contains("value") || !t["value"].is_string()) {
    return trigger_error(
        "each trigger must be an object with an integer 'type' and a string "
        "'value'");
  }
  GrammarTrigger trigger{t["type"].get<int32_t>(), t["value"].get<std::string>(), -1};
  sampling::GrammarConfig& c = g.config;
  switch (trigger.type) {
    case kToken: {
      auto token = t.find("token");
      if (token == t.end() || !token->is_number_integer()) {
        return trigger_error("a token trigger (type 0) needs an integer 'token'");
      }
      const int64_t id = token->get<int64_t>();
      if (id < 0 || id >= tok.n_vocab()) return trigger_error("trigger token id out of range");
      trigger.token = static_cast<int32_t>(id);
      c.trigger_tokens.push_back(trigger.token);
      break;
    }
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
      return trigger_error("unknown trigger type " + std::to_string(trigger.type) +
                           " (0 token, 1 word, 2 pattern, 3 full pattern)");
  }
  g.triggers.push_back(std::move(trigger));
  return std::nullopt;
}

std::optional<ApiError> parse_triggers(const Json& body, const tokenizer::Tokenizer& tok,
                                       scheduler::GrammarSettings& g) {
  auto it = body.find("grammar_triggers");
  if (it == body.end() || it->is_null()) return std::nullopt;
  if (!it->is_array()) return type_error("grammar_triggers", "array", *it);
  for (const Json& t : *it) {
    if (auto err = add_trigger(t, tok, g)) return err;
  }
  if (g.config.lazy && g.triggers.empty()) {
    return trigger_error("Error: no triggers set for lazy grammar!");
  }
  return std::nullopt;
}

}  // namespace

std::optional<ApiError> parse_grammar_fields(const Json& body, const RequestDefaults& defaults,
                                             const tokenizer::Tokenizer& tok,
                                             CompletionSettings& out) {
  scheduler::GrammarSettings& g = out.task.grammar;
  if (auto err = grammar_text(body, defaults, g.text)) return err;
  if (auto err = opt_bool(body, "grammar_lazy", g.config.lazy)) return err;
  if (auto err = parse_preserved(body, tok, g)) return err;
  if (auto err = parse_triggers(body, tok, g)) return err;
  if (g.text.empty()) return std::nullopt;
  auto parsed = grammar::parse(
      g.text, [&](std::string_view text) { return tok.tokenize(text, false, true); });
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

}  // namespace hearth::server::detail
