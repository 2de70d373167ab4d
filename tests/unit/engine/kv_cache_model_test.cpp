// Model check of the KV cache: thousands of random operations on several sequences,
// compared after every step with a plain reference.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <random>
#include <utility>
#include <vector>

#include "engine/kv_cache.h"
#include "unit/engine/kv_cache_test_util.h"

namespace hearth::engine {
namespace {

using test::append;
using test::CacheState;
using test::capture;
using test::check_accounting;
using test::contents;
using test::expect_all_free;
using test::make_config;
using test::make_token;
using test::make_tokens;
using test::read_token;
using test::read_token_via_blocks;
using test::Token;
using test::write_token;

// Random operations on several sequences, checked after every step against a reference
// that keeps each sequence's rows in a plain vector.
class ModelCheck {
 public:
  ModelCheck(const KvCacheConfig& config, uint32_t seed)
      : cache_(config), model_(static_cast<size_t>(config.max_sequences)), rng_(seed) {}

  // How often the interesting paths ran, so the test can insist that they did.
  struct Counts {
    int copies = 0;         // grows that copied a shared last block
    int grow_failures = 0;  // grows refused for lack of blocks
    int restores = 0;
    int restore_failures = 0;
    int shares = 0;
  };

  Counts run(int n_ops) {
    for (int op = 0; op < n_ops; ++op) {
      step();
      verify();
      if (::testing::Test::HasFatalFailure()) {
        ADD_FAILURE() << "at operation " << op;
        break;
      }
    }
    return counts_;
  }

 private:
  int32_t pick(int32_t lo, int32_t hi) {
    return std::uniform_int_distribution<int32_t>(lo, hi)(rng_);
  }
  SeqId pick_seq() { return pick(0, cache_.max_sequences() - 1); }
  int32_t len(SeqId seq) const {
    return static_cast<int32_t>(model_[static_cast<size_t>(seq)].size());
  }

  void step() {
    const int32_t dice = pick(0, 99);
    if (dice < 38) {
      grow();
    } else if (dice < 52) {
      truncate();
    } else if (dice < 68) {
      share();
    } else if (dice < 78) {
      save();
    } else if (dice < 88) {
      restore();
    } else if (dice < 95) {
      const SeqId seq = pick_seq();
      cache_.clear(seq);
      model_[static_cast<size_t>(seq)].clear();
    } else if (dice < 97) {
      cache_.clear_all();
      for (auto& rows : model_) rows.clear();
    } else {
      bad_arguments();
    }
  }

  // Blocks a grow must take: new blocks past the last one, plus a copy of a shared last
  // block that the new positions start in.
  int32_t expected_need(SeqId seq, int32_t n) const {
    if (n == 0) return 0;
    const int32_t bs = cache_.block_size();
    const int32_t old_len = len(seq);
    int32_t need = (old_len + n + bs - 1) / bs - (old_len + bs - 1) / bs;
    if (old_len % bs != 0 && cache_.block_refcount(cache_.block_table(seq).back()) > 1) ++need;
    return need;
  }

  void grow() {
    const SeqId seq = pick_seq();
    const int32_t n = pick(0, 2 * cache_.block_size() + 1);
    const int32_t need = expected_need(seq, n);
    ASSERT_EQ(cache_.blocks_needed_to_grow(seq, n), need);
    // A full capture only where the call must fail: it keeps the test fast under sanitizers.
    const bool must_fail = need > cache_.free_blocks();
    const CacheState before = must_fail ? capture(cache_) : CacheState{};
    const auto old_table =
        std::vector<int32_t>(cache_.block_table(seq).begin(), cache_.block_table(seq).end());
    const Status status = cache_.grow(seq, n);
    if (must_fail) {
      ASSERT_EQ(status.code(), ErrorCode::kResourceExhausted);
      ASSERT_EQ(capture(cache_), before);
      ++counts_.grow_failures;
      return;
    }
    ASSERT_TRUE(status.is_ok()) << status.to_string();
    if (!old_table.empty() && cache_.block_table(seq)[old_table.size() - 1] != old_table.back()) {
      ++counts_.copies;
    }
    auto& rows = model_[static_cast<size_t>(seq)];
    const auto table = cache_.block_table(seq);
    for (int32_t pos = len(seq); pos < len(seq) + n; ++pos) {
      // Every block handed out for writing belongs to this sequence alone.
      ASSERT_EQ(cache_.block_refcount(table[static_cast<size_t>(pos / cache_.block_size())]), 1);
    }
    for (int32_t i = 0; i < n; ++i) {
      const Token token = make_token(cache_, next_tag_++);
      write_token(cache_, seq, static_cast<int32_t>(rows.size()), token);
      rows.push_back(token);
    }
  }

  void truncate() {
    const SeqId seq = pick_seq();
    const int32_t n = pick(-1, len(seq) + 2);
    cache_.truncate(seq, n);
    auto& rows = model_[static_cast<size_t>(seq)];
    if (n < len(seq)) rows.resize(static_cast<size_t>(std::max(n, 0)));
  }

