// One completion on one sequence of a Context, with llama-server's stopping rules
// (stop strings, token budget, context limit, end-of-generation). Used by hearth-cli and
// by the golden tests that replay the reference's /completion captures.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"
#include "engine/context.h"
#include "sampling/basic_chain.h"
#include "tokenizer/tokenizer.h"

namespace hearth::cli {

struct GenerationRequest {
  std::vector<int32_t> prompt;    // already tokenized
  int32_t n_predict = -1;         // -1: until EOG, a stop string or the context end; 0 behaves as 1
  int32_t n_ctx = 0;              // context of this sequence; 0 = the Context's n_ctx
  std::vector<std::string> stop;  // stop strings
  sampling::BasicParams sampling;
};

struct GenerationResult {
  std::string content;
  std::vector<int32_t> tokens;     // generated token ids, EOG included
  int32_t n_prompt = 0;            // tokens_evaluated
  int32_t n_predicted = 0;         // tokens_predicted
  std::string stop_type = "none";  // none | eos | limit | word
  std::string stopping_word;
  bool truncated = false;
  double prompt_ms = 0.0;
  double predicted_ms = 0.0;
};

// Streams text as it becomes final: `on_text` never receives a tail that could still turn
// into a stop string or an incomplete UTF-8 sequence. May be empty.
using TextSink = std::function<void(std::string_view)>;

Result<GenerationResult> generate(engine::Context& ctx, const tokenizer::Tokenizer& tok,
                                  const GenerationRequest& request, const TextSink& on_text = {});

}  // namespace hearth::cli
