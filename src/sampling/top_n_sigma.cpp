#include "sampling/top_n_sigma.h"

#include <cmath>
#include <limits>

namespace hearth::sampling {

void TopNSigmaStage::apply(Candidates& candidates) {
  constexpr float kNegInf = -std::numeric_limits<float>::infinity();
  if (!(n_sigma_ > 0.0f) || candidates.size() <= 1) return;
  // The maximum starts from entry 0 even when that one is masked, as in the reference.
  float max_logit = candidates[0].logit;
  float sum = 0.0f;
  size_t finite = 0;
  for (const TokenData& entry : candidates.entries()) {
    if (entry.logit == kNegInf) continue;
    if (entry.logit > max_logit) max_logit = entry.logit;
    sum += entry.logit;
    ++finite;
  }
  if (finite == 0) return;
  const float mean = sum / static_cast<float>(finite);
  float squares = 0.0f;
  for (const TokenData& entry : candidates.entries()) {
    if (entry.logit == kNegInf) continue;
    squares += (entry.logit - mean) * (entry.logit - mean);
  }
  const float sigma = std::sqrt(squares / static_cast<float>(finite));
  const float threshold = max_logit - n_sigma_ * sigma;
  for (TokenData& entry : candidates.entries()) {
    if (entry.logit < threshold) entry.logit = kNegInf;
  }
}

}  // namespace hearth::sampling
