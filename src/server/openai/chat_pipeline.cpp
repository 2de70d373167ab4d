// The chat layer shared by /v1/chat/completions, /v1/messages and /v1/responses
// (openai-compat.md §2.1, §4): the chat checks and the template give the prompt and the
// output syntax; the body's native fields go through the one completion field table,
// with the keys the chat layer sets itself removed first (they win over the body's).
#include <limits>
#include <memory>

#include "chat/openai_messages.h"
#include "chat/output_syntax.h"
#include "json_schema/json_schema.h"
#include "server/chat_request.h"
#include "server/completion_run.h"
#include "server/fields/completion_fields.h"
#include "server/openai/openai_routes.h"
#include "server/openai/tool_grammar.h"
#include "server/prompt_log.h"
#include "server/request_body.h"
#include "server/server_state.h"
#include "tokenizer/tokenizer.h"

namespace hearth::server::openai {

namespace {

// A bare {"type":"json_object"} (no schema, no json_schema) asks for a JSON object: its empty
// schema becomes the grammar of any JSON object, as on the native routes. The reference does
// that only without Jinja; its Jinja template handlers take the empty schema for no response
// format at all (openai-compat.md §4.7, the golden capture chat_qwen3_json_object) and return
// prose, so Hearth differs there (differences.json, json-object-constrained-with-jinja).
// Beside tools the reference's rule stays: a bare json_object counts as no response format,
// so the model may still call a tool.
bool bare_json_object(const ChatRequest& request) {
  const Json& rf = request.response_format;
  return rf.is_object() && rf.value("type", "") == "json_object" && !rf.contains("schema") &&
         request.json_schema.is_null();
}

// The native view of a chat body: the members the native table reads, and the number of
// log-probabilities `logprobs` asks for.
Json native_body(const ChatRequest& request, bool jinja) {
  Json native = request.native;
  if (request.logprobs) native["n_probs"] = request.top_logprobs.value_or(20);
  const bool has_tools = request.tools.is_array() && !request.tools.empty();
  if (jinja && has_tools && bare_json_object(request)) native.erase("response_format");
  return native;
}

bool has_schema_constraint(const ChatRequest& request) {
  if (!request.json_schema.is_null()) return true;
  const Json& rf = request.response_format;
  if (!rf.is_object()) return false;
  const std::string type = rf.value("type", "");
  return type == "json_schema" || (type == "json_object" && rf.contains("schema"));
}

chat::OutputSyntax output_syntax(const ServerState& s, const ChatRequest& request,
                                 const ChatPromptRequest& chat) {
  chat::OutputSyntax syntax = chat.prompt.syntax;
  if (s.config.chat.skip_chat_parsing) {
    // --skip-chat-parsing: the generation prompt, then everything is content.
    syntax.reasoning_start.clear();
    syntax.reasoning_end.clear();
    syntax.tools = {};
    return syntax;
  }
  syntax.extract_reasoning =
      request.reasoning_format.value_or(s.config.chat.reasoning_format) != "none";
  syntax.parse_tool_calls = !chat.inputs.tools.empty() && request.tool_choice != "none" &&
                            syntax.tools.style != chat::ToolCallStyle::kNone &&
                            !has_schema_constraint(request);
  syntax.json_output = has_schema_constraint(request);
  // Tagged formats write string parameters as bare text: which ones are strings.
  chat::add_string_params(chat.inputs.tools, syntax.tools);
  syntax.parallel_tool_calls = request.parallel_tool_calls.value_or(
      s.model.chat_templates->caps().supports_parallel_tool_calls);
  return syntax;
}

// What the chat layer constrains the answer with (not a client's own `grammar`).
struct AnswerConstraint {
  bool grammar = false;      // a schema's or the tools' grammar from the first token
  bool forced_call = false;  // tool_choice "required" or a named function
};

// The tool-call grammar, as the chat layer's grammar fields of the native body.
std::optional<ApiError> add_tool_grammar(const ChatRequest& request, const ChatPromptRequest& chat,
                                         const chat::OutputSyntax& syntax, Json& native,
                                         AnswerConstraint& constraint) {
  if (!syntax.parse_tool_calls) return std::nullopt;
  // A named function is required, and is the only one the grammar allows (the reference
  // treats the object as "auto"; differences.json).
  const bool named = !chat.forced_tool.empty();
  const bool required = named || request.tool_choice == "required";
  std::vector<chat::Tool> tools;
  for (const chat::Tool& t : chat.inputs.tools) {
    if (!named || t.name == chat.forced_tool) tools.push_back(t);
  }
  std::optional<ToolGrammar> grammar;
  if (auto err = build_tool_grammar(syntax, tools, required, grammar)) return err;
  if (!grammar) return std::nullopt;
  native["grammar"] = grammar->gbnf;
  native["grammar_lazy"] = grammar->lazy;
  constraint.grammar = !grammar->lazy;
  constraint.forced_call = required;
  Json preserved = Json::array();
  for (const std::string* marker : {&syntax.tools.section_start, &syntax.tools.section_end,
                                    &syntax.tools.call_start, &syntax.tools.call_end}) {
    if (!marker->empty()) preserved.push_back(*marker);
  }
  native["preserved_tokens"] = std::move(preserved);
  if (grammar->lazy && !grammar->trigger_pattern.empty()) {
    native["grammar_triggers"] =
        Json::array({Json{{"type", 2}, {"value", grammar->trigger_pattern}}});
  } else if (grammar->lazy) {
    native["grammar_triggers"] = Json::array({Json{{"type", 1}, {"value", grammar->trigger}}});
  }
  return std::nullopt;
}

// The output's constraints (a response_format or json_schema, the tools' grammar) as the
// reference reports them when they cannot be built: the converter's message, led in by the
// autoparser's for a template the reference reads with it (openai-compat.md §4.12).
std::optional<ApiError> add_output_constraints(const ChatRequest& request,
                                               const ChatPromptRequest& chat,
                                               const chat::OutputSyntax& syntax, bool jinja,
                                               Json& native, AnswerConstraint& constraint) {
  std::optional<ApiError> err;
  if (jinja && has_schema_constraint(request)) {
    constraint.grammar = true;
    const bool has_schema = !request.json_schema.is_null();
    std::optional<Json> wanted =
        fields::response_format_schema(request.response_format, has_schema);
    if (!wanted && has_schema) wanted = request.json_schema;
    if (wanted) {
      Result<std::string> converted = json_schema::to_gbnf(*wanted);
      if (!converted.is_ok()) err = invalid_request(converted.status().message());
    }
  }
  if (!err) err = add_tool_grammar(request, chat, syntax, native, constraint);
  if (err && chat.prompt.autoparsed) {
    err->message =
        "Unable to generate parser for this template. Automatic parser generation failed: " +
        err->message;
  }
  return err;
}

// The template's own stop strings after the request's (a string stop becomes a list; a
// stop of the wrong type is left for the field table to refuse).
void add_template_stops(const std::vector<std::string>& stops, Json& native) {
  if (stops.empty()) return;
  Json& stop = native["stop"];
  if (stop.is_null()) stop = Json::array();
  if (stop.is_string()) stop = Json::array({stop});
  if (!stop.is_array()) return;
  for (const std::string& s : stops) stop.push_back(s);
}

// The reasoning budget (chat-templates.md §11, sampling.md §7.1): with the template's
// thinking tags, when a lazy grammar, a budget or reasoning control asks for it.
void set_reasoning_budget(ServerState& s, const ChatRequest& request,
                          const chat::OutputSyntax& syntax, const AnswerConstraint& constraint,
                          CompletionSettings& settings) {
  int32_t budget = request.reasoning_budget_tokens.value_or(
      request.thinking_budget_tokens.value_or(s.config.chat.reasoning_budget));
  const bool controlled = request.reasoning_control;
  if (syntax.reasoning_start.empty() || syntax.reasoning_end.empty()) return;
  const sampling::GrammarConfig& grammar = settings.task.grammar.config;
  const bool waits = grammar.grammar && grammar.after_reasoning;
  if (!grammar.lazy && budget < 0 && !controlled && !waits) return;
  // A forced call after an opened thinking block: without a budget the block is closed at
  // once (the reasoning is skipped: the call is what was asked for, and a model that never
  // closes the block would never call).
  if (waits && constraint.forced_call && budget < 0) budget = 0;
  scheduler::ReasoningSettings& r = settings.task.reasoning;
  r.start_tag = std::string(chat::trim_space(syntax.reasoning_start));
  r.end_tag = std::string(chat::trim_space(syntax.reasoning_end));
  r.budget = budget;
  r.message = request.reasoning_budget_message.value_or(s.config.chat.reasoning_budget_message);
  r.prefix = syntax.prefix;
  if (controlled) r.end_now = std::make_shared<std::atomic<bool>>(false);
}

// Where the chat layer's grammar for the answer starts (sampling.md §7.2): after a thinking
// block the generation prompt opened (the reasoning budget's forced end tag is then never
// fed to it), or past the part of the answer a continued message already holds.
void place_answer_grammar(const chat::OutputSyntax& syntax, const chat::ChatPrompt& prompt,
                          const AnswerConstraint& constraint, CompletionSettings& settings) {
  sampling::GrammarConfig& grammar = settings.task.grammar.config;
  if (!constraint.grammar || !grammar.grammar || grammar.lazy) return;
  if (opens_thinking(syntax)) {
    grammar.after_reasoning = true;
  } else {
    grammar.prefill = prompt.continued_answer;
  }
}

}  // namespace

ChatMediaContext media_context(const ServerState& s) {
  return {s.scheduler->media_support(), s.config.fetch_media_url, s.config.media_marker};
}

namespace {

// The rendered prompt's tokens; with media, their chunks placed at the markers.
std::optional<ApiError> tokenize_chat_prompt(ServerState& s, const ChatPromptRequest& chat,
                                             CompletionSettings& settings) {
  const tokenizer::Tokenizer& tok = s.scheduler->tokenizer();
  if (chat.files.empty()) {
    settings.prompts = {tokenize_mixed(tok, Json(chat.prompt.prompt), true, true)};
    return std::nullopt;
  }
  MediaPrompt media;
  if (auto err = build_media_prompt(*s.scheduler, chat.prompt.prompt, s.config.media_marker,
                                    chat.files, nullptr, media)) {
    return err;
  }
  settings.prompts = {std::move(media.tokens)};
  settings.prompt_media = {std::move(media.media)};
  return std::nullopt;
}

}  // namespace

std::optional<ApiError> prepare_chat(ServerState& s, const ChatRequest& request, ChatRun& out) {
  ChatSettings chat_settings = s.config.chat;
  chat_settings.templates = s.model.chat_templates;
  out.meta = make_meta(s);
  ChatPromptRequest chat;
  const ChatMediaContext media = media_context(s);
  chat.media = &media;
  if (auto err = build_chat_prompt(request, chat_settings, chat)) return err;
  const tokenizer::Tokenizer& tok = s.scheduler->tokenizer();
  chat::OutputSyntax syntax = output_syntax(s, request, chat);
  Json native = native_body(request, chat_settings.use_jinja);
  add_template_stops(chat.prompt.additional_stops, native);
  AnswerConstraint constraint;
  if (auto err = add_output_constraints(request, chat, syntax, chat_settings.use_jinja, native,
                                        constraint)) {
    return err;
  }
  write_prompt_log(s.config.prompts_log_dir, Json(chat.prompt.prompt));
  out.settings = std::make_shared<CompletionSettings>();
  if (auto err = parse_completion_settings(native, request_defaults(s), tok, *out.settings,
                                           fields::kChatNative)) {
    return err;
  }
  CompletionSettings& settings = *out.settings;
  if (auto err = tokenize_chat_prompt(s, chat, settings)) return err;
  settings.chat_format = chat_settings.use_jinja ? syntax.format_name : "Content-only";
  settings.generation_prompt = chat.prompt.generation_prompt;
  const std::string format = request.reasoning_format.value_or(s.config.chat.reasoning_format);
  settings.reasoning_format = format == "auto" ? "deepseek" : format;
  place_answer_grammar(syntax, chat.prompt, constraint, settings);
  set_reasoning_budget(s, request, syntax, constraint, settings);
  const bool primed = request.continuation_given && !request.echo;
  out.output = std::make_shared<ChatOutput>(std::move(syntax), primed);
  out.output->keep_alive(register_completion(out.meta.id, settings.task.reasoning.end_now));
  out.include_usage = request.include_usage;
  return std::nullopt;
}

http::Response start_chat(ServerState& s, ChatRun run, std::shared_ptr<ResultFormat> format) {
  return run_completion(s, std::move(run.settings), std::move(format));
}

http::Response count_chat_tokens(ServerState& s, const ChatRequest& request, bool with_object) {
  ChatRun run;
  if (auto err = prepare_chat(s, request, run)) return error_response(*err);
  Json j = Json::object();
  j["input_tokens"] = run.settings->prompts.front().size();
  if (with_object) j["object"] = "response.input_tokens";
  return json_response(j);
}

http::Response handle_chat_input_tokens(ServerState& s, const http::Request& r) {
  Json body;
  ChatRequest request;
  if (auto err = parse_json_object(r.body, body)) return error_response(*err);
  if (auto err = parse_chat_request(body, request)) return error_response(*err);
  return count_chat_tokens(s, request, true);
}

}  // namespace hearth::server::openai
