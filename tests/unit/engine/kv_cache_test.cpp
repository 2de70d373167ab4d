#include "engine/kv_cache.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <limits>
#include <vector>

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

TEST(KvCache, StartsEmpty) {
  KvCache cache(make_config());
  ASSERT_TRUE(cache.init_status().is_ok());
  EXPECT_EQ(cache.free_blocks(), 16);
  EXPECT_EQ(cache.used_blocks(), 0);
  EXPECT_EQ(cache.block_size(), 4);
  EXPECT_EQ(cache.token_bytes(), 2u * (3 + 2));
  for (SeqId seq = 0; seq < 4; ++seq) {
    EXPECT_EQ(cache.length(seq), 0);
    EXPECT_TRUE(cache.block_table(seq).empty());
  }
  expect_all_free(cache);
}

TEST(KvCache, InvalidConfigGivesAnInertCache) {
  KvCache cache(make_config(16, 0));
  EXPECT_EQ(cache.init_status().code(), ErrorCode::kInvalidArgument);
  EXPECT_EQ(cache.free_blocks(), 0);
  EXPECT_EQ(cache.grow(0, 1).code(), ErrorCode::kInvalidArgument);
  EXPECT_EQ(cache.length(0), 0);
  cache.truncate(0, 0);
  cache.clear_all();

  EXPECT_FALSE(KvCache::create(make_config(-1)).is_ok());
  EXPECT_FALSE(KvCache::create(make_config(16, 4, -1)).is_ok());
  EXPECT_FALSE(KvCache::create(make_config(16, 4, 1, {-1, 3, 2, {}})).is_ok());
  const int32_t big = std::numeric_limits<int32_t>::max();
  const auto huge = KvCache::create(make_config(big, big, 1, {big, big, big, {}}));
  ASSERT_FALSE(huge.is_ok());
  EXPECT_NE(huge.status().message().find("too large"), std::string::npos);
  const auto fine = KvCache::create(make_config());
  ASSERT_TRUE(fine.is_ok());
  EXPECT_EQ((*fine)->free_blocks(), 16);
}

TEST(KvCache, GrowAllocatesBlocksAndRowsReadBack) {
  KvCache cache(make_config());
  const auto tokens = make_tokens(cache, 6, 100);
  append(cache, 1, tokens);
  EXPECT_EQ(cache.length(1), 6);
  ASSERT_EQ(cache.block_table(1).size(), 2u);
  EXPECT_EQ(cache.free_blocks(), 14);
  for (int32_t pos = 0; pos < 6; ++pos) {
    EXPECT_EQ(read_token(cache, 1, pos), tokens[static_cast<size_t>(pos)]);
    EXPECT_EQ(read_token_via_blocks(cache, 1, pos), tokens[static_cast<size_t>(pos)]);
  }
  // Block layout: for each layer K rows [block_size][k_row_bytes], then V rows
  // [block_size][v_row_bytes].
  const int32_t block = cache.block_table(1)[1];
  const uint8_t* base = cache.block_k(block, 0);
  EXPECT_EQ(cache.block_v(block, 0), base + 4 * 3);
  EXPECT_EQ(cache.block_k(block, 1), base + 4 * (3 + 2));
  EXPECT_EQ(cache.k_row(1, 1, 5), cache.block_k(block, 1) + 1 * 3);
  EXPECT_EQ(cache.v_row(1, 1, 5), cache.block_v(block, 1) + 1 * 2);
  // Growing within the last block takes no new block.
  append(cache, 1, make_tokens(cache, 2, 200));
  EXPECT_EQ(cache.free_blocks(), 14);
  check_accounting(cache);
}

