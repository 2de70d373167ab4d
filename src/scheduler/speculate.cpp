// Speculative decoding in the scheduler's step. A generating slot appends a draft after its
// pending token; the forward pass computes logits for every drafted position; then each
// row is sampled with the request's own sampler chain in order, and the draft is accepted
// while the sampled token equals the drafted one (llama-server's rule). The first mismatch
// is the next pending token, and the KV rows of the rejected tokens are dropped. Each token
// is sampled exactly as plain decoding samples it (same chain, same random draws, and
// logits that do not depend on what shares the step), so the output is the same, greedy or
// seeded; only the number of steps changes.
#include <algorithm>

#include "scheduler/speculator.h"

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

Speculator::Speculator(const SchedulerConfig& config, int32_t n_vocab, engine::KvCache& target,
                       std::unique_ptr<engine::Context> draft_ctx)
    : spec_(config.spec),
      n_ctx_slot_(config.n_ctx_slot),
      n_ubatch_(config.n_ubatch),
      n_vocab_(n_vocab),
      target_(target),
      slots_(static_cast<size_t>(config.n_slots)),
      draft_ctx_(std::move(draft_ctx)) {
  for (SlotState& s : slots_) {
    if (spec_.ngram_map_k) s.map_k = std::make_unique<NgramMap>(spec_.ngram_map_k_params, false);
    if (spec_.ngram_map_k4v)
      s.map_k4v = std::make_unique<NgramMap>(spec_.ngram_map_k4v_params, true);
  }
  // The reference's table size: 4 Mi entries (16 MiB), shared by all slots.
  if (spec_.ngram_mod)
    ngram_mod_ = std::make_unique<NgramModTable>(spec_.ngram_mod_params.n_match, size_t{4} << 20);
}

void Speculator::prepare(const StepPlan& plan, SlotTable& slots) {
  std::vector<DraftJob> jobs;
  for (Slot& s : slots) {
    if (!s.task) continue;
    s.task->draft.clear();
    if (!plan.decode[static_cast<size_t>(s.id)] || !s.task->prompt_done || !s.task->has_next_token)
      continue;
    const int32_t model_budget = ngram_draft(s);
    if (model_budget > 0) jobs.push_back({&s, model_budget});
  }
  if (!jobs.empty()) draft_with_model(jobs);
  budget(plan, slots);
}

