// DRY's sequence breakers turned into token terms, once per request. A breaker string ends
// the stretch of history DRY looks at: either a single token whose text contains it, or a
// head token whose text ends with the start of the breaker followed by the tokens of the
// rest of it (the "tail").
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <unordered_map>
#include <vector>

#include "sampling/vocab_view.h"

namespace hearth::sampling {

// Longer breaker strings are cut to this many bytes, and tails to this many tokens, as the
// reference does (it bounds the preprocessing work).
inline constexpr size_t kDryMaxBreakerBytes = 40;
inline constexpr size_t kDryMaxTailTokens = 20;

struct DryBreakers {
  // Head token -> the token sequences that must follow it (toward newer tokens) to complete a
  // breaker. An empty sequence: the head's text contains a whole breaker by itself.
  std::unordered_map<int32_t, std::vector<std::vector<int32_t>>> tails;

  // Adds (head, tail) unless that exact pair is already present.
  void add(int32_t head, std::vector<int32_t> tail);
  // Whether `token` alone contains a breaker (such tokens are never penalized).
  bool is_single_token_breaker(int32_t token) const;
};

// For every vocabulary token (text rendered with special tokens) and every non-empty breaker
// (cut to kDryMaxBreakerBytes): a token containing the breaker is a single-token breaker;
// otherwise every suffix of its text that is a proper prefix of the breaker makes it a head
// whose tail is the rest of the breaker tokenized (kDryMaxTailTokens at most).
DryBreakers build_dry_breakers(const VocabView& vocab, const std::vector<std::string>& breakers);

}  // namespace hearth::sampling
