// mirostat (v1): a selecting stage that steers the surprise (-log2 p) of the chosen tokens
// toward a target tau. It estimates the Zipf exponent s of the distribution from the top m
// probabilities, derives the k whose top-k truncation would give a surprise of mu, samples
// from that top-k, then moves mu by eta times the error of the observed surprise. mu starts
// at 2 * tau. Used instead of the configurable samplers (sampling.md 5.10); own mt19937.
#pragma once

#include <cstdint>
#include <random>

#include "sampling/rng.h"
#include "sampling/stage.h"

namespace hearth::sampling {

class MirostatStage final : public Stage {
 public:
  // n_vocab <= 0: take the vocabulary size from the candidate count of each step (the chain
  // sees the whole vocabulary there). kRandomSeed picks a fresh seed now and on every reset().
  MirostatStage(int32_t n_vocab, uint32_t seed, float tau, float eta, int32_t m = 100);
  std::string_view name() const override { return "mirostat"; }
  // Selects nothing on an empty array.
  void apply(Candidates& candidates) override;
  void reset() override;

  float mu() const { return mu_; }
  uint32_t resolved_seed() const { return resolved_seed_; }

 private:
  // The top-k size for the current (sorted, softmaxed) distribution.
  size_t truncation(const Candidates& candidates) const;

  int32_t n_vocab_;
  uint32_t seed_;
  uint32_t resolved_seed_;
  float tau_;
  float eta_;
  int32_t m_;
  float mu_;
  std::mt19937 rng_;
};

}  // namespace hearth::sampling
