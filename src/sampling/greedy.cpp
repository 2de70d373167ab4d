#include "sampling/greedy.h"

#include <limits>

namespace hearth::sampling {

void GreedyStage::apply(Candidates& candidates) {
  if (candidates.empty()) return;
  const size_t best = candidates.first_max_index();
  if (candidates[best].logit == -std::numeric_limits<float>::infinity()) return;
  candidates[0] = candidates[best];
  candidates[0].p = 1.0f;
  candidates.truncate(1);
  candidates.set_sorted(true);
  candidates.select(0);
}

}  // namespace hearth::sampling
