// Builds a slot's RunningTask from a queued request: its id, the sampler chain (with the
// grammar constraint and the reasoning budget) and the stop funnel. Owns the views of the
// tokenizer that the samplers share, built on first use. Scheduler thread only.
#pragma once

#include <cstdint>
#include <memory>

#include "grammar/grammar.h"
#include "scheduler/intake.h"
#include "scheduler/slot.h"
#include "scheduler/vocab_adapter.h"

namespace hearth::scheduler::detail {

class TaskFactory {
 public:
  explicit TaskFactory(const tokenizer::Tokenizer& tok) : tok_(tok) {}

  // Copy `copy` of the request (0: the parent, evaluating the prompt on `parent_slot`). A
  // sampler that cannot be built leaves init_error set: the task fails at launch.
  std::unique_ptr<RunningTask> make(const Pending& p, int32_t copy, int32_t parent_slot);

 private:
  Result<sampling::Sampler> make_sampler(const SamplingSettings& settings,
                                         const sampling::GrammarConfig& grammar,
                                         const ReasoningSettings& reasoning);

  const tokenizer::Tokenizer& tok_;
  std::unique_ptr<TokenizerVocab> vocab_;
  std::shared_ptr<const grammar::TokenTable> token_table_;
  int32_t next_task_id_ = 0;
};

}  // namespace hearth::scheduler::detail
