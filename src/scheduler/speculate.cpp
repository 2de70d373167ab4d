// Speculative decoding in the scheduler's step. A generating slot appends a draft after its
// pending token; the forward pass computes logits for every drafted position; then each
// row is sampled with the request's own sampler chain in order, and the draft is accepted
// while the sampled token equals the drafted one (llama-server's rule). The first mismatch
// is the next pending token, and the KV rows of the rejected tokens are dropped. Each token
// is sampled exactly as plain decoding samples it (same chain, same random draws, and
// logits that do not depend on what shares the step), so the output is the same, greedy or
// seeded; only the number of steps changes.
#include <algorithm>

#include "scheduler/scheduler_impl.h"

namespace hearth::scheduler::detail {

namespace {

// Misses in a row after which drafting pauses, and the longest pause (steps).
constexpr int32_t kMissesBeforePause = 2;
constexpr int32_t kLongestPause = 64;
// Drafts of a source verified (one row at least) before the budget judges it by its record,
// and after that one probe row once that many of its drafts in a row got no rows, so a
// source whose text has started to repeat is noticed again.
constexpr int32_t kDraftsBeforeBudget = 2;
constexpr int32_t kProbeEvery = 16;

bool probe(const RunningTask& t, size_t source) {
  return t.source_drafts[source] < kDraftsBeforeBudget || t.drafts_starved >= kProbeEvery;
}

// Adapts the slot's draft length to what its drafts achieve: a draft accepted whole may
// double, a partly accepted one is trimmed to what was accepted plus one, and drafts that
// keep failing pause drafting for a number of steps that doubles with each further miss.
// Verifying costs a step's rows, so drafting that does not pay stops costing soon.
void adapt_draft_length(RunningTask& t, int32_t drafted, int32_t accepted, int32_t longest) {
  if (drafted == 0) return;
  if (accepted == drafted) {
    t.draft_cap = std::min(longest, std::max(t.draft_cap, 1) * 2);
    t.draft_misses = 0;
  } else if (accepted == 0) {
    t.draft_cap = std::max(1, t.draft_cap / 2);
    if (++t.draft_misses >= kMissesBeforePause)
      t.draft_skip = std::min(kLongestPause, 1 << std::min(t.draft_misses - 1, 6));
  } else {
    t.draft_cap = accepted + 1;
    t.draft_misses = 0;
  }
}

}  // namespace

// Drafts every generating slot's next tokens before the step is collected: the n-gram
// sources per slot, then the draft model for the slots they left without a draft, batched.
void SchedulerImpl::prepare_drafts(const StepPlan& plan) {
  std::vector<DraftJob> jobs;
  for (Slot& s : slots_) {
    if (!s.task) continue;
    s.task->draft.clear();
    if (!plan.decode[static_cast<size_t>(s.id)] || !s.task->prompt_done || !s.task->has_next_token)
      continue;
    const int32_t model_budget = ngram_draft(s);
    if (model_budget > 0) jobs.push_back({&s, model_budget});
  }
  if (!jobs.empty()) draft_with_model(jobs);
  budget_drafts(plan);
}

// Cuts the drafts to the rows worth verifying in this step (draft_budget.h): each slot's
// acceptance rate for its draft's source against the measured cost of a row.
void SchedulerImpl::budget_drafts(const StepPlan& plan) {
  std::vector<Slot*> drafting;
  std::vector<DraftOffer> offers;
  int32_t decoding = 0;
  for (Slot& s : slots_) {
    if (!s.task || !plan.decode[static_cast<size_t>(s.id)]) continue;
    ++decoding;
    if (s.task->draft.empty()) continue;
    drafting.push_back(&s);
    const auto source = static_cast<size_t>(s.task->draft_source);
    offers.push_back({s.task->acceptance_rate(s.task->draft_source),
                      static_cast<int32_t>(s.task->draft.size()), probe(*s.task, source) ? 1 : 0});
  }
  if (offers.empty()) return;
  const std::vector<int32_t> take =
      allocate_draft_rows(offers, std::max(plan.n_tokens, decoding), decoding, step_cost_);
  for (size_t i = 0; i < drafting.size(); ++i) {
    RunningTask& t = *drafting[i]->task;
    t.draft.resize(static_cast<size_t>(take[i]));
    t.drafts_starved = take[i] == 0 ? t.drafts_starved + 1 : 0;
  }
}

void SchedulerImpl::append_draft(const Slot& slot, std::vector<StepToken>& tokens) const {
  for (int32_t token : slot.task->draft) tokens.push_back({slot.id, token, true, false, true});
}

// The n-gram sources' draft for the slot within the reference's budget (the slot's context
// less two, and with a finite n_predict the tokens it may still generate less one), no
// longer than a forward call (-ub) or the length adapt_draft_length() settled on. Returns
// the budget left to the draft model: non-zero when it should try.
int32_t SchedulerImpl::ngram_draft(Slot& slot) {
  RunningTask& t = *slot.task;
  t.draft_source = RunningTask::DraftSource::kNone;
  if (!config_.spec.enabled() || t.kind != TaskKind::kCompletion) return 0;
  if (t.draft_skip > 0) {
    --t.draft_skip;
    return 0;
  }
  if (t.draft_cap < 0) t.draft_cap = config_.spec.max_draft();
  int64_t budget = int64_t{config_.n_ctx_slot} - static_cast<int64_t>(slot.cached.size()) - 2;
  if (t.params.n_predict >= 0)
    budget = std::min<int64_t>(budget, int64_t{t.params.n_predict} - t.n_decoded - 1);
  budget = std::min<int64_t>({budget, config_.n_ubatch - 1, t.draft_cap});
  if (budget <= 0) return 0;
  std::vector<int32_t> draft = draft_from_ngrams(slot);
  if (static_cast<int64_t>(draft.size()) > budget) draft.resize(static_cast<size_t>(budget));
  t.draft = std::move(draft);
  if (!t.draft.empty() || !draft_ctx_) return 0;
  return static_cast<int32_t>(std::min<int64_t>(budget, config_.spec.draft.n_max));
}

// The n-gram sources in the reference's order of preference; the first draft wins. A
// draft stops before any token outside the vocabulary (a lookup cache file may hold them).
std::vector<int32_t> SchedulerImpl::draft_from_ngrams(Slot& slot) {
  RunningTask& t = *slot.task;
  using enum RunningTask::DraftSource;
  const auto found = [&](std::vector<int32_t> d, RunningTask::DraftSource source) {
    if (!d.empty()) t.draft_source = source;
    return d;
  };
  std::vector<int32_t> draft;
  if (config_.spec.ngram_simple)
    draft = found(draft_ngram_simple(slot.cached, t.pending, config_.spec.ngram_simple_params),
                  kNgramSimple);
  if (draft.empty() && slot.map_k)
    draft = found(slot.map_k->draft(slot.cached, t.pending), kNgramMapK);
  if (draft.empty() && slot.map_k4v)
    draft = found(slot.map_k4v->draft(slot.cached, t.pending), kNgramMapK4v);
  if (draft.empty() && ngram_mod_)
    draft = found(ngram_mod_draft(*ngram_mod_, slot.ngram_mod, slot.cached, t.pending,
                                  config_.spec.ngram_mod_params),
                  kNgramMod);
  if (draft.empty() && config_.spec.ngram_cache) {
    // The context table counts the slot's tokens and the pending one as they arrive: the
    // tokens not counted yet, after the longest n-gram that can precede them.
    NgramCacheSlot& nc = slot.ngram_cache;
    const size_t total = slot.cached.size() + 1;
    const size_t from = std::min(nc.counted, total);
    const size_t context = std::min<size_t>(from, kNgramCacheMax);
    std::vector<int32_t> tail(slot.cached.begin() + static_cast<ptrdiff_t>(from - context),
                              slot.cached.end());
    tail.push_back(t.pending);
    ngram_cache_update(nc.context, tail, total - from);
    nc.counted = total;
    draft = found(
        ngram_cache_draft(slot.cached, t.pending, kNgramCacheDraft, nc.context,
                          config_.spec.lookup_dynamic.get(), config_.spec.lookup_static.get()),
        kNgramCache);
  }
  const int32_t n_vocab = model_->hparams().n_vocab;
  const auto bad = std::find_if(draft.begin(), draft.end(),
                                [&](int32_t tok) { return tok < 0 || tok >= n_vocab; });
  draft.erase(bad, draft.end());
  return draft;
}

// The prompt is evaluated: the sources that learn from it see it.
void SchedulerImpl::begin_drafting(Slot& slot) {
  if (!slot.task || slot.task->kind != TaskKind::kCompletion) return;
  if (ngram_mod_) ngram_mod_begin(*ngram_mod_, slot.ngram_mod, slot.cached);
  if (slot.map_k) slot.map_k->begin(slot.cached);
  if (slot.map_k4v) slot.map_k4v->begin(slot.cached);
  slot.ngram_cache.context.clear();
  slot.ngram_cache.counted = 0;
}

// Row `at` of the forward call holds the slot's pending token; the rows of its draft
// (t.draft) follow.
void SchedulerImpl::verify_draft(Slot& slot, size_t at) {
  if (slot.task) {
    RunningTask& t = *slot.task;
    const std::vector<int32_t> draft = std::move(t.draft);
    t.draft.clear();
    const auto drafted = static_cast<int32_t>(draft.size());
    t.n_draft += drafted;
    if (drafted > 0) ++t.n_draft_steps;
    const RunningTask::DraftSource source = t.draft_source;
    int32_t accepted = 0;
    sample_into(slot, ctx_->logits(static_cast<int32_t>(at)));
    for (size_t k = 0; k < draft.size(); ++k) {
      // sample_into releases the slot once its request ends: later rows are not used.
      if (!slot.task || !slot.task->has_next_token || slot.task->pending != draft[k]) break;
      RunningTask& running = *slot.task;
      ++running.n_draft_accepted;
      ++accepted;
      if (running.n_accepted_per_pos.size() < draft.size())
        running.n_accepted_per_pos.resize(draft.size(), 0);
      ++running.n_accepted_per_pos[k];
      slot.cached.push_back(draft[k]);
      sample_into(slot, ctx_->logits(static_cast<int32_t>(at + 1 + k)));
    }
    if (slot.task) {
      adapt_draft_length(*slot.task, drafted, accepted, config_.spec.max_draft());
      const auto at_source = static_cast<size_t>(source);
      slot.task->source_accepted[at_source] += accepted;
      if (accepted < drafted) ++slot.task->source_rejections[at_source];
      if (drafted > 0) ++slot.task->source_drafts[at_source];
    }
    if (source == RunningTask::DraftSource::kNgramMod)
      ngram_mod_accept(*ngram_mod_, slot.ngram_mod, accepted);
    if (source == RunningTask::DraftSource::kNgramMapK) slot.map_k->accept(drafted, accepted);
    if (source == RunningTask::DraftSource::kNgramMapK4v) slot.map_k4v->accept(drafted, accepted);
  }
  // The rows of rejected (or unused) draft tokens leave the cache. The cut is at most one
  // draft long, which the KV cache's window slack covers.
  const auto kept = static_cast<int32_t>(slot.cached.size());
  if (ctx_->kv_cache().truncate(slot.id, kept) != kept) {
    ctx_->kv_cache().clear(slot.id);
    slot.cached.clear();
  }
}

// Drafts are optional: when a shared KV pool cannot hold them, the chunk runs without them
// (its slots' drafts count as not made). False when the chunk had none.
bool SchedulerImpl::drop_drafts(std::vector<StepToken>& chunk) {
  bool dropped = false;
  for (const StepToken& t : chunk) {
    Slot& s = slots_[static_cast<size_t>(t.slot)];
    if (t.draft && s.task) s.task->draft.clear();
    dropped = dropped || t.draft;
  }
  std::erase_if(chunk, [](const StepToken& t) { return t.draft; });
  return dropped;
}

void SchedulerImpl::account_drafts(const RunningTask& t) {
  metrics_.n_draft_tokens += static_cast<uint64_t>(t.n_draft);
  metrics_.n_draft_accepted += static_cast<uint64_t>(t.n_draft_accepted);
  metrics_.n_draft_steps += static_cast<uint64_t>(t.n_draft_steps);
  if (metrics_.n_accepted_per_pos.size() < t.n_accepted_per_pos.size())
    metrics_.n_accepted_per_pos.resize(t.n_accepted_per_pos.size(), 0);
  for (size_t i = 0; i < t.n_accepted_per_pos.size(); ++i)
    metrics_.n_accepted_per_pos[i] += static_cast<uint64_t>(t.n_accepted_per_pos[i]);
}

}  // namespace hearth::scheduler::detail
