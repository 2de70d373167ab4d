// Drafting without a second model: continuations copied from earlier in the same sequence.
// llama-server's ngram-simple: the n tokens ending with the one just sampled are looked for
// earlier in the slot's tokens (the most recent earlier occurrence wins), and the tokens
// that followed that occurrence are proposed, at least n and at most m of them. Repetitive
// text (code edits, quoted sources, JSON) repeats such spans; elsewhere nothing matches and
// nothing is drafted.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

namespace hearth::scheduler {

struct NgramSimpleParams {
  int32_t size_n = 12;  // --spec-ngram-simple-size-n: tokens matched
  int32_t size_m = 48;  // --spec-ngram-simple-size-m: most tokens drafted
};

// The draft for the token `sampled` following `history` (the slot's cached tokens: prompt
// and generated so far); empty when no earlier occurrence leaves at least size_n tokens to
// copy. Matches never start at position 0, as the reference's search stops before it.
std::vector<int32_t> draft_ngram_simple(std::span<const int32_t> history, int32_t sampled,
                                        const NgramSimpleParams& params);

}  // namespace hearth::scheduler
