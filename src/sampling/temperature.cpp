#include "sampling/temperature.h"

#include <limits>

namespace hearth::sampling {

void TemperatureStage::apply(Candidates& candidates) {
  if (temperature_ == 1.0f || candidates.empty()) return;
  if (temperature_ <= 0.0f) {
    const size_t best = candidates.first_max_index();
    for (size_t i = 0; i < candidates.size(); ++i) {
      if (i != best) candidates[i].logit = -std::numeric_limits<float>::infinity();
    }
    return;
  }
  // Dividing by a positive T keeps the order, so a sorted array stays sorted.
  for (TokenData& entry : candidates.entries()) entry.logit /= temperature_;
}

}  // namespace hearth::sampling