TEST(KvCache, GrowRejectsBadArguments) {
  KvCache cache(make_config());
  append(cache, 0, make_tokens(cache, 3, 0));
  const CacheState before = capture(cache);
  EXPECT_EQ(cache.grow(-1, 1).code(), ErrorCode::kInvalidArgument);
  EXPECT_EQ(cache.grow(4, 1).code(), ErrorCode::kInvalidArgument);
  EXPECT_EQ(cache.grow(0, -1).code(), ErrorCode::kInvalidArgument);
  EXPECT_EQ(cache.grow(0, std::numeric_limits<int32_t>::max()).code(), ErrorCode::kInvalidArgument);
  EXPECT_TRUE(cache.grow(0, 0).is_ok());
  EXPECT_EQ(cache.blocks_needed_to_grow(9, 1), -1);
  EXPECT_EQ(cache.blocks_needed_to_grow(0, -1), -1);
  EXPECT_EQ(capture(cache), before);
}

TEST(KvCache, GrowFailureLeavesNoTrace) {
  KvCache cache(make_config(4));
  append(cache, 0, make_tokens(cache, 6, 0));  // 2 blocks
  const CacheState before = capture(cache);
  EXPECT_EQ(cache.blocks_needed_to_grow(0, 11), 3);
  const Status status = cache.grow(0, 11);  // needs 3 more, 2 free
  EXPECT_EQ(status.code(), ErrorCode::kResourceExhausted);
  EXPECT_NE(status.message().find("sequence 0"), std::string::npos);
  EXPECT_EQ(capture(cache), before);
  EXPECT_EQ(cache.length(0), 6);
  // Exactly enough succeeds.
  EXPECT_TRUE(cache.grow(0, 10).is_ok());
  EXPECT_EQ(cache.free_blocks(), 0);
  check_accounting(cache);
}

TEST(KvCache, GrowFailureForTheCopyLeavesNoTrace) {
  KvCache cache(make_config(3));
  append(cache, 0, make_tokens(cache, 6, 0));  // blocks 0,1; block 1 half full
  ASSERT_TRUE(cache.share_prefix(0, 1, 6).is_ok());
  append(cache, 2, make_tokens(cache, 1, 50));  // takes the last free block
  ASSERT_EQ(cache.free_blocks(), 0);
  const CacheState before = capture(cache);
  // One token fits in the shared block's free slots, but that block must be copied first.
  EXPECT_EQ(cache.blocks_needed_to_grow(1, 1), 1);
  EXPECT_EQ(cache.grow(1, 1).code(), ErrorCode::kResourceExhausted);
  EXPECT_EQ(cache.grow(0, 1).code(), ErrorCode::kResourceExhausted);
  EXPECT_EQ(capture(cache), before);
}

TEST(KvCache, TruncateReleasesBlocks) {
  KvCache cache(make_config());
  const auto tokens = make_tokens(cache, 10, 0);
  append(cache, 0, tokens);  // 3 blocks
  cache.truncate(0, 5);      // 2 blocks
  EXPECT_EQ(cache.length(0), 5);
  EXPECT_EQ(cache.block_table(0).size(), 2u);
  EXPECT_EQ(cache.free_blocks(), 14);
  EXPECT_EQ(contents(cache, 0), std::vector<Token>(tokens.begin(), tokens.begin() + 5));
  cache.truncate(0, 8);  // beyond the length: nothing
  EXPECT_EQ(cache.length(0), 5);
  cache.truncate(0, 4);  // exactly a block boundary
  EXPECT_EQ(cache.block_table(0).size(), 1u);
  // Positions truncated away are written afresh.
  const auto more = make_tokens(cache, 3, 500);
  append(cache, 0, more);
  EXPECT_EQ(read_token(cache, 0, 4), more[0]);
  EXPECT_EQ(read_token(cache, 0, 3), tokens[3]);
  cache.truncate(7, 0);  // unknown sequence: ignored
  cache.truncate(-1, 0);
  cache.truncate(0, -3);  // negative: everything goes
  EXPECT_EQ(cache.length(0), 0);
  expect_all_free(cache);
}

