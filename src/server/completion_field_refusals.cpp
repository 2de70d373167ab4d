// Chat-parser and reasoning fields, which Hearth does not honour yet (issue 7: the chat routes and
// the chat parser): each is validated as the reference validates it and then accepted only when its
// value is the reference's default (so clients that send the full default set keep working); any
// other value is refused naming the field.
#include <limits>

#include "server/completion_params_internal.h"

namespace hearth::server::detail {

namespace {

constexpr int64_t kIntMax = std::numeric_limits<int32_t>::max();

struct IntDefault {
  std::string_view name;
  int32_t value;
  int64_t lo, hi;  // hard range; lo > hi: none
};

constexpr IntDefault kIntDefaults[] = {
    {"chat_format", 0, 1, 0},
    {"reasoning_budget_tokens", -1, -1, kIntMax},
};
constexpr std::pair<std::string_view, bool> kBoolDefaults[] = {
    {"parse_tool_calls", true}, {"echo", false}, {"reasoning_control", false}};
constexpr std::pair<std::string_view, std::string_view> kStringDefaults[] = {
    {"reasoning_format", "deepseek"},
    {"generation_prompt", ""},
    {"chat_parser", ""},
    {"reasoning_budget_start_tag", ""},
    {"reasoning_budget_message", ""}};

std::optional<ApiError> check_numeric_defaults(const Json& body) {
  std::string used;
  for (const IntDefault& d : kIntDefaults) {
    const Json* v = find_field(body, d.name, used);
    if (v == nullptr) continue;
    int32_t value = 0;
    if (auto err = to_int32(*v, used, value)) return err;
    if (d.lo <= d.hi) {
      if (auto err = check_range(used, value, d.lo, d.hi)) return err;
    }
    if (value != d.value) return not_honoured(used);
  }
  return std::nullopt;
}

std::optional<ApiError> check_other_defaults(const Json& body) {
  std::string used;
  for (const auto& [name, value] : kBoolDefaults) {
    const Json* v = find_field(body, name, used);
    if (v == nullptr) continue;
    bool b = false;
    if (auto err = to_bool(*v, used, b)) return err;
    if (b != value) return not_honoured(used);
  }
  for (const auto& [name, value] : kStringDefaults) {
    const Json* v = find_field(body, name, used);
    if (v == nullptr) continue;
    if (!v->is_string() || v->get<std::string>() != value) return not_honoured(used);
  }
  for (std::string_view name : {"reasoning_budget_end_tags", "reasoning_budget_end_tag"}) {
    auto it = body.find(std::string(name));
    if (it == body.end() || it->is_null()) continue;
    const bool empty = (it->is_array() && it->empty()) || (it->is_string() && it->empty());
    if (!empty) return not_honoured(std::string(name));
  }
  auto cont = body.find("continue_final_message");
  if (cont != body.end() && !cont->is_null() && *cont != Json(false)) {
    return not_honoured("continue_final_message");
  }
  return std::nullopt;
}

}  // namespace

std::optional<ApiError> parse_deferred_fields(const Json& body) {
  if (auto err = check_numeric_defaults(body)) return err;
  if (auto err = check_other_defaults(body)) return err;
  // grammar_type only marks a grammar as a tool-call grammar, which changes nothing unless
  // a chat template's generation prompt pre-advances it (issue 7: the chat routes and the chat
  // parser); any string is valid.
  auto type = body.find("grammar_type");
  if (type != body.end() && !type->is_null() && !type->is_string()) {
    return type_error("grammar_type", "string", *type);
  }
  return std::nullopt;
}

}  // namespace hearth::server::detail
