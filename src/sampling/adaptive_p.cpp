#include "sampling/adaptive_p.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

namespace hearth::sampling {
namespace {

// The reshaping curve: logit 5 at distance 0 from the target, falling with the distance in
// units of 0.3.
constexpr float kPeakLogit = 5.0f;
constexpr float kSharpness = 10.0f;
constexpr float kDistanceScale = 0.3f;

}  // namespace

AdaptivePStage::AdaptivePStage(float target, float decay, uint32_t seed)
    : target_(target), decay_(std::clamp(decay, 0.0f, 0.99f)), seed_(seed) {
  reset();
}

void AdaptivePStage::reset() {
  // As if the target had always been hit: the average starts at the (unclamped) target.
  weighted_sum_ = target_ / (1.0f - decay_);
  total_weight_ = 1.0f / (1.0f - decay_);
  pending_.reset();
  resolved_seed_ = resolve_seed(seed_);
  rng_.seed(resolved_seed_);
}

float AdaptivePStage::adapted_target() const {
  const float target = std::clamp(target_, 0.0f, 1.0f);
  const float adapted =
      total_weight_ == 0.0f ? target : 2.0f * target - weighted_sum_ / total_weight_;
  return std::clamp(adapted, 0.0f, 1.0f);
}

void AdaptivePStage::accept(int32_t token) {
  if (pending_ && pending_->token == token) {
    weighted_sum_ = pending_->original_p + decay_ * weighted_sum_;
    total_weight_ = 1.0f + decay_ * total_weight_;
  }
  pending_.reset();
}

void AdaptivePStage::apply(Candidates& candidates) {
  constexpr float kNegInf = -std::numeric_limits<float>::infinity();
  if (candidates.empty() || candidates.max_logit() == kNegInf) return;
  candidates.softmax();
  if (target_ < 0.0f) {
    candidates.select(static_cast<int32_t>(discrete_draw(candidates.entries(), rng_)));
    return;
  }
  std::vector<float> original(candidates.size());
  const float target = adapted_target();
  for (size_t i = 0; i < candidates.size(); ++i) {
    TokenData& entry = candidates[i];
    original[i] = entry.p;
    if (!std::isfinite(entry.logit)) continue;
    const float distance = std::fabs(entry.p - target) / kDistanceScale;
    entry.logit = kPeakLogit - kSharpness * distance * distance / (1.0f + distance);
  }
  candidates.set_sorted(false);
  candidates.softmax();
  const size_t chosen = discrete_draw(candidates.entries(), rng_);
  candidates.select(static_cast<int32_t>(chosen));
  pending_ = Pending{candidates[chosen].id, original[chosen]};
}

}  // namespace hearth::sampling