TEST(KvCache, ClearAndClearAll) {
  KvCache cache(make_config());
  append(cache, 0, make_tokens(cache, 5, 0));
  append(cache, 1, make_tokens(cache, 9, 10));
  ASSERT_TRUE(cache.share_prefix(1, 2, 7).is_ok());
  cache.clear(1);
  EXPECT_EQ(cache.length(1), 0);
  EXPECT_EQ(cache.length(2), 7);
  check_accounting(cache);
  cache.clear(99);
  cache.clear_all();
  for (SeqId seq = 0; seq < 4; ++seq) EXPECT_EQ(cache.length(seq), 0);
  expect_all_free(cache);
}

TEST(KvCache, SharePrefixSharesBlocksWithoutCopying) {
  KvCache cache(make_config());
  const auto tokens = make_tokens(cache, 10, 0);
  append(cache, 0, tokens);
  const int32_t free_before = cache.free_blocks();
  ASSERT_TRUE(cache.share_prefix(0, 1, 6).is_ok());
  EXPECT_EQ(cache.free_blocks(), free_before);
  ASSERT_EQ(cache.block_table(1).size(), 2u);
  EXPECT_EQ(cache.block_table(1)[0], cache.block_table(0)[0]);
  EXPECT_EQ(cache.block_table(1)[1], cache.block_table(0)[1]);
  EXPECT_EQ(cache.block_refcount(cache.block_table(0)[0]), 2);
  EXPECT_EQ(cache.block_refcount(cache.block_table(0)[2]), 1);
  EXPECT_EQ(contents(cache, 1), std::vector<Token>(tokens.begin(), tokens.begin() + 6));
  check_accounting(cache);
}

TEST(KvCache, WritingAfterSharingAPartialBlockCopiesIt) {
  KvCache cache(make_config());
  const auto tokens = make_tokens(cache, 6, 0);  // last block holds 2 of 4
  append(cache, 0, tokens);
  ASSERT_TRUE(cache.share_prefix(0, 1, 6).is_ok());
  const int32_t shared_tail = cache.block_table(0)[1];

  // The destination writes: it gets its own copy, the source keeps the original.
  const auto dst_more = make_tokens(cache, 1, 100);
  append(cache, 1, dst_more);
  EXPECT_NE(cache.block_table(1)[1], shared_tail);
  EXPECT_EQ(cache.block_table(0)[1], shared_tail);
  EXPECT_EQ(cache.block_refcount(shared_tail), 1);
  EXPECT_EQ(cache.block_table(1)[0], cache.block_table(0)[0]);  // full block still shared
  EXPECT_EQ(contents(cache, 0), tokens);
  auto dst_expected = tokens;
  dst_expected.push_back(dst_more[0]);
  EXPECT_EQ(contents(cache, 1), dst_expected);

  // Share again and let the source write this time.
  ASSERT_TRUE(cache.share_prefix(0, 2, 6).is_ok());
  const auto src_more = make_tokens(cache, 3, 200);
  append(cache, 0, src_more);
  EXPECT_EQ(contents(cache, 2), tokens);
  auto src_expected = tokens;
  src_expected.insert(src_expected.end(), src_more.begin(), src_more.end());
  EXPECT_EQ(contents(cache, 0), src_expected);
  EXPECT_EQ(contents(cache, 1), dst_expected);
  check_accounting(cache);
}

TEST(KvCache, WritingAfterTruncatingIntoASharedFullBlockCopiesIt) {
  KvCache cache(make_config());
  const auto tokens = make_tokens(cache, 8, 0);  // two full blocks
  append(cache, 0, tokens);
  ASSERT_TRUE(cache.share_prefix(0, 1, 8).is_ok());
  cache.truncate(1, 6);  // back into the shared second block
  EXPECT_EQ(cache.block_refcount(cache.block_table(0)[1]), 2);
  const auto more = make_tokens(cache, 2, 300);
  append(cache, 1, more);
  EXPECT_NE(cache.block_table(1)[1], cache.block_table(0)[1]);
  EXPECT_EQ(contents(cache, 0), tokens);
  auto expected = std::vector<Token>(tokens.begin(), tokens.begin() + 6);
  expected.insert(expected.end(), more.begin(), more.end());
  EXPECT_EQ(contents(cache, 1), expected);
  for (int32_t pos = 0; pos < 8; ++pos) {
    EXPECT_EQ(read_token_via_blocks(cache, 1, pos), expected[static_cast<size_t>(pos)]);
  }
  check_accounting(cache);
}

