// The OpenAI- and Anthropic-compatible routes (openai-compat.md): handlers, and the chat
// pipeline they share (a chat body made into completion settings and an output parser).
#pragma once

#include <atomic>
#include <memory>
#include <optional>
#include <string>

#include "server/api_error.h"
#include "server/chat_request.h"
#include "server/fields/completion_fields.h"
#include "server/http/http.h"
#include "server/json_util.h"
#include "server/openai/chat_output.h"
#include "server/openai/oai_common.h"

namespace hearth::server {
struct ServerState;
}

namespace hearth::server::openai {

http::Response handle_text_completions(ServerState& s, const http::Request& r);
http::Response handle_chat_completions(ServerState& s, const http::Request& r);
http::Response handle_chat_input_tokens(ServerState& s, const http::Request& r);
http::Response handle_chat_control(ServerState& s, const http::Request& r);
http::Response handle_messages(ServerState& s, const http::Request& r);
http::Response handle_count_tokens(ServerState& s, const http::Request& r);
http::Response handle_responses(ServerState& s, const http::Request& r);
http::Response handle_responses_input_tokens(ServerState& s, const http::Request& r);
http::Response handle_embeddings(ServerState& s, const http::Request& r);
// POST /v1/audio/transcriptions (transcriptions.cpp).
http::Response handle_transcriptions(ServerState& s, const http::Request& r);

// A running chat completion as the control route sees it.
struct ControlEntry {
  std::shared_ptr<std::atomic<bool>> end_reasoning;  // null: reasoning_control was not asked
};
// Registers completion `id` while the returned entry lives (the request's answer keeps it).
std::shared_ptr<ControlEntry> register_completion(const std::string& id,
                                                  std::shared_ptr<std::atomic<bool>> end_now);

// A chat body (after any translation) ready to run.
struct ChatRun {
  std::shared_ptr<CompletionSettings> settings;  // prompt tokenized, chat fields set
  std::shared_ptr<ChatOutput> output;            // how the answer is read back
  ResponseMeta meta;
  bool include_usage = false;  // stream_options.include_usage
};

// The chat layer (openai-compat.md §2.1): checks, template, prompt, native fields.
// The chat routes parse their body with parse_chat_request; /v1/messages and
// /v1/responses map their typed requests to one (anthropic_request.h, responses_request.h).
std::optional<ApiError> prepare_chat(ServerState& s, const ChatRequest& request, ChatRun& out);
// What chat requests' image and audio parts may use on this server.
ChatMediaContext media_context(const ServerState& s);

// {"input_tokens": N} (+ "object": "response.input_tokens") for a chat request.
http::Response count_chat_tokens(ServerState& s, const ChatRequest& request, bool with_object);

// Starts the run with the format `make_format` builds.
http::Response start_chat(ServerState& s, ChatRun run, std::shared_ptr<class ResultFormat> format);

}  // namespace hearth::server::openai
