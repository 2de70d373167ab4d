// The host prompt cache seen from the slots (llama-server's prompt_save / prompt_load and
// --cache-idle-slots): owns the PromptCache (null with --cache-ram 0) and moves slot states
// between it and the KV cache. The reference creates the cache whenever --cache-ram is not
// 0, with a unified KV cache or without one; the layout only decides whether idle slots are
// cleared once stored (with separate per-slot caches, clearing frees nothing another slot
// could use). Scheduler thread only.
#pragma once

#include <cstdint>
#include <memory>

#include "engine/kv_cache.h"
#include "scheduler/intake.h"
#include "scheduler/prompt_cache.h"
#include "scheduler/slot_table.h"

namespace hearth::scheduler::detail {

class SlotCache {
 public:
  SlotCache(const SchedulerConfig& config, engine::KvCache& kv);

  // The slot is about to be reused for `p`: its state goes to the cache, and the cached
  // state that serves the prompt best (if better than the slot's own) comes back into the
  // slot. Returns the prompt tokens the slot can now reuse.
  int32_t prepare(Slot& slot, const Pending& p);
  // A task was launched: with --cache-idle-slots, the idle slots' states go to the cache.
  void after_launch(SlotTable& slots);

 private:
  bool store(const Slot& slot);

  const bool kv_unified_;
  const bool cache_idle_slots_;
  engine::KvCache& kv_;
  std::unique_ptr<PromptCache> cache_;
};

}  // namespace hearth::scheduler::detail
