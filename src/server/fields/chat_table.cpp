// The chat body's field table (openai-compat.md §4.1): every member the chat layer reads,
// with its type, where it goes in ChatRequest, and whether the native field table reads it
// too. The messages and the template-dependent checks run after it, in the reference's
// order (chat_request.cpp); the native members go on to the completion table.
#include <limits>

#include "server/chat_request.h"
#include "server/fields/completion_fields.h"
#include "server/fields/store.h"

namespace hearth::server {

namespace {

using F = fields::Field<ChatRequest>;
using Ctx = fields::FieldContext;
using R = ChatRequest;
using Check = std::optional<ApiError>;
using fields::store_array;
using fields::store_bool;
using fields::store_object;
using fields::store_optional_bool;
using fields::store_optional_string;

// A reasoning budget: an integer from -1 (no budget) up.
template <std::optional<int32_t> ChatRequest::*member>
Check store_budget(const Json& v, const std::string& used, ChatRequest& out, const Ctx&) {
  if (!v.is_number_integer()) return fields::type_error(used, "integer", v);
  const int64_t value = v.get<int64_t>();
  constexpr int64_t kMax = std::numeric_limits<int32_t>::max();
  if (auto err = fields::check_range(used, value, -1, kMax)) return err;
  out.*member = static_cast<int32_t>(value);
  return std::nullopt;
}

Check read_messages(const Json& v, const std::string&, ChatRequest& out, const Ctx&) {
  out.messages = v;  // its shape is checked after the server-side checks, as the reference
  return std::nullopt;
}

// "auto", "none", "required" (checked with the tools), or a named function.
Check read_tool_choice(const Json& v, const std::string& used, ChatRequest& out, const Ctx&) {
  if (v.is_string()) {
    out.tool_choice = v.get<std::string>();
    return std::nullopt;
  }
  auto fn = v.is_object() ? v.find("function") : v.end();
  if (v.is_object() && fn != v.end() && fn->is_object()) {
    auto name = fn->find("name");
    if (name != fn->end() && name->is_string()) {
      out.tool_choice_function = name->get<std::string>();
      return std::nullopt;
    }
  }
  return fields::type_error(used, "string or {\"type\":\"function\",\"function\":{\"name\"}}", v);
}

// true: continue however the message ends; "content" / "reasoning_content": continue that
// part; null or false: present, no explicit continuation.
Check read_continuation(const Json& v, const std::string& used, ChatRequest& out, const Ctx&) {
  if (!v.is_null() && !v.is_boolean() && !v.is_string()) {
    return fields::type_error(used, "boolean or string", v);
  }
  out.continuation_given = true;
  if (v.is_boolean() && v.get<bool>()) out.continuation = chat::Continuation::kAuto;
  if (v == "reasoning_content") out.continuation = chat::Continuation::kReasoning;
  if (v == "content") out.continuation = chat::Continuation::kContent;
  return std::nullopt;
}

Check read_response_format(const Json& v, const std::string& used, ChatRequest& out, const Ctx&) {
  if (auto err = fields::validate_response_format(v, used)) return err;
  out.response_format = v;
  return std::nullopt;
}

Check read_grammar(const Json& v, const std::string& used, ChatRequest& out, const Ctx&) {
  if (!v.is_null() && !v.is_string()) return fields::type_error(used, "string", v);
  out.grammar_given = true;
  if (v.is_string()) out.grammar = v.get<std::string>();
  return std::nullopt;
}

Check read_top_logprobs(const Json& v, const std::string& used, ChatRequest& out, const Ctx&) {
  if (!v.is_number_integer()) return fields::type_error(used, "integer", v);
  out.top_logprobs = v.get<int64_t>();
  return std::nullopt;
}

// The native table checks the object's members; the chat layer keeps include_usage.
Check read_stream_options(const Json& v, const std::string& used, ChatRequest& out, const Ctx&) {
  if (!v.is_object()) return fields::type_error(used, "object", v);
  auto usage = v.find("include_usage");
  if (usage == v.end() || usage->is_null()) return std::nullopt;
  return fields::to_bool(*usage, "include_usage", out.include_usage);
}

// Members the chat layer sets itself (openai-compat.md §4.1 "internal fields"): a client's
// value is replaced, as in the reference, so they are removed from the native view.
std::vector<F> internal_rows() {
  std::vector<F> rows;
  for (std::string_view name :
       {"prompt", "chat_format", "chat_parser", "generation_prompt", "grammar_lazy",
        "grammar_triggers", "preserved_tokens", "parse_tool_calls", "reasoning_budget_start_tag",
        "reasoning_budget_end_tags", "reasoning_budget_end_tag", "message_delimiters"}) {
    rows.push_back({.name = name, .target = std::monostate{}});
  }
  return rows;
}

std::vector<F> make_table() {
  std::vector<F> rows = {
      {.name = "messages", .target = read_messages, .keeps_null = true},
      {.name = "tools", .target = store_array<R, &R::tools>},
      {.name = "tool_choice", .target = read_tool_choice},
      {.name = "chat_template_kwargs", .target = store_object<R, &R::chat_template_kwargs>},
      {.name = "add_generation_prompt", .target = store_bool<R, &R::add_generation_prompt>},
      {.name = "continue_final_message", .target = read_continuation, .keeps_null = true},
      {.name = "reasoning_format", .target = store_optional_string<R, &R::reasoning_format>},
      {.name = "reasoning_effort", .target = store_optional_string<R, &R::reasoning_effort>},
      {.name = "response_format", .target = read_response_format, .also_native = true},
      {.name = "json_schema", .target = store_object<R, &R::json_schema>, .also_native = true},
      {.name = "grammar", .target = read_grammar, .keeps_null = true, .also_native = true},
      {.name = "logprobs", .target = store_bool<R, &R::logprobs>},
      {.name = "top_logprobs", .target = read_top_logprobs},
      {.name = "stream", .target = store_bool<R, &R::stream>, .also_native = true},
      {.name = "stream_options", .target = read_stream_options, .also_native = true},
      {.name = "parallel_tool_calls", .target = store_optional_bool<R, &R::parallel_tool_calls>},
      {.name = "echo", .target = store_bool<R, &R::echo>},
      {.name = "reasoning_budget_tokens",
       .target = store_budget<&ChatRequest::reasoning_budget_tokens>},
      {.name = "thinking_budget_tokens",
       .target = store_budget<&ChatRequest::thinking_budget_tokens>},
      {.name = "reasoning_budget_message",
       .target = store_optional_string<R, &R::reasoning_budget_message>},
      {.name = "reasoning_control", .target = store_bool<R, &R::reasoning_control>},
  };
  for (F& row : internal_rows()) rows.push_back(std::move(row));
  return rows;
}

// The body without the members only the chat layer reads.
Json native_view(const Json& body) {
  Json native = body;
  for (const F& row : chat_fields()) {
    if (!row.also_native) native.erase(std::string(row.name));
  }
  return native;
}

}  // namespace

const std::vector<fields::Field<ChatRequest>>& chat_fields() {
  static const std::vector<F> table = make_table();
  return table;
}

std::optional<ApiError> parse_chat_request(const Json& body, ChatRequest& out) {
  if (auto err = fields::parse_fields(chat_fields(), body, out, {})) return err;
  out.native = native_view(body);
  return std::nullopt;
}

}  // namespace hearth::server
