#include "scheduler/ngram_cache.h"

#include <algorithm>
#include <cstring>
#include <fstream>
#include <iterator>

#include <fmt/format.h>

namespace hearth::scheduler {

namespace {

// Thresholds per n-gram length (1 to 4 tokens): the least sample size and the least share
// (percent) of the most frequent successor. Context and static tables use the lax ones,
// the dynamic table the strict ones.
struct Thresholds {
  std::array<int32_t, kNgramCacheMax> min_sample;
  std::array<int32_t, kNgramCacheMax> min_percent;
};
constexpr Thresholds kLax = {{2, 2, 1, 1}, {66, 50, 50, 50}};
constexpr Thresholds kStrict = {{4, 3, 2, 2}, {75, 66, 66, 66}};
constexpr int32_t kStaticLength = 2;  // the static table is asked with 2-grams

// The n-gram of the `length` tokens ending the sequence.
Ngram tail(const std::vector<int32_t>& seq, int32_t length) {
  Ngram g;
  const size_t from = seq.size() - static_cast<size_t>(length);
  std::copy(seq.begin() + static_cast<ptrdiff_t>(from), seq.end(), g.tokens.begin());
  return g;
}

// The corpus table alone: its most frequent successor of the 2-gram.
int32_t propose_from_corpus(const NgramCounts* counts) {
  if (counts == nullptr) return -1;
  int32_t best = -1, best_count = 0, sum = 0;
  for (const auto& [token, count] : *counts) {
    if (count > best_count || (count == best_count && token < best)) {
      best = token;
      best_count = count;
    }
    sum += count;
  }
  const size_t at = kStaticLength - 1;
  if (sum < kLax.min_sample[at] || 100 * best_count < kLax.min_percent[at] * sum) return -1;
  return best;
}

// A context or dynamic table: the longest n-gram with a clear successor, its counts weighed
// by the corpus table's (a successor the corpus knows weighs 100 times its corpus count).
int32_t propose(const NgramCache& table, const std::vector<int32_t>& seq, const NgramCounts* corpus,
                const Thresholds& limits) {
  const auto longest = static_cast<int32_t>(std::min<size_t>(kNgramCacheMax, seq.size()));
  for (int32_t length = longest; length >= 1; --length) {
    const auto found = table.find(tail(seq, length));
    if (found == table.end()) continue;
    int32_t best = -1, best_count = 0, sum = 0;
    int64_t best_weight = 0;
    for (const auto& [token, count] : found->second) {
      int64_t weight = 1;
      if (corpus != nullptr) {
        const auto c = corpus->find(token);
        if (c != corpus->end()) weight = int64_t{100} * c->second;
      }
      const int64_t score = int64_t{count} * weight;
      if (score > best_weight || (score == best_weight && token < best)) {
        best = token;
        best_count = count;
        best_weight = score;
      }
      sum += count;
    }
    const auto at = static_cast<size_t>(length - 1);
    if (sum < limits.min_sample[at] || 100 * best_count < limits.min_percent[at] * sum) continue;
    return best;
  }
  return -1;
}

}  // namespace

size_t NgramHash::operator()(const Ngram& g) const {
  // Fibonacci hashing of each token, combined by xor.
  size_t h = 0;
  for (int32_t t : g.tokens)
    h ^= static_cast<size_t>(static_cast<uint32_t>(t)) * 11400714819323198485ULL;
  return h;
}

void ngram_cache_update(NgramCache& cache, std::span<const int32_t> tokens, size_t n_new) {
  const size_t size = tokens.size();
  n_new = std::min(n_new, size);
  for (size_t length = 1; length <= kNgramCacheMax; ++length) {
    for (size_t i = std::max(size - n_new, length); i < size; ++i) {
      Ngram g;
      std::copy(tokens.begin() + static_cast<ptrdiff_t>(i - length),
                tokens.begin() + static_cast<ptrdiff_t>(i), g.tokens.begin());
      ++cache[g][tokens[i]];
    }
  }
}

std::vector<int32_t> ngram_cache_draft(std::span<const int32_t> history, int32_t sampled,
                                       int32_t n_draft, const NgramCache& context,
                                       const NgramCache* dynamic, const NgramCache* corpus) {
  // Lookups read at most the last kNgramCacheMax tokens of history, sampled token and draft.
  const size_t keep = std::min<size_t>(history.size(), kNgramCacheMax - 1);
  std::vector<int32_t> seq(history.end() - static_cast<ptrdiff_t>(keep), history.end());
  seq.push_back(sampled);
  std::vector<int32_t> draft;
  if (seq.size() < kStaticLength) return draft;
  while (static_cast<int32_t>(draft.size()) < n_draft) {
    const NgramCounts* corpus_counts = nullptr;
    if (corpus != nullptr) {
      const auto c = corpus->find(tail(seq, kStaticLength));
      if (c != corpus->end()) corpus_counts = &c->second;
    }
    int32_t token = propose(context, seq, corpus_counts, kLax);
    if (token < 0 && dynamic != nullptr) token = propose(*dynamic, seq, corpus_counts, kStrict);
    if (token < 0) token = propose_from_corpus(corpus_counts);
    if (token < 0) break;
    draft.push_back(token);
    seq.push_back(token);
  }
  return draft;
}

Result<NgramCache> load_ngram_cache(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return error(ErrorCode::kIo, fmt::format("cannot open lookup cache '{}'", path));
  const std::vector<char> bytes{std::istreambuf_iterator<char>(in), {}};
  size_t at = 0;
  const auto read = [&](int32_t& v) {
    if (bytes.size() - at < sizeof v) return false;
    std::memcpy(&v, bytes.data() + at, sizeof v);
    at += sizeof v;
    return true;
  };
  const auto corrupt = [&](std::string_view what) {
    return error(ErrorCode::kCorruptFile,
                 fmt::format("lookup cache '{}' is corrupt at byte {}: {}", path, at, what));
  };
  NgramCache cache;
  while (at < bytes.size()) {
    Ngram g;
    for (int32_t& t : g.tokens)
      if (!read(t)) return corrupt("truncated n-gram");
    int32_t n = 0;
    if (!read(n)) return corrupt("truncated record");
    if (n <= 0) return corrupt("a record without successors");
    NgramCounts& counts = cache[g];
    for (int32_t i = 0; i < n; ++i) {
      int32_t token = 0, count = 0;
      if (!read(token) || !read(count)) return corrupt("truncated successor list");
      if (token < 0 || count <= 0) return corrupt("a negative token or a count below 1");
      counts[token] += count;
    }
  }
  return cache;
}

Status save_ngram_cache(const NgramCache& cache, const std::string& path) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  const auto write = [&](int32_t v) { out.write(reinterpret_cast<const char*>(&v), sizeof v); };
  for (const auto& [ngram, counts] : cache) {
    for (int32_t t : ngram.tokens) write(t);
    write(static_cast<int32_t>(counts.size()));
    for (const auto& [token, count] : counts) {
      write(token);
      write(count);
    }
  }
  out.close();
  if (!out) return error(ErrorCode::kIo, fmt::format("cannot write lookup cache '{}'", path));
  return Status::ok();
}

}  // namespace hearth::scheduler
