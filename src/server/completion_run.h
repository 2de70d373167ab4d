// The generation pipeline every generating route shares: settings parsed from the body,
// tasks submitted to the scheduler, results shaped by the route's ResultFormat.
#pragma once

#include <memory>
#include <optional>

#include "server/fields/completion_fields.h"
#include "server/http/http.h"
#include "server/result_format.h"

namespace hearth::server {

struct ServerState;

// The server's request-field defaults, with the limits the scheduler sets.
RequestDefaults request_defaults(const ServerState& s);

// What result shapes need of the server: tokenizer, model name, --special.
ResultContext result_context(const ServerState& s);

// A native generation body (/completion, /completions, /v1/completions): JSON, `prompt`
// required, every field through the completion table.
std::optional<ApiError> parse_native_request(const ServerState& s, const http::Request& r,
                                             std::shared_ptr<CompletionSettings>& out);

// "Prompt contains invalid tokens" when an id of `prompts` is outside the vocabulary (the
// positions of `media`'s chunks, which hold placeholders, excepted).
std::optional<ApiError> check_tokens(
    const tokenizer::Tokenizer& tok, const std::vector<std::vector<int32_t>>& prompts,
    const std::vector<std::vector<scheduler::MediaChunk>>& media = {});

// Submits every prompt of `settings` (each n_cmpl times); the answer comes when the
// scheduler has results, streamed or not, shaped by `format` (null: the native shape).
http::Response run_completion(ServerState& s, std::shared_ptr<CompletionSettings> settings,
                              std::shared_ptr<ResultFormat> format);

}  // namespace hearth::server
