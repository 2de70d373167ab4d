#include "scheduler/ngram_draft.h"

#include <algorithm>

namespace hearth::scheduler {

std::vector<int32_t> draft_ngram_simple(std::span<const int32_t> history, int32_t sampled,
                                        const NgramSimpleParams& params) {
  const auto len = static_cast<int64_t>(history.size());
  const int64_t n = params.size_n, m = params.size_m;
  if (n < 1 || m < 1 || len <= n + m + 1) return {};
  // The pattern: the last n - 1 cached tokens, then the sampled one.
  const auto matches_at = [&](int64_t j) {
    for (int64_t k = 0; k + 1 < n; ++k) {
      if (history[static_cast<size_t>(j + k)] != history[static_cast<size_t>(len - n + 1 + k)])
        return false;
    }
    return history[static_cast<size_t>(j + n - 1)] == sampled;
  };
  int64_t match = -1;
  for (int64_t j = len - n - 1; j >= 1; --j) {
    if (matches_at(j)) {
      match = j;
      break;
    }
  }
  if (match < 0) return {};
  const int64_t copy = std::min(m, len - (match + n));
  if (copy < n) return {};
  const auto from = history.begin() + static_cast<std::ptrdiff_t>(match + n);
  return {from, from + static_cast<std::ptrdiff_t>(copy)};
}

}  // namespace hearth::scheduler
