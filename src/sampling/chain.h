// A sampler chain: stages applied in order to the candidate array, the last of which
// selects a token. One chain serves one request; reset() before feeding the prompt gives
// every request the same starting state for a fixed seed.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string_view>
#include <vector>

#include "base/status.h"
#include "sampling/candidates.h"
#include "sampling/stage.h"

namespace hearth::sampling {

class Chain {
 public:
  Chain() = default;
  Chain(Chain&&) = default;
  Chain& operator=(Chain&&) = default;

  // Appends a stage (null is ignored).
  Chain& add(std::unique_ptr<Stage> stage);
  size_t n_stages() const { return stages_.size(); }
  const Stage& stage(size_t i) const { return *stages_[i]; }
  std::vector<std::string_view> stage_names() const;

  // Fills the candidate array from `logits` (n_vocab floats, index = token id), runs every
  // stage and returns the chosen token id. kInvalidArgument for empty logits or when no
  // token was selected (no selecting stage, or every candidate at -inf).
  Result<int32_t> sample(std::span<const float> logits);
  // Runs every stage over a caller-prepared array (e.g. refilled and grammar-masked).
  Result<int32_t> sample(Candidates& candidates);
  // The array as the last sample(logits) left it: the survivors with the probabilities the
  // selecting stage stored (the post-sampling view).
  const Candidates& candidates() const { return candidates_; }

  // Tells every stage that `token` was chosen (or replayed from the prompt).
  void accept(int32_t token);
  // Every stage back to its initial state; random stages re-seed.
  void reset();

 private:
  std::vector<std::unique_ptr<Stage>> stages_;
  Candidates candidates_;
};

}  // namespace hearth::sampling
