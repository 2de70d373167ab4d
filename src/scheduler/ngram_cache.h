// llama-server's ngram-cache drafting (llama.cpp's lookup decoding): tables from an n-gram
// of 1 to 4 tokens to the counts of the tokens that followed it. Three tables are asked in
// turn for each drafted token:
//  - the context table, built from the slot's own tokens (per slot, rebuilt per request);
//  - the dynamic table (-lcd), from earlier generations, with stricter thresholds;
//  - the static table (-lcs), from a large corpus: its 2-gram counts weigh the candidates
//    of the other two, and it drafts alone when they propose nothing.
// A table proposes the most frequent successor of the longest n-gram whose sample is large
// and dominant enough. Drafting stops at the first position nothing is proposed for.
//
// File format (llama.cpp's llama-lookup tools, little-endian): repeated records of an
// n-gram as four int32 tokens (-1 past its length), an int32 count of successors k > 0, and
// k pairs of int32 token and int32 count > 0.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <unordered_map>
#include <vector>

#include "base/status.h"

namespace hearth::scheduler {

constexpr int32_t kNgramCacheMax = 4;    // longest n-gram counted
constexpr int32_t kNgramCacheDraft = 8;  // tokens drafted at most (the reference's fixed 8)

struct Ngram {
  std::array<int32_t, kNgramCacheMax> tokens{-1, -1, -1, -1};
  bool operator==(const Ngram&) const = default;
};

struct NgramHash {
  size_t operator()(const Ngram& g) const;
};

using NgramCounts = std::unordered_map<int32_t, int32_t>;  // successor -> times seen
using NgramCache = std::unordered_map<Ngram, NgramCounts, NgramHash>;

// Counts the successors of the n-grams (1 to 4 tokens) ending before each of the last
// `n_new` tokens of `tokens`.
void ngram_cache_update(NgramCache& cache, std::span<const int32_t> tokens, size_t n_new);

// The draft after `sampled` following `history`; the dynamic and static tables may be
// null (not given).
std::vector<int32_t> ngram_cache_draft(std::span<const int32_t> history, int32_t sampled,
                                       int32_t n_draft, const NgramCache& context,
                                       const NgramCache* dynamic, const NgramCache* corpus);

Result<NgramCache> load_ngram_cache(const std::string& path);
Status save_ngram_cache(const NgramCache& cache, const std::string& path);

// Per slot: the context table and how many of the slot's tokens it has counted.
struct NgramCacheSlot {
  NgramCache context;
  size_t counted = 0;
};

}  // namespace hearth::scheduler
