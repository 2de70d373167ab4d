// The chat layer shared by /v1/chat/completions, /v1/messages and /v1/responses
// (openai-compat.md §2.1, §4): the chat checks and the template give the prompt and the
// output syntax; the body's native fields go through the one completion field table,
// with the keys the chat layer sets itself removed first (they win over the body's).
#include <memory>

#include "server/chat_request.h"
#include "server/completion_run.h"
#include "server/openai/openai_routes.h"
#include "server/openai/tool_grammar.h"
#include "server/request_body.h"
#include "server/server_state.h"
#include "tokenizer/tokenizer.h"

namespace hearth::server::openai {

namespace {

// Keys the chat layer produces (openai-compat.md §4.1 "internal fields"), and the chat
// members whose meaning differs from the native field of the same name.
constexpr const char* kChatLayerKeys[] = {
    "prompt",
    "chat_format",
    "chat_parser",
    "generation_prompt",
    "grammar_lazy",
    "grammar_triggers",
    "preserved_tokens",
    "parse_tool_calls",
    "continue_final_message",
    "echo",
    "reasoning_format",
    "reasoning_budget_tokens",
    "thinking_budget_tokens",
    "reasoning_budget_start_tag",
    "reasoning_budget_end_tags",
    "reasoning_budget_end_tag",
    "reasoning_budget_message",
    "reasoning_control",
    "logprobs",
    "top_logprobs",
    "message_delimiters",
};

template <typename T>
T member_or(const Json& body, const char* key, T fallback) {
  auto it = body.find(key);
  if (it == body.end() || it->is_null()) return fallback;
  if constexpr (std::is_same_v<T, bool>) {
    return it->is_boolean() ? it->get<bool>() : fallback;
  } else if constexpr (std::is_same_v<T, std::string>) {
    return it->is_string() ? it->get<std::string>() : fallback;
  } else {
    return it->is_number_integer() ? it->get<T>() : fallback;
  }
}

// The native view of a chat body.
Json native_body(const Json& body) {
  Json native = body;
  for (const char* key : kChatLayerKeys) native.erase(key);
  if (member_or(body, "logprobs", false)) {
    native["n_probs"] = member_or<int64_t>(body, "top_logprobs", 20);
  }
  // With the Jinja engine, json_object without a schema asks for no constraint (§4.7).
  auto rf = body.find("response_format");
  if (rf != body.end() && rf->is_object() && rf->value("type", "") == "json_object" &&
      !rf->contains("schema") && !body.contains("json_schema")) {
    native.erase("response_format");
  }
  return native;
}

bool has_schema_constraint(const Json& body) {
  if (body.contains("json_schema") && !body["json_schema"].is_null()) return true;
  auto rf = body.find("response_format");
  if (rf == body.end() || !rf->is_object()) return false;
  const std::string type = rf->value("type", "");
  return type == "json_schema" || (type == "json_object" && rf->contains("schema"));
}

chat::OutputSyntax output_syntax(const ServerState& s, const Json& body,
                                 const ChatPromptRequest& chat) {
  chat::OutputSyntax syntax = chat.prompt.syntax;
  syntax.extract_reasoning = member_or(body, "reasoning_format", std::string("auto")) != "none";
  const std::string tool_choice = member_or(body, "tool_choice", std::string("auto"));
  syntax.parse_tool_calls = !chat.inputs.tools.empty() && tool_choice != "none" &&
                            syntax.tools.style != chat::ToolCallStyle::kNone &&
                            !has_schema_constraint(body);
  syntax.json_output = has_schema_constraint(body);
  syntax.parallel_tool_calls = member_or(
      body, "parallel_tool_calls", s.model.chat_templates->caps().supports_parallel_tool_calls);
  return syntax;
}

// The tool-call grammar, as the chat layer's grammar fields of the native body.
std::optional<ApiError> add_tool_grammar(const Json& body, const ChatPromptRequest& chat,
                                         const chat::OutputSyntax& syntax, Json& native) {
  if (!syntax.parse_tool_calls) return std::nullopt;
  // A named function is required, and is the only one the grammar allows (the reference
  // treats the object as "auto"; differences.json).
  const bool named = !chat.forced_tool.empty();
  const bool required = named || member_or(body, "tool_choice", std::string("auto")) == "required";
  std::vector<chat::Tool> tools;
  for (const chat::Tool& t : chat.inputs.tools) {
    if (!named || t.name == chat.forced_tool) tools.push_back(t);
  }
  std::optional<ToolGrammar> grammar;
  if (auto err = build_tool_grammar(syntax, tools, required, grammar)) return err;
  if (!grammar) return std::nullopt;
  native["grammar"] = grammar->gbnf;
  native["grammar_lazy"] = grammar->lazy;
  Json preserved = Json::array();
  for (const std::string* marker : {&syntax.tools.section_start, &syntax.tools.section_end,
                                    &syntax.tools.call_start, &syntax.tools.call_end}) {
    if (!marker->empty()) preserved.push_back(*marker);
  }
  native["preserved_tokens"] = std::move(preserved);
  if (grammar->lazy) {
    native["grammar_triggers"] = Json::array({Json{{"type", 1}, {"value", grammar->trigger}}});
  }
  return std::nullopt;
}

}  // namespace

std::optional<ApiError> prepare_chat(ServerState& s, const Json& body, ChatRun& out) {
  ChatSettings chat_settings = s.config.chat;
  chat_settings.templates = s.model.chat_templates;
  ChatPromptRequest chat;
  if (auto err = build_chat_prompt(body, chat_settings, chat)) return err;
  const tokenizer::Tokenizer& tok = s.scheduler->tokenizer();
  chat::OutputSyntax syntax = output_syntax(s, body, chat);
  Json native = native_body(body);
  if (auto err = add_tool_grammar(body, chat, syntax, native)) return err;
  out.settings = std::make_shared<CompletionSettings>();
  if (auto err = parse_completion_settings(native, request_defaults(s), tok, *out.settings,
                                           fields::kCompletion)) {
    return err;
  }
  CompletionSettings& settings = *out.settings;
  settings.prompts = {tokenize_mixed(tok, Json(chat.prompt.prompt), true, true)};
  settings.chat_format = chat_settings.use_jinja ? syntax.format_name : "Content-only";
  settings.generation_prompt = chat.prompt.generation_prompt;
  const std::string format = member_or(body, "reasoning_format", std::string("auto"));
  settings.reasoning_format = format == "auto" ? "deepseek" : format;
  const bool primed = body.contains("continue_final_message") && !member_or(body, "echo", false);
  out.output = std::make_shared<ChatOutput>(std::move(syntax), primed);
  out.meta = make_meta(s);
  auto options = body.find("stream_options");
  out.include_usage =
      options != body.end() && options->is_object() && member_or(*options, "include_usage", false);
  return std::nullopt;
}

http::Response start_chat(ServerState& s, ChatRun run, std::shared_ptr<ResultFormat> format) {
  return run_completion(s, std::move(run.settings), std::move(format));
}

http::Response count_chat_tokens(ServerState& s, const Json& chat_body, bool with_object) {
  ChatRun run;
  if (auto err = prepare_chat(s, chat_body, run)) return error_response(*err);
  Json j = Json::object();
  j["input_tokens"] = run.settings->prompts.front().size();
  if (with_object) j["object"] = "response.input_tokens";
  return json_response(j);
}

http::Response handle_chat_input_tokens(ServerState& s, const http::Request& r) {
  Json body;
  if (auto err = parse_json_object(r.body, body)) return error_response(*err);
  return count_chat_tokens(s, body, true);
}

}  // namespace hearth::server::openai
