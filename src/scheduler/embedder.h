// Embedding and rerank tasks in the step: which rows the engine computes final hidden
// states for, the rows each task keeps (only those its pooling reads), and the pooled,
// normalized result once the whole input is in. Scheduler thread only.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "engine/context.h"
#include "scheduler/slot_table.h"

namespace hearth::scheduler::detail {

class Embedder {
 public:
  Embedder(const engine::ModelHparams& hp, engine::PoolingType pooling, engine::Context& ctx)
      : hp_(hp), pooling_(pooling), ctx_(ctx) {}

  // Whether the engine computes the final hidden state at `pos` of the slot's sequence.
  bool wants_hidden(const Slot& slot, int32_t pos) const;
  // Appends the final hidden states of the chunk's embedding tokens (row i: chunk[i]) to
  // their tasks' rows; returns the slots whose whole input is now in.
  std::vector<Slot*> gather(std::span<const StepToken> chunk, SlotTable& slots);
  // The pooled result of a task whose whole input is in.
  EmbeddingResult pool(const RunningTask& t);

 private:
  void keep_row(std::vector<float>& rows, std::span<const float> row) const;

  const engine::ModelHparams& hp_;
  const engine::PoolingType pooling_;
  engine::Context& ctx_;
};

}  // namespace hearth::scheduler::detail
