// logit_bias: adds fixed per-token biases to the logits (-inf bans a token). It is the
// chain's first stage, so it normally sees the whole vocabulary in token-id order; there every
// (token, bias) pair is applied, duplicates included. On any other array (a caller-prepared
// subset) each candidate gets the bias of the first pair naming its token, which is what the
// reference's search-based path gives.
#pragma once

#include <cstdint>
#include <utility>
#include <vector>

#include "sampling/stage.h"

namespace hearth::sampling {

class LogitBiasStage final : public Stage {
 public:
  explicit LogitBiasStage(std::vector<std::pair<int32_t, float>> biases);
  std::string_view name() const override { return "logit_bias"; }
  void apply(Candidates& candidates) override;
  const std::vector<std::pair<int32_t, float>>& biases() const { return biases_; }

 private:
  std::vector<std::pair<int32_t, float>> biases_;
};

}  // namespace hearth::sampling
