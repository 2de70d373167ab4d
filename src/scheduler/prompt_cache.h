// llama-server's host-RAM prompt cache (--cache-ram, --cache-idle-slots): slot states (tokens
// plus their KV rows) kept in host memory so a later prompt can start from one of them
// instead of from the slot's own cache. Entries are kept in the order they were stored; the
// oldest go first when the cache is over its limits, and an entry leaves the cache when it
// is restored into a slot (it comes back at the end when that slot is stored again), so
// eviction drops the least recently used states. Plain data: SlotCache (slot_cache.h)
// copies the rows in and out.
#pragma once

#include <cstddef>
#include <cstdint>
#include <list>
#include <optional>
#include <span>
#include <vector>

#include "engine/kv_cache.h"

namespace hearth::scheduler {

struct CachedPrompt {
  std::vector<int32_t> tokens;
  engine::KvSnapshot kv;
  // The shortest non-empty prefix of `tokens` the rows can serve (KvCache::min_truncation).
  int32_t min_truncation = 0;
  size_t bytes() const { return kv.bytes(); }
};

class PromptCache {
 public:
  // limit_bytes 0: no size limit (--cache-ram -1). limit_tokens: tokens held over all entries
  // (the reference passes the context size), raised to what limit_bytes can hold.
  PromptCache(uint64_t limit_bytes, size_t limit_tokens)
      : limit_bytes_(limit_bytes), limit_tokens_(limit_tokens) {}

  // Bytes for --cache-ram N MiB (N < 0: unlimited, 0).
  static uint64_t limit_from_mib(int64_t mib);

  // False when an entry already holds `tokens` as its prefix (the reference skips the save).
  bool wants(std::span<const int32_t> tokens) const;
  // Stores a state at the end, first dropping the entries it contains. Call wants() first.
  void insert(CachedPrompt entry);
  // Takes out the entry that beats the slot's own cache for `prompt` on both the share of
  // the entry kept and the share of the prompt covered (entries that would keep under a
  // quarter of themselves never qualify); nullopt when none does.
  // A prefix shorter than an entry's (or the slot's) min_truncation counts as none shared.
  std::optional<CachedPrompt> take_best(std::span<const int32_t> slot_tokens,
                                        std::span<const int32_t> prompt,
                                        int32_t slot_min_truncation = 0);
  // Drops the oldest entries while over the byte or token limit, keeping at least one.
  void update();

  size_t size_bytes() const;
  size_t n_tokens() const;
  const std::list<CachedPrompt>& entries() const { return entries_; }

 private:
  uint64_t limit_bytes_;
  size_t limit_tokens_;
  std::list<CachedPrompt> entries_;  // oldest first
};

}  // namespace hearth::scheduler
