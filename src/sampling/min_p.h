// min_p: keeps the entries whose probability is at least p times the largest one, tested on
// logits as l >= max_l + ln(p), and at least min_keep entries. An unsorted array keeps its
// order when that gives enough entries; otherwise the result is the sorted prefix (always at
// least the top entry). p <= 0 is a no-op.
#pragma once

#include <cstddef>
#include <cstdint>

#include "sampling/stage.h"

namespace hearth::sampling {

class MinPStage final : public Stage {
 public:
  MinPStage(float p, int32_t min_keep);
  std::string_view name() const override { return "min_p"; }
  void apply(Candidates& candidates) override;
  float p() const { return p_; }

 private:
  float p_;
  size_t min_keep_;
};

}  // namespace hearth::sampling
