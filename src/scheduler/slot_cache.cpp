// The host prompt cache seen from the slots (llama-server's prompt_save / prompt_load and
// --cache-idle-slots). The reference creates the cache whenever --cache-ram is not 0, with a
// unified KV cache or without one; the layout only decides whether idle slots are cleared
// once stored (with separate per-slot caches, clearing frees nothing another slot could use).
#include "scheduler/scheduler_impl.h"

namespace hearth::scheduler::detail {

// Stores the slot's state unless the cache already holds it; true when stored.
bool SchedulerImpl::store_in_cache(const Slot& slot) {
  if (!prompt_cache_ || slot.cached.empty() || !prompt_cache_->wants(slot.cached)) return false;
  CachedPrompt entry;
  entry.tokens = slot.cached;
  entry.kv = ctx_->kv_cache().save(slot.id, static_cast<int32_t>(slot.cached.size()));
  entry.min_truncation = ctx_->kv_cache().min_truncation(slot.id);
  if (entry.kv.n_tokens != static_cast<int32_t>(entry.tokens.size())) return false;
  prompt_cache_->insert(std::move(entry));
  return true;
}

// The slot is about to be reused for `p`: its state goes to the cache, and the cached state
// that serves the prompt best (if better than the slot's own) comes back into the slot.
// Returns the prompt tokens the slot can now reuse.
int32_t SchedulerImpl::use_prompt_cache(Slot& slot, const Pending& p) {
  if (p.req.kind != TaskKind::kCompletion) {
    // Embedding tasks evaluate their whole input: the slot's state is only stored.
    if (prompt_cache_ && store_in_cache(slot)) prompt_cache_->update();
    return 0;
  }
  const PlanTask task{*p.prompt, p.req.id_slot, p.req.n_cmpl, p.req.params.cache_prompt};
  const auto reusable = [&] {
    return reusable_prefix(slot.cached, task, ctx_->kv_cache().min_truncation(slot.id));
  };
  if (!prompt_cache_) return reusable();
  store_in_cache(slot);
  if (std::optional<CachedPrompt> best = prompt_cache_->take_best(
          slot.cached, *p.prompt, ctx_->kv_cache().min_truncation(slot.id))) {
    if (ctx_->kv_cache().restore(slot.id, best->kv).is_ok()) {
      slot.cached = std::move(best->tokens);
    } else {
      clear_slot(slot);  // as the reference when a load fails
    }
  }
  prompt_cache_->update();
  return reusable();
}

void SchedulerImpl::cache_idle_slots() {
  if (!prompt_cache_) return;
  for (Slot& s : slots_) {
    if (s.task) continue;
    if (store_in_cache(s)) prompt_cache_->update();
    // With one KV pool shared by all slots, an idle slot's rows only take room from the
    // others once they are safe in the host cache.
    if (config_.kv_unified) clear_slot(s);
  }
}

}  // namespace hearth::scheduler::detail
