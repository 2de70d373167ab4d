// Speculative decoding in the step (--spec-type): drafts for the generating slots before the
// step is collected, cut to the rows worth verifying, and the verification of what the
// forward pass computed for them. Owns every drafting state: the n-gram sources' per-slot
// indexes and the table ngram-mod shares, the draft model's context and its per-slot
// sequences, and the step-cost model the draft budget weighs. A task's own drafting record
// (its draft, length cap, per-source acceptance) lives in its RunningTask. Scheduler thread
// only.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <vector>

#include "engine/context.h"
#include "scheduler/draft_budget.h"
#include "scheduler/planner.h"
#include "scheduler/scheduler.h"
#include "scheduler/slot_table.h"

namespace hearth::scheduler::detail {

class Speculator {
 public:
  // `target` is the KV cache the drafts are verified in; `draft_ctx` is null unless
  // draft-simple is on.
  Speculator(const SchedulerConfig& config, int32_t n_vocab, engine::KvCache& target,
             std::unique_ptr<engine::Context> draft_ctx);

  // Sets the task's draft for every slot that decodes in this step: the n-gram sources per
  // slot, then the draft model for the slots they left without a draft (batched), then the
  // budget cuts them to the rows worth verifying (draft_budget.h).
  void prepare(const StepPlan& plan, SlotTable& slots);
  // The slot's prompt is evaluated: the sources that learn from it see it.
  void begin(const Slot& slot);
  // Row `at` of the forward call holds the slot's pending token, the rows of its draft
  // follow. `sample` samples the slot's next token from a row (the slot's task may end
  // there). Accepts the draft while the samples match it, and drops the other rows' KV.
  using SampleRow = std::function<void(Slot& slot, int32_t row)>;
  void verify(Slot& slot, size_t at, const SampleRow& sample);
  // A step's measured cost, for the draft budget.
  void observe_step(int32_t rows, double seconds) { step_cost_.observe(rows, seconds); }

 private:
  // A slot's drafting state that outlives its tasks.
  struct SlotState {
    NgramModSlot ngram_mod;             // the slot's place in the shared ngram-mod table
    std::unique_ptr<NgramMap> map_k;    // ngram-map-k's index of the slot's tokens
    std::unique_ptr<NgramMap> map_k4v;  // ngram-map-k4v's
    NgramCacheSlot ngram_cache;         // ngram-cache's context table
    std::vector<int32_t> draft_cached;  // tokens in the draft model's sequence `id`
  };
  struct DraftJob {
    Slot* slot;
    int32_t budget;  // most tokens the draft model may propose
  };
  SlotState& state(const Slot& slot) { return slots_[static_cast<size_t>(slot.id)]; }
  void budget(const StepPlan& plan, SlotTable& slots);
  int32_t ngram_draft(Slot& slot);
  std::vector<int32_t> draft_from_ngrams(Slot& slot);
  std::vector<int32_t> draft_from_ngram_cache(Slot& slot);
  void learn(Slot& slot, RunningTask::DraftSource source, int32_t drafted, int32_t accepted);
  void draft_with_model(std::vector<DraftJob>& jobs);  // draft_model.cpp
  bool sync_draft_sequences(std::vector<DraftJob>& jobs);
  // The draft model can read the task's prompt: it has no media, or the draft model's input
  // rows are as wide as the media rows (the reference feeds it the same embeddings; it
  // stops the server otherwise, Hearth drafts such a task by n-grams only).
  bool draft_takes_media(const RunningTask& t) const;

  const SpeculativeConfig& spec_;
  const int32_t n_ctx_slot_;
  const int32_t n_ubatch_;
  const int32_t n_vocab_;
  engine::KvCache& target_;
  std::vector<SlotState> slots_;
  std::unique_ptr<NgramModTable> ngram_mod_;    // with --spec-type ngram-mod
  std::unique_ptr<engine::Context> draft_ctx_;  // with --spec-type draft-simple
  StepCostModel step_cost_;                     // forward-call times, for the draft budget
};

}  // namespace hearth::scheduler::detail
