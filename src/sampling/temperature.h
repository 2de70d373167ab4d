// temperature (static form): logits divided by T. T <= 0 means greedy: every entry but the
// first one holding the largest logit gets -inf (the array keeps its size, and the final
// dist stage then picks that entry). T == 1 is a no-op.
#pragma once

#include "sampling/stage.h"

namespace hearth::sampling {

class TemperatureStage final : public Stage {
 public:
  explicit TemperatureStage(float temperature) : temperature_(temperature) {}
  std::string_view name() const override { return "temperature"; }
  void apply(Candidates& candidates) override;
  float temperature() const { return temperature_; }

 private:
  float temperature_;
};

}  // namespace hearth::sampling
