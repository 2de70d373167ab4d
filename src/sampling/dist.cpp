#include "sampling/dist.h"

#include <cmath>
#include <limits>

namespace hearth::sampling {

DistStage::DistStage(uint32_t seed)
    : seed_(seed), resolved_seed_(resolve_seed(seed)), rng_(resolved_seed_) {}

void DistStage::reset() {
  resolved_seed_ = resolve_seed(seed_);
  rng_.seed(resolved_seed_);
}

void DistStage::apply(Candidates& candidates) {
  if (candidates.empty()) return;
  if (candidates.size() == 1) {
    (void)uniform_double(rng_);
    if (candidates[0].logit == -std::numeric_limits<float>::infinity()) return;
    candidates[0].p = 1.0f;
    candidates.select(0);
    return;
  }
  const float max_l = candidates.max_logit();
  double sum = 0.0;
  for (TokenData& entry : candidates.entries()) {
    entry.p = softmax_weight(entry.logit, max_l);
    sum += entry.p;
  }
  const double target = sum * uniform_double(rng_);
  if (!(sum > 0.0) || !std::isfinite(sum)) {
    for (TokenData& entry : candidates.entries()) entry.p = 0.0f;
    return;
  }
  double running = 0.0;
  int32_t chosen = -1;
  for (size_t i = 0; i < candidates.size(); ++i) {
    TokenData& entry = candidates[i];
    if (chosen < 0) {
      running += entry.p;
      // A zero weight is skipped: only a draw of exactly 0 could otherwise pick it.
      if (running >= target && entry.p > 0.0f) chosen = static_cast<int32_t>(i);
    }
    entry.p = static_cast<float>(entry.p / sum);
  }
  if (chosen < 0) {
    // Rounding cannot leave the running sum below sum * u (< sum), but stay defined anyway.
    for (size_t i = candidates.size(); i-- > 0;) {
      if (candidates[i].p > 0.0f) {
        chosen = static_cast<int32_t>(i);
        break;
      }
    }
  }
  candidates.select(chosen);
}

}  // namespace hearth::sampling
