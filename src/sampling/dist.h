// dist: the default final stage. Draws an entry with probability proportional to
// exp(l_i - max) (float weights, double sum) using its own mt19937, then stores the
// normalized probabilities in the array. Draw: u = uniform_double(); the first entry whose
// running double sum reaches sum * u. With a single candidate one number is still drawn, so
// the random stream stays aligned with the reference.
#pragma once

#include <cstdint>
#include <random>

#include "sampling/rng.h"
#include "sampling/stage.h"

namespace hearth::sampling {

class DistStage final : public Stage {
 public:
  // kRandomSeed picks a fresh random seed now and on every reset().
  explicit DistStage(uint32_t seed);
  std::string_view name() const override { return "dist"; }
  // Selects nothing when the array is empty or every logit is -inf; an entry with logit
  // -inf is never chosen.
  void apply(Candidates& candidates) override;
  void reset() override;

  uint32_t seed() const { return seed_; }
  // The seed the generator was last seeded with (differs from seed() for kRandomSeed).
  uint32_t resolved_seed() const { return resolved_seed_; }

 private:
  uint32_t seed_;
  uint32_t resolved_seed_;
  std::mt19937 rng_;
};

}  // namespace hearth::sampling
