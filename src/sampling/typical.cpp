#include "sampling/typical.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

namespace hearth::sampling {

TypicalStage::TypicalStage(float p, int32_t min_keep)
    : p_(p), min_keep_(static_cast<size_t>(std::max(min_keep, 0))) {}

void TypicalStage::apply(Candidates& candidates) {
  if (p_ >= 1.0f || candidates.empty()) return;
  candidates.sort();
  candidates.softmax();
  // Entries with p = 0 (masked earlier) are left out of the entropy: the reference's sum
  // turns NaN there and its order is then unspecified; leaving them out puts them last.
  float entropy = 0.0f;
  for (const TokenData& entry : candidates.entries()) {
    if (entry.p > 0.0f) entropy += -entry.p * std::log(entry.p);
  }
  std::vector<float> score(candidates.size());
  for (size_t i = 0; i < candidates.size(); ++i) {
    const float p = candidates[i].p;
    score[i] =
        p > 0.0f ? std::fabs(-std::log(p) - entropy) : std::numeric_limits<float>::infinity();
  }
  // A stable order on equal scores keeps the result deterministic (logit order, then id).
  std::vector<size_t> order(candidates.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::stable_sort(order.begin(), order.end(),
                   [&score](size_t a, size_t b) { return score[a] < score[b]; });

  size_t keep = order.size();
  float cumulative = 0.0f;
  for (size_t i = 0; i < order.size(); ++i) {
    cumulative += candidates[order[i]].p;
    if (cumulative > p_ && (min_keep_ == 0 || i + 1 >= min_keep_)) {
      keep = i + 1;
      break;
    }
  }
  std::vector<TokenData> kept;
  kept.reserve(keep);
  for (size_t i = 0; i < keep; ++i) kept.push_back(candidates[order[i]]);
  candidates.assign(std::move(kept), /*sorted=*/false);
}

}  // namespace hearth::sampling
