#include "scheduler/planner.h"

#include <algorithm>
#include <numeric>

namespace hearth::scheduler {

size_t common_prefix(std::span<const int32_t> a, std::span<const int32_t> b) {
  const size_t n = std::min(a.size(), b.size());
  size_t i = 0;
  while (i < n && a[i] == b[i]) ++i;
  return i;
}

int32_t media_boundary(std::span<const MediaChunk> media, int32_t n) {
  for (const MediaChunk& c : media) {
    if (c.begin < n && n < c.begin + c.n_tokens) return c.begin;
    if (c.begin >= n) break;
  }
  return n;
}

int32_t reusable_prefix(std::span<const int32_t> cached, const PlanTask& task,
                        int32_t min_truncation) {
  if (!task.cache_prompt || task.prompt.empty()) return 0;
  const auto lcp = static_cast<int32_t>(common_prefix(cached, task.prompt));
  const int32_t n =
      media_boundary(task.media, std::min(lcp, static_cast<int32_t>(task.prompt.size()) - 1));
  const bool keeps_all = n >= static_cast<int32_t>(cached.size());
  return keeps_all || n >= min_truncation ? n : 0;
}

namespace {

bool is_free(const PlanInput& in, const std::vector<bool>& taken, size_t i) {
  return !in.slots[i].busy && !taken[i];
}

int32_t select_by_similarity(const PlanInput& in, const PlanTask& task,
                             const std::vector<bool>& taken) {
  if (in.similarity == 0.0f || task.prompt.empty() || task.id_slot < -1) return -1;
  int32_t best = -1;
  float best_sim = 0.0f;
  for (size_t i = 0; i < in.slots.size(); ++i) {
    if (!is_free(in, taken, i) || in.slots[i].cached.empty()) continue;
    const float sim = static_cast<float>(common_prefix(in.slots[i].cached, task.prompt)) /
                      static_cast<float>(task.prompt.size());
    if (sim > best_sim && sim > in.similarity) {
      best_sim = sim;
      best = static_cast<int32_t>(i);
    }
  }
  return best;
}

int32_t select_lru(const PlanInput& in, const std::vector<bool>& taken) {
  int32_t best = -1;
  for (size_t i = 0; i < in.slots.size(); ++i) {
    if (!is_free(in, taken, i)) continue;
    if (best < 0 || in.slots[i].t_last_used <= in.slots[static_cast<size_t>(best)].t_last_used)
      best = static_cast<int32_t>(i);
  }
  return best;
}

// Children take the first free slots in id order, as llama-server's get_free_slots().
bool pick_children(const PlanInput& in, int32_t n, const std::vector<bool>& taken,
                   std::vector<int32_t>& out) {
  for (size_t i = 0; i < in.slots.size() && static_cast<int32_t>(out.size()) < n; ++i)
    if (is_free(in, taken, i)) out.push_back(static_cast<int32_t>(i));
  return static_cast<int32_t>(out.size()) == n;
}

// What a slot evaluates in this step: its prompt left (prompt_at onwards) and media chunks.
struct SlotPrompt {
  int32_t left = 0;
  int32_t at = 0;
  std::span<const MediaChunk> media;
  bool whole = false;
};

// Prompt tokens of `p` for a step with `room` rows left, keeping media chunks whole (see
// plan_step()); `alone`: no other prompt tokens are in the step yet.
int32_t prompt_share(const SlotPrompt& p, int32_t room, bool alone) {
  const int32_t want = std::min(room, p.left);
  const int32_t end = media_boundary(p.media, p.at + want);
  if (end > p.at) return end - p.at;
  if (want == 0 || !alone) return 0;
  // A chunk starts here and does not fit: it goes whole.
  for (const MediaChunk& c : p.media)
    if (c.begin <= p.at && p.at < c.begin + c.n_tokens) return c.begin + c.n_tokens - p.at;
  return want;
}

void fill_budget(const PlanInput& in, StepPlan& plan, const std::vector<SlotPrompt>& prompts,
                 const std::vector<int64_t>& started) {
  const size_t n = in.slots.size();
  for (size_t i = 0; i < n; ++i) {
    if (in.slots[i].generating) {
      plan.decode[i] = true;
      ++plan.n_tokens;
    }
  }
  if (!in.cont_batching && plan.n_tokens > 0) return;
  std::vector<size_t> order(n);
  std::iota(order.begin(), order.end(), size_t{0});
  std::stable_sort(order.begin(), order.end(),
                   [&](size_t a, size_t b) { return started[a] < started[b]; });
  bool alone = true;  // no prompt tokens in the step yet
  for (size_t i : order) {
    const int32_t room = in.n_batch - plan.n_tokens;
    if (room <= 0) break;
    const SlotPrompt& p = prompts[i];
    if (p.left <= 0) continue;
    if (p.whole && p.left > room) continue;
    plan.prompt_tokens[i] = prompt_share(p, room, alone);
    plan.n_tokens += plan.prompt_tokens[i];
    alone = alone && plan.prompt_tokens[i] == 0;
  }
}

}  // namespace

namespace {

// select_slot(), also telling whether the reference would update the prompt cache.
int32_t choose_slot(const PlanInput& in, const PlanTask& task, const std::vector<bool>& taken,
                    bool& update_cache) {
  update_cache = false;
  const auto n_slots = static_cast<int32_t>(in.slots.size());
  if (n_slots == 0) return -1;
  if (task.id_slot >= 0) {
    const int32_t pinned = task.id_slot % n_slots;
    return is_free(in, taken, static_cast<size_t>(pinned)) ? pinned : -1;
  }
  const int32_t by_sim = select_by_similarity(in, task, taken);
  if (by_sim >= 0) {
    // About to lose most of the slot's cache: the reference stores it first.
    const PlanSlot& s = in.slots[static_cast<size_t>(by_sim)];
    const float f_keep = static_cast<float>(common_prefix(s.cached, task.prompt)) /
                         static_cast<float>(s.cached.size());
    update_cache = f_keep < 0.5f;
    return by_sim;
  }
  const int32_t lru = select_lru(in, taken);
  update_cache = lru >= 0;
  return lru;
}

}  // namespace

int32_t select_slot(const PlanInput& in, const PlanTask& task, const std::vector<bool>& taken) {
  bool update_cache = false;
  return choose_slot(in, task, taken, update_cache);
}

StepPlan plan_step(const PlanInput& in) {
  const size_t n = in.slots.size();
  StepPlan plan;
  plan.prompt_tokens.assign(n, 0);
  plan.decode.assign(n, false);
  std::vector<bool> taken(n, false);
  std::vector<SlotPrompt> prompts(n);
  std::vector<int64_t> started(n, 0);
  int64_t next_start = 0;
  for (size_t i = 0; i < n; ++i) {
    const PlanSlot& s = in.slots[i];
    prompts[i] = {s.busy ? s.prompt_left : 0, s.prompt_at, s.media, s.whole_prompt};
    started[i] = in.slots[i].started;
    next_start = std::max(next_start, in.slots[i].started + 1);
  }
  for (size_t t = 0; t < in.queue.size(); ++t) {
    const PlanTask& task = in.queue[t];
    bool update_cache = false;
    const int32_t slot = choose_slot(in, task, taken, update_cache);
    if (slot < 0) continue;
    taken[static_cast<size_t>(slot)] = true;
    Admission adm{t, slot, {}, 0, update_cache};
    if (!pick_children(in, std::max(task.n_cmpl, 1) - 1, taken, adm.child_slots)) {
      taken[static_cast<size_t>(slot)] = false;  // waits until enough slots are free
      continue;
    }
    for (int32_t c : adm.child_slots) taken[static_cast<size_t>(c)] = true;
    const PlanSlot& chosen = in.slots[static_cast<size_t>(slot)];
    adm.n_past = reusable_prefix(chosen.cached, task, chosen.min_truncation);
    prompts[static_cast<size_t>(slot)] = {static_cast<int32_t>(task.prompt.size()) - adm.n_past,
                                          adm.n_past, task.media, task.whole_prompt};
    started[static_cast<size_t>(slot)] = next_start++;
    plan.admitted.push_back(std::move(adm));
  }
  fill_budget(in, plan, prompts, started);
  return plan;
}

}  // namespace hearth::scheduler
