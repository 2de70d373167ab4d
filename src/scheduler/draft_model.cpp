// draft-simple: a smaller model drafts for every slot at once. Its context holds one
// sequence per slot, kept equal to the slot's tokens lazily: before drafting, each
// sequence is cut back to what it shares with the slot (accepted drafts stay) and the rest
// is fed, all slots in one batch. Then each round feeds every still-drafting slot's last
// token in one call and takes the draft model's most probable next token, as long as its
// probability among the top 10 reaches p_min, up to the slot's budget.
#include <algorithm>
#include <cmath>
#include <utility>

#include "scheduler/planner.h"
#include "scheduler/speculator.h"

namespace hearth::scheduler::detail {
namespace {

constexpr size_t kTopCandidates = 10;

// The most probable token and its probability after a softmax over the top 10 logits.
std::pair<int32_t, float> best_of(std::span<const float> logits) {
  std::vector<float> top(std::min(kTopCandidates, logits.size()));
  std::partial_sort_copy(logits.begin(), logits.end(), top.begin(), top.end(),
                         std::greater<float>());
  const auto best = std::max_element(logits.begin(), logits.end());
  double sum = 0.0;
  for (float l : top) sum += std::exp(static_cast<double>(l) - static_cast<double>(*best));
  return {static_cast<int32_t>(best - logits.begin()), static_cast<float>(1.0 / sum)};
}

}  // namespace

// Brings each job's draft sequence to its slot's tokens; false when the draft context
// failed (every job's draft sequence is then dropped).
bool Speculator::sync_draft_sequences(std::vector<DraftJob>& jobs) {
  engine::Context& dc = *draft_ctx_;
  engine::Batch batch;
  const auto flush = [&] {
    const bool ok = batch.empty() || dc.decode(batch).is_ok();
    batch.clear();
    return ok;
  };
  for (DraftJob& job : jobs) {
    const Slot& s = *job.slot;
    std::vector<int32_t>& draft_cached = state(s).draft_cached;
    const auto shared = static_cast<int32_t>(common_prefix(draft_cached, s.cached));
    draft_cached.resize(static_cast<size_t>(dc.kv_cache().truncate(s.id, shared)));
    for (size_t k = draft_cached.size(); k < s.cached.size(); ++k) {
      batch.add(s.cached[k], static_cast<int32_t>(k), s.id, false);
      draft_cached.push_back(s.cached[k]);
      if (batch.size() >= n_ubatch_ && !flush()) return false;
    }
  }
  return flush();
}

void Speculator::draft_with_model(std::vector<DraftJob>& jobs) {
  engine::Context& dc = *draft_ctx_;
  const DraftModelParams& p = spec_.draft;
  std::vector<int32_t> next(jobs.size());
  std::vector<bool> active(jobs.size(), true);
  for (size_t j = 0; j < jobs.size(); ++j) next[j] = jobs[j].slot->task->pending;
  bool ok = sync_draft_sequences(jobs);
  while (ok) {
    engine::Batch batch;
    std::vector<int32_t> row(jobs.size(), -1);
    for (size_t j = 0; j < jobs.size(); ++j) {
      if (!active[j]) continue;
      const Slot& s = *jobs[j].slot;
      std::vector<int32_t>& draft_cached = state(s).draft_cached;
      batch.add(next[j], static_cast<int32_t>(draft_cached.size()), s.id, true);
      draft_cached.push_back(next[j]);
      row[j] = batch.size() - 1;
    }
    if (batch.empty()) break;
    ok = dc.decode(batch).is_ok();
    for (size_t j = 0; ok && j < jobs.size(); ++j) {
      if (!active[j]) continue;
      const auto [token, prob] = best_of(dc.logits(row[j]));
      std::vector<int32_t>& draft = jobs[j].slot->task->draft;
      if (prob < p.p_min) {
        active[j] = false;
        continue;
      }
      draft.push_back(token);
      next[j] = token;
      active[j] = static_cast<int32_t>(draft.size()) < jobs[j].budget;
    }
  }
  for (DraftJob& job : jobs) {
    RunningTask& t = *job.slot->task;
    if (!ok) {  // start the draft sequence afresh next time
      dc.kv_cache().clear(job.slot->id);
      state(*job.slot).draft_cached.clear();
    }
    if (!ok || static_cast<int32_t>(t.draft.size()) < std::max(p.n_min, 1)) t.draft.clear();
    if (!t.draft.empty()) t.draft_source = RunningTask::DraftSource::kDraftModel;
  }
}

}  // namespace hearth::scheduler::detail
