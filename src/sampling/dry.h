// DRY ("don't repeat yourself"): penalizes a token that would extend a sequence already seen
// in the last `last_n` accepted tokens. If the newest r tokens also occur earlier, followed
// by token x, and r >= allowed_length, x's logit drops by multiplier * base^(r -
// allowed_length) (the exponent capped so the power stays finite in float). Repeats do not
// reach back past the newest sequence breaker, and tokens that are breakers by themselves are
// never penalized. Inert, keeping no history, when multiplier == 0, base < 1 or last_n <= 0.
#pragma once

#include <cstdint>
#include <deque>
#include <optional>
#include <span>
#include <unordered_map>
#include <vector>

#include "sampling/dry_breakers.h"
#include "sampling/stage.h"

namespace hearth::sampling {

struct DryParams {
  float multiplier = 0.0f;
  float base = 1.75f;
  int32_t allowed_length = 2;
  int32_t last_n = 64;  // < 0 counts as 0
};

bool dry_enabled(const DryParams& params);

class DryStage final : public Stage {
 public:
  DryStage(const DryParams& params, DryBreakers breakers);
  std::string_view name() const override { return "dry"; }
  void apply(Candidates& candidates) override;
  void accept(int32_t token) override;
  void reset() override { history_.clear(); }

  bool inert() const { return !enabled_; }
  // token -> longest repeat it would extend, for the current history (the lengths apply()
  // penalizes, before the breaker exemption). nullopt when apply() is a no-op: too little
  // history, or the newest breaker is too close.
  std::optional<std::unordered_map<int32_t, int32_t>> repeat_lengths() const;

 private:
  // How far back a repeat may reach: the distance to the newest breaker, or the whole
  // window when there is none. `newest_first` is the history, newest token at index 0.
  int32_t repeat_limit(std::span<const int32_t> newest_first) const;

  DryParams params_;
  bool enabled_;
  DryBreakers breakers_;
  std::deque<int32_t> history_;  // oldest first, at most last_n tokens
};

}  // namespace hearth::sampling
