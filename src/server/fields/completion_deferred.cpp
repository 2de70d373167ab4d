// Chat-parser and reasoning fields, which Hearth does not honour yet (the chat routes and the
// chat parser): each is validated as the reference validates it and then accepted only when
// its value is the reference's default (so clients that send the full default set keep
// working); any other value is refused naming the field.
#include <algorithm>
#include <limits>

#include "server/fields/completion_fields.h"

namespace hearth::server::fields {

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

template <class Table>
auto find_default(const Table& table, std::string_view name) {
  return std::find_if(std::begin(table), std::end(table),
                      [&](const auto& d) { return std::string_view(d.first) == name; });
}

}  // namespace

ApiError not_honoured(const std::string& used) {
  for (const CompletionField& f : completion_fields()) {
    const bool match =
        f.name == used || std::find(f.aliases.begin(), f.aliases.end(), used) != f.aliases.end();
    if (!match) continue;
    if (f.state == FieldState::kDeferred) {
      return invalid_request("Field '" + used +
                             "': not supported by Hearth yet (deferred to issue " +
                             std::to_string(f.issue) + "); only its default value is accepted");
    }
    return invalid_request("Field '" + used +
                           "': not supported by Hearth: " + std::string(f.reason));
  }
  return invalid_request("Field '" + used + "': not supported by Hearth");
}

std::optional<ApiError> check_deferred(const Json& v, const std::string& used, CompletionSettings&,
                                       const FieldContext&) {
  for (const IntDefault& d : kIntDefaults) {
    if (d.name != used) continue;
    int32_t value = 0;
    if (auto err = to_int32(v, used, value)) return err;
    if (d.lo <= d.hi) {
      if (auto err = check_range(used, value, d.lo, d.hi)) return err;
    }
    return value == d.value ? std::nullopt : std::optional<ApiError>(not_honoured(used));
  }
  if (auto b = find_default(kBoolDefaults, used); b != std::end(kBoolDefaults)) {
    bool value = false;
    if (auto err = to_bool(v, used, value)) return err;
    return value == b->second ? std::nullopt : std::optional<ApiError>(not_honoured(used));
  }
  if (auto s = find_default(kStringDefaults, used); s != std::end(kStringDefaults)) {
    if (!v.is_string()) return type_error(used, "string", v);
    return v.get_ref<const std::string&>() == s->second
               ? std::nullopt
               : std::optional<ApiError>(not_honoured(used));
  }
  if (used == "reasoning_budget_end_tags" || used == "reasoning_budget_end_tag") {
    if (!v.is_array() && !v.is_string()) return type_error(used, "array or string", v);
    return v.empty() ? std::nullopt : std::optional<ApiError>(not_honoured(used));
  }
  if (used == "continue_final_message") {
    if (!v.is_boolean() && !v.is_string()) return type_error(used, "boolean or string", v);
    return v == Json(false) ? std::nullopt : std::optional<ApiError>(not_honoured(used));
  }
  return std::optional<ApiError>(not_honoured(used));
}

}  // namespace hearth::server::fields
