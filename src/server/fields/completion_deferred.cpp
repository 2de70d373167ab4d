// Fields Hearth does not honour (deferred to an issue, or not applicable, like chat_parser):
// each is validated as the reference validates it and then accepted only when its value is
// the reference's default, which its row carries (so clients that send the full default set
// keep working); any other value is refused naming the field.
#include <algorithm>

#include "server/fields/completion_fields.h"

namespace hearth::server::fields {

namespace {

const CompletionField* row_of(const std::string& used) {
  for (const CompletionField& f : completion_fields()) {
    if (f.name == used || std::find(f.aliases.begin(), f.aliases.end(), used) != f.aliases.end()) {
      return &f;
    }
  }
  return nullptr;
}

std::optional<ApiError> refused_unless(bool is_default, const std::string& used) {
  return is_default ? std::nullopt : std::optional<ApiError>(not_honoured(used));
}

}  // namespace

ApiError not_honoured(const std::string& used) {
  const CompletionField* f = row_of(used);
  if (f != nullptr && f->state == FieldState::kDeferred) {
    return invalid_request("Field '" + used + "': not supported by Hearth yet: " +
                           std::string(f->reason) + " (deferred to issue " +
                           std::to_string(f->issue) + "); only its default value is accepted");
  }
  if (f != nullptr) {
    return invalid_request("Field '" + used +
                           "': not supported by Hearth: " + std::string(f->reason));
  }
  return invalid_request("Field '" + used + "': not supported by Hearth");
}

// The value must have the type of the row's default (numbers as the reference reads them,
// within a hard range), and be that default.
std::optional<ApiError> check_deferred(const Json& v, const std::string& used, CompletionSettings&,
                                       const FieldContext&) {
  const CompletionField* f = row_of(used);
  if (f == nullptr || f->default_json.empty()) return not_honoured(used);
  const Json def = Json::parse(f->default_json);
  if (def.is_number_integer()) {
    int32_t value = 0;
    if (auto err = to_int32(v, used, value)) return err;
    if (f->bounds.kind == Bounds::Kind::kHard) {
      if (auto err = check_range(used, int64_t{value}, detail::int_bound(f->bounds.lo),
                                 detail::int_bound(f->bounds.hi))) {
        return err;
      }
    }
    return refused_unless(value == def.get<int64_t>(), used);
  }
  if (def.is_boolean()) {
    // continue_final_message may also name what to continue ("content", ...).
    if (!v.is_boolean() && !(used == "continue_final_message" && v.is_string())) {
      return type_error(used, used == "continue_final_message" ? "boolean or string" : "boolean",
                        v);
    }
    return refused_unless(v == def, used);
  }
  if (def.is_string()) {
    if (!v.is_string()) return type_error(used, "string", v);
    return refused_unless(v == def, used);
  }
  // The end tags: a list, or a single tag as a string (empty ones are skipped).
  if (!v.is_array() && !v.is_string()) return type_error(used, "array or string", v);
  return refused_unless(v.is_array() ? v.empty() : v.get_ref<const std::string&>().empty(), used);
}

}  // namespace hearth::server::fields
