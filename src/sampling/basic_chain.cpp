#include "sampling/basic_chain.h"

#include <memory>

#include "sampling/dist.h"
#include "sampling/greedy.h"
#include "sampling/min_p.h"
#include "sampling/temperature.h"
#include "sampling/top_k.h"
#include "sampling/top_p.h"

namespace hearth::sampling {

Chain make_basic_chain(const BasicParams& params) {
  Chain chain;
  if (params.temperature <= 0.0f) {
    chain.add(std::make_unique<GreedyStage>());
    return chain;
  }
  chain.add(std::make_unique<TopKStage>(params.top_k))
      .add(std::make_unique<TopPStage>(params.top_p, params.min_keep))
      .add(std::make_unique<MinPStage>(params.min_p, params.min_keep))
      .add(std::make_unique<TemperatureStage>(params.temperature))
      .add(std::make_unique<DistStage>(params.seed));
  return chain;
}

}  // namespace hearth::sampling
