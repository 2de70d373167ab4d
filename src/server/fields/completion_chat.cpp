// The chat-parser and reasoning fields of the native schema (native-completion.md §3.10).
// The chat routes set them from the template; a client of /completion or /v1/completions
// may send them itself. On the native routes the output is not parsed (as in the
// reference), so chat_format, reasoning_format and generation_prompt are echoed, and the
// reasoning budget fields build the budget that ends a thinking block.
#include <limits>

#include "server/fields/completion_fields.h"

namespace hearth::server::fields {

namespace {

// The names of the reference's chat formats, by their integer value.
constexpr const char* kChatFormats[] = {"Content-only", "peg-simple", "peg-native", "peg-gemma4",
                                        "peg-minimax-m3"};

}  // namespace

std::optional<ApiError> parse_chat_format(const Json& v, const std::string& used,
                                          CompletionSettings& out, const FieldContext&) {
  if (!v.is_number_integer()) return type_error(used, "integer", v);
  const int64_t format = v.get<int64_t>();
  if (auto err = check_range(used, format, 0, 4)) return err;
  out.chat_format = kChatFormats[format];
  return std::nullopt;
}

std::optional<ApiError> parse_reasoning_format(const Json& v, const std::string& used,
                                               CompletionSettings& out, const FieldContext&) {
  if (!v.is_string()) return type_error(used, "string", v);
  const std::string format = v.get<std::string>();
  if (format != "none" && format != "auto" && format != "deepseek" && format != "deepseek-legacy") {
    return field_error(used, "Unknown reasoning format: " + format);
  }
  out.reasoning_format = format;
  return std::nullopt;
}

std::optional<ApiError> parse_generation_prompt(const Json& v, const std::string& used,
                                                CompletionSettings& out, const FieldContext&) {
  if (!v.is_string()) return type_error(used, "string", v);
  out.generation_prompt = v.get<std::string>();
  out.task.reasoning.prefix = out.generation_prompt;
  return std::nullopt;
}

std::optional<ApiError> parse_continuation(const Json& v, const std::string& used,
                                           CompletionSettings&, const FieldContext&) {
  if (v.is_boolean()) return std::nullopt;
  if (v.is_string()) {
    const std::string mode = v.get<std::string>();
    if (mode == "auto" || mode == "content" || mode == "reasoning_content") return std::nullopt;
    return field_error(used, "must be true, false, \"auto\", \"content\" or \"reasoning_content\"");
  }
  return type_error(used, "boolean or string", v);
}

std::optional<ApiError> parse_budget_tokens(const Json& v, const std::string& used,
                                            CompletionSettings& out, const FieldContext&) {
  int32_t budget = 0;
  if (auto err = to_int32(v, used, budget)) return err;
  if (auto err = check_range(used, int64_t{budget}, -1, std::numeric_limits<int32_t>::max())) {
    return err;
  }
  out.task.reasoning.budget = budget;
  return std::nullopt;
}

std::optional<ApiError> parse_budget_text(const Json& v, const std::string& used,
                                          CompletionSettings& out, const FieldContext&) {
  if (!v.is_string()) return type_error(used, "string", v);
  std::string text = v.get<std::string>();
  if (auto err = check_limits(v, used, {0, 4096})) return err;
  if (used == "reasoning_budget_start_tag") {
    out.task.reasoning.start_tag = std::move(text);
  } else {
    out.task.reasoning.message = std::move(text);
  }
  return std::nullopt;
}

// A list of end tags or one tag; the first non-empty one ends the block.
std::optional<ApiError> parse_budget_end_tags(const Json& v, const std::string& used,
                                              CompletionSettings& out, const FieldContext&) {
  if (v.is_string()) {
    out.task.reasoning.end_tag = v.get<std::string>();
    return check_limits(v, used, {0, 4096});
  }
  if (!v.is_array()) return type_error(used, "array or string", v);
  if (auto err = check_limits(v, used, {64, 4096})) return err;
  for (const Json& tag : v) {
    if (!tag.is_string()) return type_error(used, "string", tag);
    if (out.task.reasoning.end_tag.empty()) out.task.reasoning.end_tag = tag.get<std::string>();
  }
  return std::nullopt;
}

std::optional<ApiError> parse_reasoning_control(const Json& v, const std::string& used,
                                                CompletionSettings& out, const FieldContext&) {
  bool control = false;
  if (auto err = to_bool(v, used, control)) return err;
  if (control) out.task.reasoning.end_now = std::make_shared<std::atomic<bool>>(false);
  return std::nullopt;
}

// After every field: the budget exists only with both tags, and when a lazy grammar, a
// budget or reasoning control needs it (sampling.md §7.1).
void finish_reasoning(CompletionSettings& out) {
  scheduler::ReasoningSettings& r = out.task.reasoning;
  const bool needed = out.task.grammar.config.lazy || r.budget >= 0 || r.end_now;
  if (!r.active() || !needed) r = scheduler::ReasoningSettings{};
}

}  // namespace hearth::server::fields
