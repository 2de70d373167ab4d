// top_k: keeps the k highest logits, sorted in descending order. k <= 0 is a no-op; k above
// the array size keeps everything (and sorts it). min_keep does not apply.
#pragma once

#include <cstdint>

#include "sampling/stage.h"

namespace hearth::sampling {

class TopKStage final : public Stage {
 public:
  explicit TopKStage(int32_t k) : k_(k) {}
  std::string_view name() const override { return "top_k"; }
  void apply(Candidates& candidates) override;
  int32_t k() const { return k_; }

 private:
  int32_t k_;
};

}  // namespace hearth::sampling
