// draft-simple: a smaller model drafts for every slot at once. Its context holds one
// sequence per slot, kept equal to the slot's tokens lazily: before drafting, each
// sequence is cut back to what it shares with the slot (accepted drafts stay) and the rest
// is fed, all slots in one batch. Then each round feeds every still-drafting slot's last
// token in one call and takes the draft model's most probable next token, as long as its
// probability among the top 10 reaches p_min, up to the slot's budget.
#include <algorithm>
#include <cmath>
#include <utility>

#include "scheduler/media_positions.h"
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

// The media chunk of `media` holding prompt position k, or null.
const MediaChunk* chunk_at(const std::vector<MediaChunk>& media, int32_t k) {
  for (const MediaChunk& c : media)
    if (c.begin <= k && k < c.begin + c.n_tokens) return &c;
  return nullptr;
}

}  // namespace

bool Speculator::draft_takes_media(const RunningTask& t) const {
  if (t.media.empty()) return true;
  const auto E = static_cast<size_t>(draft_ctx_->model().hparams().n_embd_inp());
  const MediaChunk& c = t.media.front();
  return c.embd->size() == static_cast<size_t>(c.n_tokens) * E;
}

// Brings each job's draft sequence to its slot's tokens, media positions as the chunks'
// embedding rows (a non-causal chunk in one call, as in the target); false when the draft
// context failed (every job's draft sequence is then dropped).
bool Speculator::sync_draft_sequences(std::vector<DraftJob>& jobs) {
  engine::Context& dc = *draft_ctx_;
  const auto E = static_cast<size_t>(dc.model().hparams().n_embd_inp());
  const bool mrope = dc.model().hparams().mrope != engine::MultiRope::kNone;
  engine::Batch batch;
  const auto flush = [&] {
    const bool ok = batch.empty() || dc.decode(batch).is_ok();
    batch.clear();
    return ok;
  };
  for (DraftJob& job : jobs) {
    const Slot& s = *job.slot;
    const std::vector<MediaChunk>& media = s.task->media;
    std::vector<int32_t>& draft_cached = state(s).draft_cached;
    const int32_t shared =
        media_boundary(media, static_cast<int32_t>(common_prefix(draft_cached, s.cached)));
    draft_cached.resize(static_cast<size_t>(dc.kv_cache().truncate(s.id, shared)));
    for (size_t k = draft_cached.size(); k < s.cached.size(); ++k) {
      const auto pos = static_cast<int32_t>(k);
      const MediaChunk* c = is_media_placeholder(s.cached[k]) ? chunk_at(media, pos) : nullptr;
      const int32_t chunk_end = c != nullptr ? c->begin + c->n_tokens : 0;
      if (c != nullptr) {
        batch.add_embd(c->embd->data() + static_cast<size_t>(pos - c->begin) * E, pos, s.id, false,
                       c->non_causal ? chunk_end - 1 : -1);
      } else {
        batch.add(s.cached[k], pos, s.id, false);
      }
      if (mrope) batch.set_rope(batch.size() - 1, media_rope_position(media, pos));
      draft_cached.push_back(s.cached[k]);
      const bool in_chunk = c != nullptr && c->non_causal && pos + 1 < chunk_end;
      if (batch.size() >= n_ubatch_ && !in_chunk && !flush()) return false;
    }
  }
  return flush();
}

void Speculator::draft_with_model(std::vector<DraftJob>& jobs) {
  engine::Context& dc = *draft_ctx_;
  const DraftModelParams& p = spec_.draft;
  std::vector<int32_t> next(jobs.size());
  std::vector<bool> active(jobs.size(), true);
  const bool mrope = dc.model().hparams().mrope != engine::MultiRope::kNone;
  for (size_t j = 0; j < jobs.size(); ++j) next[j] = jobs[j].slot->task->pending;
  bool ok = sync_draft_sequences(jobs);
  while (ok) {
    engine::Batch batch;
    std::vector<int32_t> row(jobs.size(), -1);
    for (size_t j = 0; j < jobs.size(); ++j) {
      if (!active[j]) continue;
      const Slot& s = *jobs[j].slot;
      std::vector<int32_t>& draft_cached = state(s).draft_cached;
      const auto pos = static_cast<int32_t>(draft_cached.size());
      batch.add(next[j], pos, s.id, true);
      if (mrope) batch.set_rope(batch.size() - 1, media_rope_position(s.task->media, pos));
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
