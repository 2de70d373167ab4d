// An OpenAI chat body made into a prompt, as llama-server's chat routes and
// /apply-template do it (openai-compat.md §4.1-§4.7, chat-templates.md §5-§7): the request
// checks with the reference's texts and statuses, the template inputs, the render.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "chat/chat_templates.h"
#include "server/api_error.h"
#include "server/config/chat_settings.h"
#include "server/fields/field.h"
#include "server/json_util.h"
#include "server/media/media_input.h"

namespace hearth::server {

// An OpenAI chat body as the chat layer reads it, parsed once by the chat field table
// (chat_fields.cpp). Members the reference tests with `contains` keep whether they were
// sent; the rest hold their defaults when absent or null.
struct ChatRequest {
  std::optional<Json> messages;  // checked in the reference's order by build_chat_prompt
  Json tools;                    // an array, or null: no tools
  std::string tool_choice = "auto";
  // tool_choice {"type":"function","function":{"name"}}: the one tool the answer must call
  // (tool_choice stays "auto" for the checks that read it, as the reference reads it).
  std::string tool_choice_function;
  Json chat_template_kwargs = Json::object();
  bool add_generation_prompt = true;
  bool continuation_given = false;  // continue_final_message present (even null)
  chat::Continuation continuation = chat::Continuation::kNone;
  std::optional<std::string> reasoning_format;
  std::optional<std::string> reasoning_effort;
  Json response_format;        // null: absent
  Json json_schema;            // null: absent
  bool grammar_given = false;  // `grammar` present (even null): no tools may be combined
  std::string grammar;
  bool logprobs = false;
  std::optional<int64_t> top_logprobs;
  bool stream = false;
  std::optional<bool> parallel_tool_calls;  // unset: what the template supports
  bool echo = false;
  std::optional<int32_t> reasoning_budget_tokens;  // >= -1
  std::optional<int32_t> thinking_budget_tokens;   // >= -1; reasoning_budget_tokens wins
  std::optional<std::string> reasoning_budget_message;
  bool reasoning_control = false;
  bool include_usage = false;  // stream_options.include_usage
  // The body without the members only the chat layer reads: what the native field table
  // parses (the chat layer adds its own grammar, stops and n_probs to it).
  Json native = Json::object();
  // Media handed in beside the messages (not a body member): /v1/audio/transcriptions puts
  // its uploaded file here and its marker in the message text. build_chat_prompt places
  // these before the files of the messages' parts, as the reference's converter does.
  std::vector<MediaBytes> files;
};

// Reads `body` (a JSON object) through the chat field table: a member of the wrong type is
// a 400 naming it (the reference reads them leniently: a wrong type is the default).
std::optional<ApiError> parse_chat_request(const Json& body, ChatRequest& out);
// The table parse_chat_request reads with (one row per member; fields.json records it).
const std::vector<fields::Field<ChatRequest>>& chat_fields();

// What a chat request's image and audio parts may use: the projector's media, where URLs
// are read from, and the marker that stands for each part in the rendered prompt.
struct ChatMediaContext {
  scheduler::MediaSupport support;
  MediaUrlFetcher fetch;
  std::string marker;
};

struct ChatPromptRequest {
  // Set by the caller: null, or no modality, refuses image and audio parts as a server
  // without a projector does.
  const ChatMediaContext* media = nullptr;
  // The parts' bytes in the order of their markers in the prompt.
  std::vector<MediaBytes> files;
  chat::ChatInputs inputs;
  chat::ChatPrompt prompt;
  // tool_choice {"type":"function","function":{"name"}}: the one tool the answer must call.
  std::string forced_tool;
};

// 400 invalid_request_error for every problem with the request, including those the
// reference reports as 500 (unparseable messages or tools, a template that refuses the
// conversation, tools without --jinja, wrong member types; a recorded difference).
std::optional<ApiError> build_chat_prompt(const ChatRequest& request, const ChatSettings& settings,
                                          ChatPromptRequest& out);

}  // namespace hearth::server
