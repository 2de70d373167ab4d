// greedy: selects the first entry holding the largest logit (ties go to the earliest entry,
// i.e. the lowest token id in vocabulary order). The array shrinks to that entry with p = 1.
#pragma once

#include "sampling/stage.h"

namespace hearth::sampling {

class GreedyStage final : public Stage {
 public:
  std::string_view name() const override { return "greedy"; }
  // Selects nothing when the array is empty or every logit is -inf.
  void apply(Candidates& candidates) override;
};

}  // namespace hearth::sampling
