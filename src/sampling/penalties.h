// penalties: repeat, frequency and presence penalties over the last `last_n` accepted tokens
// (prompt and generated). A token seen c > 0 times in that window gets its logit scaled away
// from zero by repeat_penalty (divided when positive, multiplied when not), then lowered by
// c * frequency_penalty + presence_penalty. Unseen tokens are untouched; nothing is reordered
// or removed. Inert, keeping no history, when last_n <= 0 or every penalty is neutral.
#pragma once

#include <cstddef>
#include <cstdint>
#include <deque>
#include <unordered_map>

#include "base/status.h"
#include "sampling/stage.h"

namespace hearth::sampling {

struct PenaltyParams {
  int32_t last_n = 64;  // window length; < 0 counts as 0
  float repeat = 1.0f;
  float frequency = 0.0f;
  float presence = 0.0f;
};

// The reference's init checks: repeat finite, > 0 and with a finite reciprocal; frequency
// and presence finite. kInvalidArgument naming the offending value otherwise.
Status validate_penalty_params(const PenaltyParams& params);

class PenaltiesStage final : public Stage {
 public:
  // `params` must pass validate_penalty_params.
  explicit PenaltiesStage(const PenaltyParams& params);
  std::string_view name() const override { return "penalties"; }
  void apply(Candidates& candidates) override;
  void accept(int32_t token) override;
  void reset() override;

  bool inert() const { return window_size_ == 0; }
  // Occurrences of `token` in the current window.
  int32_t count(int32_t token) const;

 private:
  PenaltyParams params_;
  // 0 when inert. The window grows as tokens arrive rather than being allocated up front:
  // a request may ask for a window of INT32_MAX tokens.
  size_t window_size_ = 0;
  std::deque<int32_t> window_;  // oldest first
  std::unordered_map<int32_t, int32_t> counts_;
};

}  // namespace hearth::sampling
