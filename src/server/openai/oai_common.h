// Shared pieces of the OpenAI- and Anthropic-shaped answers (openai-compat.md §2.2, §10,
// §11): ids, the constant members, finish reasons, usage and log-probability containers.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "scheduler/task.h"
#include "server/completion_json.h"
#include "server/fields/completion_fields.h"
#include "server/json_util.h"

namespace hearth::server {
struct ServerState;
}

namespace hearth::server::openai {

// `n` random characters of [0-9A-Za-z].
std::string random_id(size_t n = 32);

// What every chunk and body of one request repeats.
struct ResponseMeta {
  std::string id;  // "chatcmpl-" + 32 random characters, one per HTTP request
  std::string model;
  std::string fingerprint;  // system_fingerprint: /props' build_info
};
ResponseMeta make_meta(const ServerState& s);

int64_t unix_seconds();

// True when generation ended at EOS or a stop string (not at a limit).
bool stopped_naturally(const scheduler::FinalResult& r);

// "stop" or "length" ("tool_calls" when `tool_calls` and generation stopped naturally).
const char* finish_reason(const scheduler::FinalResult& r, bool tool_calls = false);

// {"completion_tokens","prompt_tokens","total_tokens","prompt_tokens_details":{...}}
Json usage_json(const scheduler::FinalResult& r);

// {"content":[entries]}, or null when no probabilities were asked for.
Json logprobs_json(const std::vector<scheduler::TokenProbs>& probs,
                   const CompletionSettings& settings, const ResultContext& ctx);

}  // namespace hearth::server::openai
