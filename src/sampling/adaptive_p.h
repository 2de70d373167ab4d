// adaptive_p: a selecting stage that aims the probability of the chosen tokens at a target.
// It keeps a decaying average of the original probabilities of the tokens actually accepted
// and, each step, reshapes the logits so that tokens whose probability is near an adjusted
// target (2 * target - average, clamped to [0, 1]) are the most likely, then samples.
// A negative target turns it into plain sampling from the current softmax. Replaces dist
// when `adaptive_p` is in the samplers list; own mt19937.
#pragma once

#include <cstdint>
#include <optional>
#include <random>

#include "sampling/rng.h"
#include "sampling/stage.h"

namespace hearth::sampling {

class AdaptivePStage final : public Stage {
 public:
  // decay is clamped to [0, 0.99]. kRandomSeed picks a fresh seed now and on every reset().
  AdaptivePStage(float target, float decay, uint32_t seed);
  std::string_view name() const override { return "adaptive_p"; }
  // Selects nothing when the array is empty or every logit is -inf.
  void apply(Candidates& candidates) override;
  // Folds the chosen token's original probability into the average, if `token` is the one
  // apply() chose last.
  void accept(int32_t token) override;
  void reset() override;

  float weighted_sum() const { return weighted_sum_; }
  float total_weight() const { return total_weight_; }
  // The target the next apply() will aim at.
  float adapted_target() const;
  uint32_t resolved_seed() const { return resolved_seed_; }

 private:
  struct Pending {
    int32_t token;
    float original_p;
  };

  float target_;
  float decay_;
  uint32_t seed_;
  // Set by reset(), which the constructor calls.
  uint32_t resolved_seed_ = 0;
  float weighted_sum_ = 0.0f;
  float total_weight_ = 0.0f;
  std::optional<Pending> pending_;
  std::mt19937 rng_;
};

}  // namespace hearth::sampling
