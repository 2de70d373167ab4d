// JSON shapes of native completion results (native-completion.md §5, §9-§11): the final
// object, streamed partial and progress frames, timings and token probabilities.
#pragma once

#include <string>
#include <vector>

#include "scheduler/task.h"
#include "server/fields/completion_fields.h"
#include "server/json_util.h"

namespace hearth::tokenizer {
class Tokenizer;
}

namespace hearth::server {

struct ResultContext {
  const tokenizer::Tokenizer* tok = nullptr;
  std::string model_name;
  bool special = false;  // --special: candidates' special tokens rendered as text
};

Json timings_json(const scheduler::Timings& t);
// The concatenated pieces of `tokens`, special tokens rendered (the response's `prompt`).
std::string tokens_to_text(const tokenizer::Tokenizer& tok, const std::vector<int32_t>& tokens);
Json probs_json(const scheduler::TokenProbs& probs, bool post, const ResultContext& ctx);

// The final result; `stream_final` gives the last SSE frame (no content, tokens or probs).
Json final_json(const scheduler::FinalResult& result, const CompletionSettings& settings,
                const ResultContext& ctx, bool stream_final);
Json partial_json(const scheduler::PartialResult& partial, const CompletionSettings& settings,
                  const ResultContext& ctx);
// The "prompt_progress" object of a progress update.
Json prompt_progress_json(const scheduler::ProgressInfo& progress);
// A native progress chunk; with timings_per_token it carries the timings so far, as the
// reference's.
Json progress_json(int32_t index, const scheduler::ProgressInfo& progress,
                   const CompletionSettings& settings);

// response_fields projection: each path "a/b" kept under the whole path as key.
Json project_fields(const Json& result, const std::vector<std::string>& paths);

}  // namespace hearth::server
