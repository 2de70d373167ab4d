// temperature: logits divided by T. T <= 0 means greedy: every entry but the first one
// holding the largest logit gets -inf (the array keeps its size, and the final dist stage
// then picks that entry). T == 1 is a no-op.
//
// Dynamic temperature (dynatemp_range d > 0): T varies per step between max(0, T - d) and
// T + d with the normalized entropy h of the current distribution, as T_min + (T_max -
// T_min) * h^exponent: a flat distribution is sampled hotter, a peaked one colder. That form
// sorts the array and leaves probabilities (computed in double) for the scaled logits; with a
// single candidate it does nothing.
#pragma once

#include "sampling/stage.h"

namespace hearth::sampling {

class TemperatureStage final : public Stage {
 public:
  explicit TemperatureStage(float temperature) : temperature_(temperature) {}
  TemperatureStage(float temperature, float dynatemp_range, float dynatemp_exponent)
      : temperature_(temperature), range_(dynatemp_range), exponent_(dynatemp_exponent) {}
  std::string_view name() const override { return "temperature"; }
  void apply(Candidates& candidates) override;
  float temperature() const { return temperature_; }
  bool dynamic() const { return range_ > 0.0f; }
  bool inert() const { return temperature_ == 1.0f && !dynamic(); }

  // The temperature dynamic mode would use for `candidates` (at least two entries; the call
  // sorts and softmaxes them); T itself when not dynamic.
  float dynamic_temperature(Candidates& candidates) const;

 private:
  float temperature_;
  float range_ = 0.0f;
  float exponent_ = 1.0f;
};

// The static rule on its own: l / T, or greedy masking for T <= 0.
void apply_static_temperature(Candidates& candidates, float temperature);

}  // namespace hearth::sampling
