// The KV cache with sliding-window layers: their rows live in a pool of their own, blocks
// no later token can attend to go back to it, and every operation that needs released rows
// (cutting back too far, sharing or saving too short a prefix) is refused or empties the
// sequence instead of handing out rows that are gone.
#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

#include "engine/kv_cache.h"
#include "kv_cache_test_util.h"

namespace hearth::engine::test {
namespace {

constexpr int32_t kWindow = 4;
constexpr int32_t kFullLayer = 1;  // layers 0 and 2 are windowed

// Three layers (K 3 bytes, V 2), layers 0 and 2 windowed; blocks of 4 tokens; no slack, so
// the numbers below follow from the window alone.
KvCacheConfig windowed_config(int32_t n_window_blocks = 6, bool release = true) {
  KvCacheConfig config = make_config(16, 4, 2, {3, 3, 2, {kWindow, 0, kWindow}});
  config.n_window_blocks = n_window_blocks;
  config.window_slack = 0;
  config.release_outside_windows = release;
  return config;
}

// The rows of one token a caller may still read: every layer from window_first on, the
// full layer only before it.
Token visible_token(const KvCache& cache, SeqId seq, int32_t pos) {
  if (pos >= cache.window_first(seq)) return read_token(cache, seq, pos);
  const uint8_t* k = cache.k_row(kFullLayer, seq, pos);
  const uint8_t* v = cache.v_row(kFullLayer, seq, pos);
  Token token(k, k + cache.config().shape.k_row_bytes);
  token.insert(token.end(), v, v + cache.config().shape.v_row_bytes);
  return token;
}

// What visible_token() must return for a written token.
Token expected_visible(const KvCache& cache, SeqId seq, int32_t pos, const Token& written) {
  if (pos >= cache.window_first(seq)) return written;
  const auto row =
      static_cast<size_t>(cache.config().shape.k_row_bytes + cache.config().shape.v_row_bytes);
  return Token(written.begin() + static_cast<std::ptrdiff_t>(kFullLayer * row),
               written.begin() + static_cast<std::ptrdiff_t>((kFullLayer + 1) * row));
}

void expect_rows(const KvCache& cache, SeqId seq, const std::vector<Token>& written) {
  ASSERT_EQ(cache.length(seq), static_cast<int32_t>(written.size()));
  for (int32_t pos = 0; pos < cache.length(seq); ++pos)
    EXPECT_EQ(visible_token(cache, seq, pos),
              expected_visible(cache, seq, pos, written[static_cast<size_t>(pos)]))
        << "position " << pos;
}

TEST(KvCacheWindows, ReleasesOnlyWhatNoLaterTokenSees) {
  KvCache cache(windowed_config());
  ASSERT_TRUE(cache.init_status().is_ok());
  EXPECT_EQ(cache.n_blocks(), 16 + 6);
  const auto tokens = make_tokens(cache, 10, 0);
  append(cache, 0, tokens);
  EXPECT_EQ(cache.window_first(0), 0) << "grow releases what the new tokens cannot see only";
  cache.release_windows(0);
  // The next token (position 10) sees 7..10: block 0 (positions 0-3) goes, block 1 stays.
  EXPECT_EQ(cache.window_first(0), 4);
  EXPECT_EQ(cache.min_truncation(0), 4 + kWindow - 1);
  EXPECT_EQ(cache.block_table(0, 0)[0], -1);
  EXPECT_EQ(cache.block_table(0, 2)[0], -1);
  EXPECT_GE(cache.block_table(0, kFullLayer)[0], 0);
  EXPECT_EQ(cache.free_blocks_of_layer(0), 6 - 2);
  EXPECT_EQ(cache.free_blocks_of_layer(kFullLayer), 16 - 3);
  expect_rows(cache, 0, tokens);

  // Cutting back to 8 keeps the window of position 8; to 6 would need position 3.
  EXPECT_EQ(cache.truncate(0, 8), 8);
  expect_rows(cache, 0, std::vector<Token>(tokens.begin(), tokens.begin() + 8));
  EXPECT_EQ(cache.truncate(0, 6), 0);
  EXPECT_EQ(cache.length(0), 0);
  EXPECT_EQ(cache.window_first(0), 0);
  EXPECT_EQ(cache.free_blocks(), cache.n_blocks());
}

TEST(KvCacheWindows, DecodingPastThePoolSizeReusesReleasedBlocks) {
  // Three windowed blocks hold 12 positions; a sequence grows to 40 in steps of 4.
  KvCache cache(windowed_config(3));
  std::vector<Token> written;
  for (int32_t step = 0; step < 10; ++step) {
    const auto tokens = make_tokens(cache, 4, static_cast<uint32_t>(step * 4));
    append(cache, 0, tokens);
    written.insert(written.end(), tokens.begin(), tokens.end());
    expect_rows(cache, 0, written);
    EXPECT_LE(cache.length(0) - cache.window_first(0), 8) << "step " << step;
  }
  EXPECT_EQ(cache.window_first(0), 32);

  // Keeping every row (--swa-full), the same pool runs out after 12 positions.
  KvCache full(windowed_config(3, false));
  append(full, 0, make_tokens(full, 12, 0));
  EXPECT_EQ(full.grow(0, 4).code(), ErrorCode::kResourceExhausted);
  EXPECT_EQ(full.window_first(0), 0);
  EXPECT_EQ(full.min_truncation(0), 0);
  EXPECT_EQ(full.truncate(0, 1), 1);
}

TEST(KvCacheWindows, SnapshotsHoldTheRowsStillHeld) {
  KvCache cache(windowed_config());
  const auto tokens = make_tokens(cache, 10, 100);
  append(cache, 0, tokens);
  cache.release_windows(0);
  const KvSnapshot snapshot = cache.save(0);
  EXPECT_EQ(snapshot.n_tokens, 10);
  EXPECT_EQ(snapshot.window_first, 4);
  const size_t row = 3 + 2;
  EXPECT_EQ(snapshot.bytes(), 4 * row + 6 * cache.token_bytes());
  EXPECT_EQ(cache.save(0, 5).n_tokens, 0) << "a prefix whose window is gone";
  EXPECT_EQ(cache.save(0, 8).n_tokens, 8);

  ASSERT_TRUE(cache.restore(1, snapshot).is_ok());
  EXPECT_EQ(cache.window_first(1), 4);
  expect_rows(cache, 1, tokens);

  KvSnapshot bad = snapshot;
  bad.window_first = 11;
  EXPECT_EQ(cache.restore(1, bad).code(), ErrorCode::kInvalidArgument);
  bad.window_first = 3;  // the data holds windowed rows from 4 on
  EXPECT_EQ(cache.restore(1, bad).code(), ErrorCode::kInvalidArgument);

  // A cache that keeps every row takes the snapshot as it is...
  KvCache full(windowed_config(6, false));
  ASSERT_TRUE(full.restore(0, snapshot).is_ok());
  EXPECT_EQ(full.window_first(0), 4);
  expect_rows(full, 0, tokens);
  // ...and its complete snapshots lose the rows a releasing cache would not keep.
  full.clear(0);
  append(full, 0, tokens);
  const KvSnapshot complete = full.save(0);
  EXPECT_EQ(complete.window_first, 0);
  ASSERT_TRUE(cache.restore(1, complete).is_ok());
  EXPECT_EQ(cache.window_first(1), 4);
  expect_rows(cache, 1, tokens);
}

TEST(KvCacheWindows, SharedPrefixesKeepTheWindowTheyNeed) {
  KvCache cache(windowed_config());
  const auto tokens = make_tokens(cache, 10, 7);
  append(cache, 0, tokens);
  cache.release_windows(0);
  EXPECT_EQ(cache.share_prefix(0, 1, 5).code(), ErrorCode::kInvalidArgument);
  EXPECT_EQ(cache.length(1), 0);
  ASSERT_TRUE(cache.share_prefix(0, 1, 8).is_ok());
  EXPECT_EQ(cache.window_first(1), 4);
  const int32_t shared = cache.block_table(1, 0)[1];
  EXPECT_EQ(cache.block_refcount(shared, 0), 2);
  expect_rows(cache, 1, std::vector<Token>(tokens.begin(), tokens.begin() + 8));
  // The copy grows on its own blocks and releases its own references.
  const auto more = make_tokens(cache, 8, 50);
  append(cache, 1, more);
  cache.release_windows(1);
  EXPECT_EQ(cache.block_refcount(shared, 0), 1);
  expect_rows(cache, 0, tokens);
  ASSERT_TRUE(cache.share_prefix(0, 1, 0).is_ok());
  EXPECT_EQ(cache.length(1), 0);
}

TEST(KvCacheWindows, ConfigurationIsChecked) {
  KvCacheConfig config = windowed_config();
  config.shape.layer_window = {4, 0};  // three layers
  EXPECT_EQ(KvCache::validate_config(config).code(), ErrorCode::kInvalidArgument);
  config.shape.layer_window = {4, -1, 0};
  EXPECT_EQ(KvCache::validate_config(config).code(), ErrorCode::kInvalidArgument);
  config = windowed_config();
  config.window_slack = -1;
  EXPECT_EQ(KvCache::validate_config(config).code(), ErrorCode::kInvalidArgument);
  // Without windows a cache has the one pool it always had.
  KvCache plain(make_config());
  EXPECT_EQ(plain.n_blocks(), 16);
  EXPECT_EQ(plain.min_truncation(0), 0);
}

}  // namespace
}  // namespace hearth::engine::test
