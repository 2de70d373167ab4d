#include "sampling/xtc.h"

#include <algorithm>
#include <vector>

namespace hearth::sampling {

XtcStage::XtcStage(float probability, float threshold, int32_t min_keep, uint32_t seed)
    : probability_(probability),
      threshold_(threshold),
      min_keep_(static_cast<size_t>(std::max(min_keep, 0))),
      seed_(seed),
      resolved_seed_(resolve_seed(seed)),
      rng_(resolved_seed_) {}

void XtcStage::reset() {
  resolved_seed_ = resolve_seed(seed_);
  rng_.seed(resolved_seed_);
}

void XtcStage::apply(Candidates& candidates) {
  if (inert() || candidates.size() < 2) return;
  if (uniform_float(rng_) > probability_) return;
  candidates.sort();
  candidates.softmax();
  // The last entry of the leading run at or above the threshold.
  size_t last = 0;
  for (size_t i = 0; i < candidates.size() && candidates[i].p >= threshold_; ++i) last = i;
  if (last == 0 || candidates.size() - last < min_keep_) return;
  std::vector<TokenData> rest(candidates.entries().begin() + static_cast<std::ptrdiff_t>(last),
                              candidates.entries().end());
  candidates.assign(std::move(rest), /*sorted=*/true);
}

}  // namespace hearth::sampling