// Each slot's acceptance rate for its draft's source against the measured cost of a row.
void Speculator::budget(const StepPlan& plan, SlotTable& slots) {
  std::vector<Slot*> drafting;
  std::vector<DraftOffer> offers;
  int32_t decoding = 0;
  for (Slot& s : slots) {
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

// The n-gram sources' draft for the slot within the reference's budget (the slot's context
// less two, and with a finite n_predict the tokens it may still generate less one), no
// longer than a forward call (-ub) or the length adapt_draft_length() settled on. Returns
// the budget left to the draft model: non-zero when it should try.
int32_t Speculator::ngram_draft(Slot& slot) {
  RunningTask& t = *slot.task;
  t.draft_source = RunningTask::DraftSource::kNone;
  if (!spec_.enabled() || t.kind != TaskKind::kCompletion) return 0;
  if (t.draft_skip > 0) {
    --t.draft_skip;
    return 0;
  }
  if (t.draft_cap < 0) t.draft_cap = spec_.max_draft();
  int64_t budget = int64_t{n_ctx_slot_} - static_cast<int64_t>(slot.cached.size()) - 2;
  if (t.params.n_predict >= 0)
    budget = std::min<int64_t>(budget, int64_t{t.params.n_predict} - t.n_decoded - 1);
  budget = std::min<int64_t>({budget, n_ubatch_ - 1, t.draft_cap});
  if (budget <= 0) return 0;
  std::vector<int32_t> draft = draft_from_ngrams(slot);
  if (static_cast<int64_t>(draft.size()) > budget) draft.resize(static_cast<size_t>(budget));
  t.draft = std::move(draft);
  if (!t.draft.empty() || !draft_ctx_ || !draft_takes_media(t)) return 0;
  return static_cast<int32_t>(std::min<int64_t>(budget, spec_.draft.n_max));
}

// The n-gram sources in the reference's order of preference; the first draft wins. A
// draft stops before any token outside the vocabulary (a lookup cache file may hold them).
std::vector<int32_t> Speculator::draft_from_ngrams(Slot& slot) {
  RunningTask& t = *slot.task;
  SlotState& st = state(slot);
  using enum RunningTask::DraftSource;
  const auto found = [&](std::vector<int32_t> d, RunningTask::DraftSource source) {
    if (!d.empty()) t.draft_source = source;
    return d;
  };
  std::vector<int32_t> draft;
  if (spec_.ngram_simple)
    draft =
        found(draft_ngram_simple(slot.cached, t.pending, spec_.ngram_simple_params), kNgramSimple);
  if (draft.empty() && st.map_k) draft = found(st.map_k->draft(slot.cached, t.pending), kNgramMapK);
  if (draft.empty() && st.map_k4v)
    draft = found(st.map_k4v->draft(slot.cached, t.pending), kNgramMapK4v);
  if (draft.empty() && ngram_mod_)
    draft = found(
        ngram_mod_draft(*ngram_mod_, st.ngram_mod, slot.cached, t.pending, spec_.ngram_mod_params),
        kNgramMod);
  if (draft.empty() && spec_.ngram_cache) draft = found(draft_from_ngram_cache(slot), kNgramCache);
  const auto bad = std::find_if(draft.begin(), draft.end(),
                                [&](int32_t tok) { return tok < 0 || tok >= n_vocab_; });
  draft.erase(bad, draft.end());
  return draft;
}

// The context table counts the slot's tokens and the pending one as they arrive: the
// tokens not counted yet, after the longest n-gram that can precede them.
std::vector<int32_t> Speculator::draft_from_ngram_cache(Slot& slot) {
  NgramCacheSlot& nc = state(slot).ngram_cache;
  const int32_t pending = slot.task->pending;
  const size_t total = slot.cached.size() + 1;
  const size_t from = std::min(nc.counted, total);
  const size_t context = std::min<size_t>(from, kNgramCacheMax);
  std::vector<int32_t> tail(slot.cached.begin() + static_cast<ptrdiff_t>(from - context),
                            slot.cached.end());
  tail.push_back(pending);
  ngram_cache_update(nc.context, tail, total - from);
  nc.counted = total;
  return ngram_cache_draft(slot.cached, pending, kNgramCacheDraft, nc.context,
                           spec_.lookup_dynamic.get(), spec_.lookup_static.get());
}

void Speculator::begin(const Slot& slot) {
  if (!slot.task || slot.task->kind != TaskKind::kCompletion) return;
  SlotState& st = state(slot);
  if (ngram_mod_) ngram_mod_begin(*ngram_mod_, st.ngram_mod, slot.cached);
  if (st.map_k) st.map_k->begin(slot.cached);
  if (st.map_k4v) st.map_k4v->begin(slot.cached);
  st.ngram_cache.context.clear();
  st.ngram_cache.counted = 0;
}

void Speculator::verify(Slot& slot, size_t at, const SampleRow& sample) {
  if (slot.task) {
    RunningTask& t = *slot.task;
    const std::vector<int32_t> draft = std::move(t.draft);
    t.draft.clear();
    const auto drafted = static_cast<int32_t>(draft.size());
    t.n_draft += drafted;
    if (drafted > 0) ++t.n_draft_steps;
    const RunningTask::DraftSource source = t.draft_source;
    int32_t accepted = 0;
    sample(slot, static_cast<int32_t>(at));
    for (size_t k = 0; k < draft.size(); ++k) {
      // Sampling releases the slot once its request ends: later rows are not used.
      if (!slot.task || !slot.task->has_next_token || slot.task->pending != draft[k]) break;
      RunningTask& running = *slot.task;
      ++running.n_draft_accepted;
      ++accepted;
      if (running.n_accepted_per_pos.size() < draft.size())
        running.n_accepted_per_pos.resize(draft.size(), 0);
      ++running.n_accepted_per_pos[k];
      slot.cached.push_back(draft[k]);
      sample(slot, static_cast<int32_t>(at + 1 + k));
    }
    learn(slot, source, drafted, accepted);
  }
  // The rows of rejected (or unused) draft tokens leave the cache. The cut is at most one
  // draft long, which the KV cache's window slack covers.
  const auto kept = static_cast<int32_t>(slot.cached.size());
  if (target_.truncate(slot.id, kept) != kept) forget(slot, target_);
}

// What a verified draft teaches: the task's draft length and per-source record (while it
// runs), and the sources that track their own acceptance.
void Speculator::learn(Slot& slot, RunningTask::DraftSource source, int32_t drafted,
                       int32_t accepted) {
  if (slot.task) {
    adapt_draft_length(*slot.task, drafted, accepted, spec_.max_draft());
    const auto at_source = static_cast<size_t>(source);
    slot.task->source_accepted[at_source] += accepted;
    if (accepted < drafted) ++slot.task->source_rejections[at_source];
    if (drafted > 0) ++slot.task->source_drafts[at_source];
  }
  SlotState& st = state(slot);
  if (source == RunningTask::DraftSource::kNgramMod)
    ngram_mod_accept(*ngram_mod_, st.ngram_mod, accepted);
  if (source == RunningTask::DraftSource::kNgramMapK) st.map_k->accept(drafted, accepted);
  if (source == RunningTask::DraftSource::kNgramMapK4v) st.map_k4v->accept(drafted, accepted);
}

}  // namespace hearth::scheduler::detail
