#include "scheduler/ngram_mod.h"

#include <algorithm>

namespace hearth::scheduler {

NgramModTable::NgramModTable(int32_t n_match, size_t n_entries)
    : n_match_(n_match), entries_(std::max<size_t>(n_entries, 1), kEmpty) {}

// A polynomial hash over the tokens (Knuth's MMIX multiplier), as the reference hashes.
size_t NgramModTable::index(const int32_t* tokens) const {
  uint64_t h = 0;
  for (int32_t i = 0; i < n_match_; ++i)
    h = h * 6364136223846793005ULL + static_cast<uint64_t>(static_cast<int64_t>(tokens[i]));
  return static_cast<size_t>(h % entries_.size());
}

void NgramModTable::add(const int32_t* tokens) {
  int32_t& e = entries_[index(tokens)];
  if (e == kEmpty) ++used_;
  e = tokens[n_match_];
}

int32_t NgramModTable::get(const int32_t* tokens) const {
  return entries_[index(tokens)];
}

void NgramModTable::reset() {
  std::fill(entries_.begin(), entries_.end(), kEmpty);
  used_ = 0;
}

void ngram_mod_begin(NgramModTable& table, NgramModSlot& slot, std::span<const int32_t> prompt) {
  slot.added_until = 0;
  slot.last_draft = 0;
  const auto n = static_cast<size_t>(table.n_match());
  if (prompt.size() < n) return;
  for (size_t i = 0; i + n < prompt.size(); ++i) table.add(prompt.data() + i);
  slot.added_until = prompt.size() - n;
  if (table.occupancy() > 0.25) table.reset();
}

std::vector<int32_t> ngram_mod_draft(NgramModTable& table, NgramModSlot& slot,
                                     std::span<const int32_t> history, int32_t sampled,
                                     const NgramModParams& params) {
  slot.last_draft = 0;
  const auto n = static_cast<size_t>(table.n_match());
  const size_t len = history.size();
  if (len < n || params.n_max <= 0) return {};
  if (slot.added_until + 32 < len) {
    for (size_t i = slot.added_until; i + n < len; ++i) table.add(history.data() + i);
    slot.added_until = len - n;
  }
  // The key window: the last n - 1 tokens and the sampled one, then each drafted token.
  std::vector<int32_t> chain(history.end() - static_cast<std::ptrdiff_t>(n - 1), history.end());
  chain.push_back(sampled);
  for (int32_t i = 0; i < params.n_max; ++i) {
    const int32_t next = table.get(chain.data() + i);
    if (next == NgramModTable::kEmpty) {
      if (i < params.n_min) return {};
      break;
    }
    chain.push_back(next);
  }
  std::vector<int32_t> draft(chain.begin() + static_cast<std::ptrdiff_t>(n), chain.end());
  slot.last_draft = static_cast<int32_t>(draft.size());
  return draft;
}

void ngram_mod_accept(NgramModTable& table, NgramModSlot& slot, int32_t accepted) {
  if (slot.last_draft <= 0) return;
  if (static_cast<double>(accepted) / slot.last_draft < 0.25) {
    if (++slot.low_rounds >= 5) {
      table.reset();
      slot.low_rounds = 0;
      slot.added_until = 0;
    }
  } else {
    slot.low_rounds = 0;
  }
}

}  // namespace hearth::scheduler
