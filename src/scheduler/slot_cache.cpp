#include "scheduler/slot_cache.h"

#include "base/log.h"

namespace hearth::scheduler::detail {

SlotCache::SlotCache(const SchedulerConfig& config, engine::KvCache& kv)
    : kv_unified_(config.kv_unified), cache_idle_slots_(config.cache_idle_slots), kv_(kv) {
  if (config.cache_ram_mib != 0) {
    cache_ = std::make_unique<PromptCache>(
        PromptCache::limit_from_mib(config.cache_ram_mib),
        static_cast<size_t>(config.n_slots) * static_cast<size_t>(config.n_ctx_slot));
  }
  // The reference's debug lines, word for word: its test suite (test_kv_keep_only_active.py)
  // reads them from the log of a --verbose server.
  if (cache_idle_slots_ && !cache_) {
    log_warn("--cache-idle-slots requires --cache-ram, disabling");
  } else if (cache_idle_slots_) {
    log_debug("idle slots will be saved to prompt cache{}",
              kv_unified_ ? " and cleared upon starting a new task" : " upon starting a new task");
    log_debug("__TEST_TAG_CACHE_IDLE_SLOTS_ENABLED__");
  }
}

// Stores the slot's state unless the cache already holds it; true when stored.
bool SlotCache::store(const Slot& slot) {
  if (!cache_ || slot.cached.empty() || !cache_->wants(slot.cached)) return false;
  CachedPrompt entry;
  entry.tokens = slot.cached;
  entry.kv = kv_.save(slot.id, static_cast<int32_t>(slot.cached.size()));
  entry.min_truncation = kv_.min_truncation(slot.id);
  if (entry.kv.n_tokens != static_cast<int32_t>(entry.tokens.size())) return false;
  cache_->insert(std::move(entry));
  return true;
}

int32_t SlotCache::prepare(Slot& slot, const Pending& p) {
  if (p.req.kind != TaskKind::kCompletion) {
    // Embedding tasks evaluate their whole input: the slot's state is only stored.
    if (cache_ && store(slot)) cache_->update();
    return 0;
  }
  const PlanTask task{*p.prompt, p.req.id_slot, p.req.n_cmpl, p.req.params.cache_prompt,
                      false,     p.req.media};
  const auto reusable = [&] {
    return reusable_prefix(slot.cached, task, kv_.min_truncation(slot.id));
  };
  if (!cache_) return reusable();
  log_debug("updating prompt cache");
  store(slot);
  if (std::optional<CachedPrompt> best =
          cache_->take_best(slot.cached, *p.prompt, kv_.min_truncation(slot.id))) {
    if (kv_.restore(slot.id, best->kv).is_ok()) {
      slot.cached = std::move(best->tokens);
    } else {
      forget(slot, kv_);  // as the reference when a load fails
    }
  }
  cache_->update();
  return reusable();
}

void SlotCache::after_launch(SlotTable& slots) {
  if (!cache_idle_slots_ || !cache_) return;
  for (Slot& s : slots) {
    if (s.task) continue;
    if (store(s)) {
      log_debug("slot {}: __TEST_TAG_CACHE_IDLE_SLOT__", s.id);
      cache_->update();
    }
    // With one KV pool shared by all slots, an idle slot's rows only take room from the
    // others once they are safe in the host cache.
    if (kv_unified_) forget(s, kv_);
  }
}

}  // namespace hearth::scheduler::detail
