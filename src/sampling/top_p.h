// top_p (nucleus): after a softmax over the current candidates, keeps the shortest prefix of
// the descending order whose probabilities sum to >= p (float sum), and at least min_keep
// entries. p >= 1 is a no-op; p <= 0 keeps only the most likely entry (min_keep <= 1).
// When the sum never reaches p, everything is kept. The result is sorted.
#pragma once

#include <cstddef>
#include <cstdint>

#include "sampling/stage.h"

namespace hearth::sampling {

class TopPStage final : public Stage {
 public:
  TopPStage(float p, int32_t min_keep);
  std::string_view name() const override { return "top_p"; }
  void apply(Candidates& candidates) override;
  float p() const { return p_; }

 private:
  // Entries to keep when the nucleus ends within the first `limit` (sorted) entries; 0 when
  // it does not.
  size_t nucleus_size(const Candidates& candidates, size_t limit) const;

  float p_;
  size_t min_keep_;
};

}  // namespace hearth::sampling