  void share() {
    const SeqId src = pick_seq();
    const SeqId dst = pick_seq();
    const int32_t n = pick(-1, len(src) + 1);
    const bool must_fail = n < 0 || n > len(src);
    const CacheState before = must_fail ? capture(cache_) : CacheState{};
    const Status status = cache_.share_prefix(src, dst, n);
    if (must_fail) {
      ASSERT_EQ(status.code(), ErrorCode::kInvalidArgument);
      ASSERT_EQ(capture(cache_), before);
      return;
    }
    ASSERT_TRUE(status.is_ok()) << status.to_string();
    ++counts_.shares;
    const auto& from = model_[static_cast<size_t>(src)];
    model_[static_cast<size_t>(dst)] = std::vector<Token>(from.begin(), from.begin() + n);
  }

  void save() {
    const SeqId seq = pick_seq();
    const int32_t n = pick(-1, len(seq) + 1);
    const KvSnapshot snapshot = cache_.save(seq, n);
    const auto& rows = model_[static_cast<size_t>(seq)];
    const int32_t expected_n = (n < 0 || n > len(seq)) ? len(seq) : n;
    ASSERT_EQ(snapshot.n_tokens, expected_n);
    std::vector<Token> saved_rows(rows.begin(), rows.begin() + expected_n);
    Token flat;
    for (const Token& row : saved_rows) flat.insert(flat.end(), row.begin(), row.end());
    ASSERT_EQ(snapshot.data, flat);
    if (saved_.size() < 4) {
      saved_.emplace_back(snapshot, std::move(saved_rows));
    } else {
      saved_[static_cast<size_t>(pick(0, 3))] = {snapshot, std::move(saved_rows)};
    }
  }

  void restore() {
    if (saved_.empty()) return;
    const auto& [snapshot, rows] =
        saved_[static_cast<size_t>(pick(0, static_cast<int32_t>(saved_.size()) - 1))];
    const SeqId seq = pick_seq();
    int32_t available = cache_.free_blocks();
    for (int32_t block : cache_.block_table(seq)) available += cache_.block_refcount(block) == 1;
    const int32_t need = (snapshot.n_tokens + cache_.block_size() - 1) / cache_.block_size();
    const bool must_fail = need > available;
    const CacheState before = must_fail ? capture(cache_) : CacheState{};
    const Status status = cache_.restore(seq, snapshot);
    if (must_fail) {
      ASSERT_EQ(status.code(), ErrorCode::kResourceExhausted);
      ASSERT_EQ(capture(cache_), before);
      ++counts_.restore_failures;
      return;
    }
    ASSERT_TRUE(status.is_ok()) << status.to_string();
    ++counts_.restores;
    model_[static_cast<size_t>(seq)] = rows;
  }

  void bad_arguments() {
    const CacheState before = capture(cache_);
    const SeqId bad = pick(0, 1) == 0 ? -1 : cache_.max_sequences();
    ASSERT_EQ(cache_.grow(bad, 1).code(), ErrorCode::kInvalidArgument);
    ASSERT_EQ(cache_.grow(pick_seq(), -1).code(), ErrorCode::kInvalidArgument);
    ASSERT_EQ(cache_.share_prefix(bad, 0, 0).code(), ErrorCode::kInvalidArgument);
    ASSERT_EQ(cache_.share_prefix(0, bad, 0).code(), ErrorCode::kInvalidArgument);
    ASSERT_EQ(cache_.restore(bad, cache_.save(0)).code(), ErrorCode::kInvalidArgument);
    cache_.truncate(bad, 0);
    cache_.clear(bad);
    ASSERT_EQ(capture(cache_), before);
  }

  void verify() {
    check_accounting(cache_);
    for (SeqId seq = 0; seq < cache_.max_sequences(); ++seq) {
      const auto& rows = model_[static_cast<size_t>(seq)];
      ASSERT_EQ(cache_.length(seq), len(seq));
      for (int32_t pos = 0; pos < len(seq); ++pos) {
        ASSERT_EQ(read_token(cache_, seq, pos), rows[static_cast<size_t>(pos)])
            << "seq " << seq << " pos " << pos;
        ASSERT_EQ(read_token_via_blocks(cache_, seq, pos), rows[static_cast<size_t>(pos)]);
      }
    }
  }

  KvCache cache_;
  std::vector<std::vector<Token>> model_;
  std::vector<std::pair<KvSnapshot, std::vector<Token>>> saved_;
  std::mt19937 rng_;
  uint32_t next_tag_ = 0;
  Counts counts_;
};

TEST(KvCacheModelCheck, RandomOperationsMatchAPlainReference) {
  const KvCacheConfig configs[] = {
      make_config(12, 4, 4, {2, 3, 2, {}}),
      make_config(20, 1, 3, {1, 2, 2, {}}),
      make_config(9, 3, 5, {2, 1, 0, {}}),
      make_config(10, 7, 4, {3, 2, 5, {}}),
  };
  uint32_t seed = 1;
  for (const KvCacheConfig& config : configs) {
    for (int repeat = 0; repeat < 2; ++repeat) {
      SCOPED_TRACE(::testing::Message() << "block_size " << config.block_size << " seed " << seed);
      ModelCheck check(config, seed++);
      const ModelCheck::Counts counts = check.run(4000);
      if (HasFailure()) return;
      EXPECT_GT(counts.shares, 100);
      EXPECT_GT(counts.restores, 100);
      EXPECT_GT(counts.grow_failures, 5);
      EXPECT_GT(counts.restore_failures, 0);
      // A block size of 1 never leaves a partial last block to copy.
      if (config.block_size > 1) {
        EXPECT_GT(counts.copies, 10);
      }
    }
  }
}

}  // namespace
}  // namespace hearth::engine
