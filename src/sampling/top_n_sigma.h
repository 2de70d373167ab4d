// top_n_sigma: masks (logit -inf) every entry more than n standard deviations below the top
// logit, the mean and population deviation taken over the finite logits. Keeps the array's
// size and order. n <= 0, or fewer than two entries, is a no-op.
#pragma once

#include "sampling/stage.h"

namespace hearth::sampling {

class TopNSigmaStage final : public Stage {
 public:
  explicit TopNSigmaStage(float n_sigma) : n_sigma_(n_sigma) {}
  std::string_view name() const override { return "top_n_sigma"; }
  void apply(Candidates& candidates) override;
  float n_sigma() const { return n_sigma_; }

 private:
  float n_sigma_;
};

}  // namespace hearth::sampling
