// XTC (exclude top choices): with probability P per step, removes every token at or above
// the probability threshold T except the least likely of them, so the model sometimes takes
// a less obvious but still plausible path. It needs at least two tokens above T and leaves at
// least min_keep entries. Inert when P <= 0 or T > 0.5, and then (or with fewer than two
// candidates) it draws no random number. Own mt19937, seeded like dist.
#pragma once

#include <cstddef>
#include <cstdint>
#include <random>

#include "sampling/rng.h"
#include "sampling/stage.h"

namespace hearth::sampling {

class XtcStage final : public Stage {
 public:
  // kRandomSeed picks a fresh random seed now and on every reset().
  XtcStage(float probability, float threshold, int32_t min_keep, uint32_t seed);
  std::string_view name() const override { return "xtc"; }
  void apply(Candidates& candidates) override;
  void reset() override;

  bool inert() const { return !(probability_ > 0.0f) || threshold_ > 0.5f; }
  uint32_t resolved_seed() const { return resolved_seed_; }

 private:
  float probability_;
  float threshold_;
  size_t min_keep_;
  uint32_t seed_;
  uint32_t resolved_seed_;
  std::mt19937 rng_;
};

}  // namespace hearth::sampling
