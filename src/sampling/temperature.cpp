#include "sampling/temperature.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace hearth::sampling {
namespace {

// p from the scaled logits with entry 0 as the maximum, in double as the reference's dynamic
// temperature does it (stored as float).
void double_softmax_from_first(Candidates& candidates) {
  const double max_logit = candidates[0].logit;
  if (!std::isfinite(max_logit)) return;
  double sum = 0.0;
  for (TokenData& entry : candidates.entries()) {
    const double weight = std::exp(static_cast<double>(entry.logit) - max_logit);
    entry.p = static_cast<float>(weight);
    sum += weight;
  }
  for (TokenData& entry : candidates.entries()) {
    entry.p = static_cast<float>(static_cast<double>(entry.p) / sum);
  }
}

}  // namespace

void apply_static_temperature(Candidates& candidates, float temperature) {
  if (candidates.empty()) return;
  if (temperature <= 0.0f) {
    const size_t best = candidates.first_max_index();
    for (size_t i = 0; i < candidates.size(); ++i) {
      if (i != best) candidates[i].logit = -std::numeric_limits<float>::infinity();
    }
    return;
  }
  // Dividing by a positive T keeps the order, so a sorted array stays sorted.
  for (TokenData& entry : candidates.entries()) entry.logit /= temperature;
}

float TemperatureStage::dynamic_temperature(Candidates& candidates) const {
  if (!dynamic()) return temperature_;
  const float t_min = std::max(0.0f, temperature_ - range_);
  const float t_max = temperature_ + range_;
  const float max_entropy = std::log(static_cast<float>(candidates.size()));
  candidates.sort();
  candidates.softmax();
  float entropy = 0.0f;
  for (const TokenData& entry : candidates.entries()) {
    if (entry.p > 0.0f) entropy -= entry.p * std::log(entry.p);
  }
  const float normalized = entropy / max_entropy;
  return t_min + (t_max - t_min) * std::pow(normalized, exponent_);
}

void TemperatureStage::apply(Candidates& candidates) {
  if (inert() || candidates.empty()) return;
  if (!dynamic()) {
    apply_static_temperature(candidates, temperature_);
    return;
  }
  if (candidates.size() <= 1) return;
  apply_static_temperature(candidates, dynamic_temperature(candidates));
  double_softmax_from_first(candidates);
}

}  // namespace hearth::sampling
