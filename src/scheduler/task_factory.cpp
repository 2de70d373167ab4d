#include "scheduler/task_factory.h"

#include "base/timer.h"
#include "sampling/chain_builder.h"

namespace hearth::scheduler::detail {

std::unique_ptr<RunningTask> TaskFactory::make(const Pending& p, int32_t copy,
                                               int32_t parent_slot) {
  auto t = std::make_unique<RunningTask>();
  t->id_task = next_task_id_++;
  t->index = p.req.index + copy;
  t->is_child = copy > 0;
  t->parent_slot = parent_slot;
  t->kind = p.req.kind;
  t->params = p.req.params;
  t->embd_normalize = p.req.embd_normalize;
  t->sink = p.req.sink;
  t->echo = p.req.echo;
  t->prompt = p.prompt;
  t->media = p.req.media;
  t->t_queued_us = p.t_queued_us;
  t->t_start_us = now_us();
  if (t->kind != TaskKind::kCompletion) return t;  // nothing is sampled
  SamplingSettings s = t->params.sampling;
  // Copy j of an explicit seed s samples with s + j; random seeds stay random per copy.
  if (s.seed != kRandomSeed) s.seed += static_cast<uint32_t>(copy);
  t->seed_echo = s.seed;
  if (auto sampler = make_sampler(s, t->params.grammar.config, t->params.reasoning);
      sampler.is_ok()) {
    t->sampler = std::move(sampler.value());
    // The prompt is the samplers' history too (penalties and DRY count it), without its
    // media positions, as the reference skips them.
    for (int32_t tok : *t->prompt)
      if (!is_media_placeholder(tok)) (void)t->sampler.accept(tok, false);
  } else {
    t->init_error = "Failed to initialize samplers: " + sampler.status().message();
  }
  t->funnel = StopFunnel(t->params.stop);
  return t;
}

Result<sampling::Sampler> TaskFactory::make_sampler(const SamplingSettings& settings,
                                                    const sampling::GrammarConfig& grammar,
                                                    const ReasoningSettings& reasoning) {
  if (!vocab_) vocab_ = std::make_unique<TokenizerVocab>(tok_);
  auto chain = sampling::make_chain(settings, vocab_.get());
  if (!chain.is_ok()) return chain.status();
  std::unique_ptr<sampling::GrammarSampler> constraint;
  if (grammar.grammar) {
    if (!token_table_) token_table_ = make_token_table(tok_);
    auto made = sampling::GrammarSampler::create(grammar, token_table_, *vocab_);
    if (!made.is_ok()) return made.status();
    constraint = std::move(made.value());
  }
  std::unique_ptr<sampling::ReasoningBudget> budget;
  if (reasoning.active()) {
    sampling::ReasoningBudgetConfig config;
    config.start_tag = reasoning.start_tag;
    config.end_tag = reasoning.end_tag;
    config.budget = reasoning.budget;
    config.forced = tok_.tokenize(reasoning.message + reasoning.end_tag, false, true);
    config.prefix = reasoning.prefix;
    config.end_now = reasoning.end_now;
    budget = std::make_unique<sampling::ReasoningBudget>(std::move(config), *vocab_);
  }
  return sampling::Sampler(std::move(chain.value()), std::move(constraint), std::move(budget));
}

}  // namespace hearth::scheduler::detail