TEST(KvCache, GrowingPastASharedFullBlockDoesNotCopyIt) {
  KvCache cache(make_config());
  append(cache, 0, make_tokens(cache, 8, 0));
  ASSERT_TRUE(cache.share_prefix(0, 1, 8).is_ok());
  EXPECT_EQ(cache.blocks_needed_to_grow(1, 1), 1);
  append(cache, 1, make_tokens(cache, 1, 900));
  EXPECT_EQ(cache.block_table(1)[0], cache.block_table(0)[0]);
  EXPECT_EQ(cache.block_table(1)[1], cache.block_table(0)[1]);
  EXPECT_EQ(cache.block_refcount(cache.block_table(0)[1]), 2);
  EXPECT_EQ(cache.free_blocks(), 16 - 3);
  check_accounting(cache);
}

TEST(KvCache, SharePrefixEdgeCases) {
  KvCache cache(make_config());
  const auto tokens = make_tokens(cache, 7, 0);
  append(cache, 0, tokens);
  append(cache, 1, make_tokens(cache, 9, 100));  // dst's old content is dropped

  ASSERT_TRUE(cache.share_prefix(0, 1, 0).is_ok());  // n = 0: dst becomes empty
  EXPECT_EQ(cache.length(1), 0);
  EXPECT_EQ(cache.free_blocks(), 16 - 2);

  ASSERT_TRUE(cache.share_prefix(0, 1, 7).is_ok());  // n = length: the whole sequence
  EXPECT_EQ(contents(cache, 1), tokens);
  EXPECT_EQ(cache.free_blocks(), 16 - 2);

  ASSERT_TRUE(cache.share_prefix(1, 1, 5).is_ok());  // src == dst truncates
  EXPECT_EQ(cache.length(1), 5);
  ASSERT_TRUE(cache.share_prefix(1, 1, 5).is_ok());
  EXPECT_EQ(cache.length(1), 5);

  // Re-sharing blocks dst already shares keeps the counts right.
  ASSERT_TRUE(cache.share_prefix(0, 1, 7).is_ok());
  EXPECT_EQ(cache.block_refcount(cache.block_table(0)[0]), 2);
  check_accounting(cache);

  const CacheState before = capture(cache);
  EXPECT_EQ(cache.share_prefix(0, 2, 8).code(), ErrorCode::kInvalidArgument);
  EXPECT_EQ(cache.share_prefix(0, 2, -1).code(), ErrorCode::kInvalidArgument);
  EXPECT_EQ(cache.share_prefix(0, 0, 8).code(), ErrorCode::kInvalidArgument);
  EXPECT_EQ(cache.share_prefix(-1, 2, 0).code(), ErrorCode::kInvalidArgument);
  EXPECT_EQ(cache.share_prefix(0, 4, 0).code(), ErrorCode::kInvalidArgument);
  EXPECT_EQ(capture(cache), before);
}

