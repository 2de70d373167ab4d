// Layers with rows of their own size (KvCacheShape::layer_k_row_bytes / layer_v_row_bytes:
// lfm2's convolution layers keep one wide row and no V row): each row keeps its bytes beside
// the others', and snapshots carry every layer's rows at their size.
#include <gtest/gtest.h>

#include <cstring>
#include <vector>

#include "engine/kv_cache.h"

namespace hearth::engine {
namespace {

// Layer 1 is windowed (3) with a 16-byte K row and no V row; layers 0 and 2 use 6 + 4 bytes.
KvCacheConfig layer_rows_config() {
  KvCacheConfig c;
  c.shape = {3, 6, 4, {0, 3, 0}, {6, 16, 6}, {4, 0, 4}};
  c.block_size = 4;
  c.n_blocks = 16;
  c.max_sequences = 2;
  c.window_slack = 2;
  return c;
}

uint8_t value(int32_t layer, int32_t pos, bool k, int32_t i) {
  return static_cast<uint8_t>(layer * 71 + pos * 13 + (k ? 0 : 101) + i);
}

void fill(KvCache& kv, SeqId seq, int32_t from, int32_t to) {
  const KvCacheShape& s = kv.config().shape;
  for (int32_t pos = from; pos < to; ++pos)
    for (int32_t layer = 0; layer < 3; ++layer) {
      for (int32_t i = 0; i < s.k_bytes(layer); ++i)
        kv.k_row(layer, seq, pos)[i] = value(layer, pos, true, i);
      for (int32_t i = 0; i < s.v_bytes(layer); ++i)
        kv.v_row(layer, seq, pos)[i] = value(layer, pos, false, i);
    }
}

// Every held row of `seq` holds what fill() wrote.
void expect_rows(const KvCache& kv, SeqId seq, const char* where) {
  const KvCacheShape& s = kv.config().shape;
  for (int32_t pos = 0; pos < kv.length(seq); ++pos)
    for (int32_t layer = 0; layer < 3; ++layer) {
      if (s.window(layer) > 0 && pos < kv.window_first(seq)) continue;
      for (int32_t i = 0; i < s.k_bytes(layer); ++i)
        ASSERT_EQ(kv.k_row(layer, seq, pos)[i], value(layer, pos, true, i))
            << where << ": layer " << layer << " position " << pos;
      for (int32_t i = 0; i < s.v_bytes(layer); ++i)
        ASSERT_EQ(kv.v_row(layer, seq, pos)[i], value(layer, pos, false, i))
            << where << ": layer " << layer << " position " << pos;
    }
}

TEST(KvCacheLayerRows, SizesCountEachLayersRows) {
  const KvCacheShape s = layer_rows_config().shape;
  EXPECT_EQ(s.token_bytes(), 10u + 16u + 10u);
  EXPECT_EQ(s.full_token_bytes(), 20u);
  KvCache kv(layer_rows_config());
  ASSERT_TRUE(kv.init_status().is_ok());
  EXPECT_EQ(kv.token_bytes(), 36u);
}

TEST(KvCacheLayerRows, RowsKeepTheirBytesThroughGrowthAndRelease) {
  KvCache kv(layer_rows_config());
  for (int32_t n : {5, 1, 7, 3}) {
    const int32_t at = kv.length(0);
    ASSERT_TRUE(kv.grow(0, n).is_ok());
    fill(kv, 0, at, at + n);
  }
  EXPECT_GT(kv.window_first(0), 0) << "the windowed layer released old rows";
  expect_rows(kv, 0, "grown");
  // The block accessor sees the same rows, K of layer 1 at its own stride.
  const auto table = kv.block_table(0, 1);
  const int32_t pos = kv.length(0) - 1;
  const uint8_t* k = kv.block_k(table[static_cast<size_t>(pos / 4)], 1) + (pos % 4) * 16;
  EXPECT_EQ(std::memcmp(k, kv.k_row(1, 0, pos), 16), 0);
}

TEST(KvCacheLayerRows, SnapshotsAndSharedPrefixesKeepEveryLayersRows) {
  KvCache kv(layer_rows_config());
  ASSERT_TRUE(kv.grow(0, 14).is_ok());
  fill(kv, 0, 0, 14);
  const KvSnapshot snap = kv.save(0);
  EXPECT_EQ(snap.bytes(), static_cast<size_t>(snap.window_first) * 20 +
                              static_cast<size_t>(14 - snap.window_first) * 36);
  ASSERT_TRUE(kv.restore(1, snap).is_ok());
  expect_rows(kv, 1, "restored");
  ASSERT_TRUE(kv.share_prefix(0, 1, 12).is_ok());
  ASSERT_TRUE(kv.grow(1, 2).is_ok());
  fill(kv, 1, 12, 14);
  expect_rows(kv, 1, "shared then grown");
  expect_rows(kv, 0, "the source after its copy grew");
}

TEST(KvCacheLayerRows, MismatchedPerLayerSizesAreRefused) {
  KvCacheConfig c = layer_rows_config();
  c.shape.layer_k_row_bytes = {6, 16};
  EXPECT_FALSE(KvCache::validate_config(c).is_ok());
  c = layer_rows_config();
  c.shape.layer_v_row_bytes = {4, -1, 4};
  EXPECT_FALSE(KvCache::validate_config(c).is_ok());
  c = layer_rows_config();
  c.shape.layer_v_row_bytes.clear();
  EXPECT_FALSE(KvCache::validate_config(c).is_ok()) << "K sizes without V sizes";
}

}  // namespace
}  // namespace hearth::engine
