#include "scheduler/prompt_cache.h"

#include <algorithm>

#include "scheduler/planner.h"

namespace hearth::scheduler {

uint64_t PromptCache::limit_from_mib(int64_t mib) {
  return mib < 0 ? 0 : static_cast<uint64_t>(mib) * 1024 * 1024;
}

bool PromptCache::wants(std::span<const int32_t> tokens) const {
  return std::none_of(entries_.begin(), entries_.end(), [&](const CachedPrompt& e) {
    return common_prefix(e.tokens, tokens) == tokens.size();
  });
}

void PromptCache::insert(CachedPrompt entry) {
  entries_.remove_if([&](const CachedPrompt& e) {
    return common_prefix(e.tokens, entry.tokens) == e.tokens.size();
  });
  entries_.push_back(std::move(entry));
}

std::optional<CachedPrompt> PromptCache::take_best(std::span<const int32_t> slot_tokens,
                                                   std::span<const int32_t> prompt,
                                                   int32_t slot_min_truncation) {
  if (prompt.empty()) return std::nullopt;
  // The prefix whose rows are there: all of it, or none when cutting back to it would need
  // rows a sliding-window layer released.
  const auto usable = [&](std::span<const int32_t> tokens, int32_t min_truncation) {
    const size_t lcp = common_prefix(tokens, prompt);
    const bool cut_ok = lcp >= tokens.size() || lcp >= static_cast<size_t>(min_truncation);
    return static_cast<float>(cut_ok ? lcp : 0);
  };
  // The reference's float arithmetic: an empty slot (f_keep -1) loses to any entry.
  const float lcp_slot = usable(slot_tokens, slot_min_truncation);
  float f_keep_best =
      slot_tokens.empty() ? -1.0f : lcp_slot / static_cast<float>(slot_tokens.size());
  float sim_best = lcp_slot / static_cast<float>(prompt.size());
  auto best = entries_.end();
  for (auto it = entries_.begin(); it != entries_.end(); ++it) {
    const float lcp = usable(it->tokens, it->min_truncation);
    const float f_keep = lcp / static_cast<float>(std::max<size_t>(it->tokens.size(), 1));
    const float sim = lcp / static_cast<float>(prompt.size());
    if (f_keep < 0.25f) continue;  // do not throw away most of a large state
    if (f_keep_best < f_keep && sim_best < sim) {
      f_keep_best = f_keep;
      sim_best = sim;
      best = it;
    }
  }
  if (best == entries_.end()) return std::nullopt;
  CachedPrompt out = std::move(*best);
  entries_.erase(best);
  return out;
}

void PromptCache::update() {
  if (limit_bytes_ > 0) {
    while (entries_.size() > 1 && size_bytes() > limit_bytes_) entries_.pop_front();
  }
  // The token limit grows to what the byte limit can hold at the current bytes per token.
  const double per_token = std::max(1.0, static_cast<double>(size_bytes()) /
                                             static_cast<double>(std::max<size_t>(1, n_tokens())));
  const size_t limit_tokens =
      limit_bytes_ > 0
          ? std::max(limit_tokens_,
                     static_cast<size_t>(static_cast<double>(limit_bytes_) / per_token))
          : limit_tokens_;
  if (limit_tokens_ > 0) {
    while (entries_.size() > 1 && n_tokens() > limit_tokens) entries_.pop_front();
  }
}

size_t PromptCache::size_bytes() const {
  size_t n = 0;
  for (const CachedPrompt& e : entries_) n += e.bytes();
  return n;
}

size_t PromptCache::n_tokens() const {
  size_t n = 0;
  for (const CachedPrompt& e : entries_) n += e.tokens.size();
  return n;
}

}  // namespace hearth::scheduler