TEST(KvCache, SaveRestoreRoundTripIsBitExact) {
  KvCache cache(make_config());
  auto tokens = make_tokens(cache, 9, 0);
  tokens[3][0] = 0xFF;  // extreme byte values must survive unchanged
  tokens[4][1] = 0x00;
  append(cache, 0, tokens);
  const KvSnapshot all = cache.save(0);
  EXPECT_EQ(all.shape, cache.config().shape);
  EXPECT_EQ(all.n_tokens, 9);
  EXPECT_EQ(all.bytes(), 9 * cache.token_bytes());
  for (size_t pos = 0; pos < tokens.size(); ++pos) {
    const Token saved(
        all.data.begin() + static_cast<std::ptrdiff_t>(pos * cache.token_bytes()),
        all.data.begin() + static_cast<std::ptrdiff_t>((pos + 1) * cache.token_bytes()));
    EXPECT_EQ(saved, tokens[pos]);
  }
  EXPECT_EQ(cache.save(0, 4).n_tokens, 4);
  EXPECT_EQ(cache.save(0, 40).n_tokens, 9);
  EXPECT_EQ(cache.save(0, 0).n_tokens, 0);
  EXPECT_EQ(cache.save(-1).n_tokens, 0);

  cache.clear(0);
  ASSERT_TRUE(cache.restore(2, all).is_ok());
  EXPECT_EQ(contents(cache, 2), tokens);
  const KvSnapshot head = cache.save(2, 5);
  ASSERT_TRUE(cache.restore(3, head).is_ok());
  EXPECT_EQ(contents(cache, 3), std::vector<Token>(tokens.begin(), tokens.begin() + 5));
  ASSERT_TRUE(cache.restore(3, KvSnapshot{cache.config().shape, 0, {}}).is_ok());
  EXPECT_EQ(cache.length(3), 0);
  check_accounting(cache);
}

TEST(KvCache, RestoreIntoASharingSequenceLeavesTheOtherAlone) {
  KvCache cache(make_config());
  const auto tokens = make_tokens(cache, 7, 0);
  append(cache, 0, tokens);
  ASSERT_TRUE(cache.share_prefix(0, 1, 7).is_ok());
  KvCache other(make_config());
  const auto replacement = make_tokens(other, 5, 400);
  append(other, 0, replacement);
  ASSERT_TRUE(cache.restore(1, other.save(0)).is_ok());
  EXPECT_EQ(contents(cache, 1), replacement);
  EXPECT_EQ(contents(cache, 0), tokens);
  for (int32_t block : cache.block_table(0)) EXPECT_EQ(cache.block_refcount(block), 1);
  // And the other way round: the source of the sharing is replaced.
  ASSERT_TRUE(cache.share_prefix(0, 2, 6).is_ok());
  ASSERT_TRUE(cache.restore(0, other.save(0, 2)).is_ok());
  EXPECT_EQ(contents(cache, 2), std::vector<Token>(tokens.begin(), tokens.begin() + 6));
  EXPECT_EQ(contents(cache, 0), std::vector<Token>(replacement.begin(), replacement.begin() + 2));
  check_accounting(cache);
}

TEST(KvCache, RestoreRejectsBadSnapshotsWithoutChange) {
  KvCache cache(make_config(4));
  append(cache, 0, make_tokens(cache, 6, 0));
  ASSERT_TRUE(cache.share_prefix(0, 1, 6).is_ok());
  KvSnapshot snapshot = cache.save(0);
  const CacheState before = capture(cache);

  KvSnapshot wrong_shape = snapshot;
  wrong_shape.shape.v_row_bytes = 3;
  EXPECT_EQ(cache.restore(2, wrong_shape).code(), ErrorCode::kInvalidArgument);
  KvSnapshot short_data = snapshot;
  short_data.data.pop_back();
  EXPECT_EQ(cache.restore(2, short_data).code(), ErrorCode::kInvalidArgument);
  KvSnapshot negative = snapshot;
  negative.n_tokens = -1;
  EXPECT_EQ(cache.restore(2, negative).code(), ErrorCode::kInvalidArgument);
  EXPECT_EQ(cache.restore(4, snapshot).code(), ErrorCode::kInvalidArgument);

  // 4 blocks in all, 2 in use and shared by 0 and 1: 12 tokens need 3.
  KvCache big(make_config());
  append(big, 0, make_tokens(big, 12, 0));
  const KvSnapshot twelve = big.save(0);
  EXPECT_EQ(cache.restore(2, twelve).code(), ErrorCode::kResourceExhausted);
  // Sequence 1's blocks are shared, so dropping them frees nothing.
  EXPECT_EQ(cache.restore(1, twelve).code(), ErrorCode::kResourceExhausted);
  EXPECT_EQ(capture(cache), before);

  // Once sequence 1 holds its blocks alone, they count as available.
  cache.clear(0);
  ASSERT_TRUE(cache.restore(1, twelve).is_ok());
  EXPECT_EQ(contents(cache, 1), contents(big, 0));
  append(big, 0, make_tokens(big, 4, 50));  // 16 tokens: every block, its own 3 included
  ASSERT_TRUE(cache.restore(1, big.save(0)).is_ok());
  EXPECT_EQ(cache.free_blocks(), 0);
  check_accounting(cache);
}

