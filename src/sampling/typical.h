// typ_p (locally typical sampling): keeps the tokens whose surprise -ln p is closest to the
// distribution's entropy, most typical first, until their probabilities sum to more than p
// (and at least min_keep are kept). The result is in that typicality order, not sorted by
// logit. p >= 1 is a no-op; p <= 0 keeps only the single most typical token.
#pragma once

#include <cstddef>
#include <cstdint>

#include "sampling/stage.h"

namespace hearth::sampling {

class TypicalStage final : public Stage {
 public:
  TypicalStage(float p, int32_t min_keep);
  std::string_view name() const override { return "typ_p"; }
  void apply(Candidates& candidates) override;
  float p() const { return p_; }

 private:
  float p_;
  size_t min_keep_;
};

}  // namespace hearth::sampling
