// mirostat v2: a selecting stage that keeps the most likely tokens whose surprise (-log2 p)
// does not exceed mu (at least the top one), samples among them, then moves mu by eta times
// the difference between the chosen token's surprise and the target tau. mu starts at
// 2 * tau. Used instead of the configurable samplers (sampling.md 5.10); own mt19937.
#pragma once

#include <cstdint>
#include <random>

#include "sampling/rng.h"
#include "sampling/stage.h"

namespace hearth::sampling {

class MirostatV2Stage final : public Stage {
 public:
  // kRandomSeed picks a fresh seed now and on every reset().
  MirostatV2Stage(uint32_t seed, float tau, float eta);
  std::string_view name() const override { return "mirostat_v2"; }
  // Selects nothing on an empty array.
  void apply(Candidates& candidates) override;
  void reset() override;

  float mu() const { return mu_; }
  uint32_t resolved_seed() const { return resolved_seed_; }

 private:
  uint32_t seed_;
  uint32_t resolved_seed_;
  float tau_;
  float eta_;
  float mu_;
  std::mt19937 rng_;
};

}  // namespace hearth::sampling