TEST(KvCache, EverythingReturnsToTheFreePool) {
  KvCache cache(make_config(32, 3, 4));
  for (int round = 0; round < 3; ++round) {
    append(cache, 0, make_tokens(cache, 10, 0));
    ASSERT_TRUE(cache.share_prefix(0, 1, 7).is_ok());
    ASSERT_TRUE(cache.share_prefix(0, 2, 9).is_ok());
    append(cache, 1, make_tokens(cache, 4, 50));
    append(cache, 2, make_tokens(cache, 1, 60));
    cache.truncate(0, 2);
    append(cache, 0, make_tokens(cache, 5, 70));
    ASSERT_TRUE(cache.restore(3, cache.save(1)).is_ok());
    ASSERT_TRUE(cache.share_prefix(3, 0, 4).is_ok());
    check_accounting(cache);
    for (SeqId seq = 0; seq < 4; ++seq) cache.clear(seq);
    expect_all_free(cache);
  }
}

TEST(KvCache, BadIdsAtAccessorsDoNotCrash) {
  KvCache cache(make_config());
  EXPECT_EQ(cache.length(-1), 0);
  EXPECT_EQ(cache.length(4), 0);
  EXPECT_TRUE(cache.block_table(-1).empty());
  EXPECT_TRUE(cache.block_table(4).empty());
  EXPECT_EQ(cache.block_refcount(-1), -1);
  EXPECT_EQ(cache.block_refcount(16), -1);
  EXPECT_EQ(cache.save(4).n_tokens, 0);
}

TEST(KvCache, UnusualShapes) {
  // K only (V width 0), a block of one token, and a shape without layers.
  KvCache k_only(make_config(12, 1, 2, {3, 4, 0, {}}));
  const auto tokens = make_tokens(k_only, 5, 0);
  append(k_only, 0, tokens);
  ASSERT_TRUE(k_only.share_prefix(0, 1, 3).is_ok());
  append(k_only, 1, make_tokens(k_only, 1, 99));
  EXPECT_EQ(contents(k_only, 0), tokens);
  ASSERT_TRUE(k_only.restore(1, k_only.save(0)).is_ok());
  EXPECT_EQ(contents(k_only, 1), tokens);
  check_accounting(k_only);

  KvCache empty_shape(make_config(4, 4, 2, {0, 0, 0, {}}));
  ASSERT_TRUE(empty_shape.init_status().is_ok());
  ASSERT_TRUE(empty_shape.grow(0, 9).is_ok());
  EXPECT_EQ(empty_shape.free_blocks(), 1);
  const KvSnapshot snapshot = empty_shape.save(0);
  EXPECT_EQ(snapshot.data.size(), 0u);
  EXPECT_EQ(empty_shape.restore(1, snapshot).code(), ErrorCode::kResourceExhausted);
  empty_shape.clear(0);
  ASSERT_TRUE(empty_shape.restore(1, snapshot).is_ok());
  EXPECT_EQ(empty_shape.length(1), 9);
}

}  // namespace
}  // namespace hearth::engine
