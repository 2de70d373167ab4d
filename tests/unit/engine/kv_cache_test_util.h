// Helpers shared by the KV cache tests: row content, reads through both access paths, and
// whole-state captures and accounting checks.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <map>
#include <set>
#include <vector>

#include "engine/kv_cache.h"

namespace hearth::engine::test {

// One token's rows as KvSnapshot lays them out: for each layer the K row, then the V row.
using Token = std::vector<uint8_t>;

inline KvCacheConfig make_config(int32_t n_blocks = 16, int32_t block_size = 4, int32_t n_seqs = 4,
                                 KvCacheShape shape = {2, 3, 2, {}}) {
  KvCacheConfig config;
  config.shape = shape;
  config.block_size = block_size;
  config.n_blocks = n_blocks;
  config.max_sequences = n_seqs;
  return config;
}

// Distinct, deterministic row content per tag.
inline Token make_token(const KvCache& cache, uint32_t tag) {
  Token token(cache.token_bytes());
  uint64_t x = 0x9E3779B97F4A7C15ull * (tag + 1);
  for (uint8_t& value : token) {
    x ^= x >> 29;
    x *= 0xBF58476D1CE4E5B9ull;
    x ^= x >> 32;
    value = static_cast<uint8_t>(x);
  }
  return token;
}

inline void write_token(KvCache& cache, SeqId seq, int32_t pos, const Token& token) {
  const KvCacheShape& shape = cache.config().shape;
  size_t at = 0;
  for (int32_t layer = 0; layer < shape.n_layer; ++layer) {
    std::copy_n(token.begin() + static_cast<std::ptrdiff_t>(at), shape.k_row_bytes,
                cache.k_row(layer, seq, pos));
    at += static_cast<size_t>(shape.k_row_bytes);
    std::copy_n(token.begin() + static_cast<std::ptrdiff_t>(at), shape.v_row_bytes,
                cache.v_row(layer, seq, pos));
    at += static_cast<size_t>(shape.v_row_bytes);
  }
}

inline Token read_token(const KvCache& cache, SeqId seq, int32_t pos) {
  const KvCacheShape& shape = cache.config().shape;
  Token token;
  for (int32_t layer = 0; layer < shape.n_layer; ++layer) {
    const uint8_t* k = cache.k_row(layer, seq, pos);
    token.insert(token.end(), k, k + shape.k_row_bytes);
    const uint8_t* v = cache.v_row(layer, seq, pos);
    token.insert(token.end(), v, v + shape.v_row_bytes);
  }
  return token;
}

// The way the forward pass reads: block table, then the block's [block_size][width] rows.
inline Token read_token_via_blocks(const KvCache& cache, SeqId seq, int32_t pos) {
  const KvCacheShape& shape = cache.config().shape;
  const int32_t block = cache.block_table(seq)[static_cast<size_t>(pos / cache.block_size())];
  const int32_t slot = pos % cache.block_size();
  Token token;
  for (int32_t layer = 0; layer < shape.n_layer; ++layer) {
    const uint8_t* k = cache.block_k(block, layer) + slot * shape.k_row_bytes;
    token.insert(token.end(), k, k + shape.k_row_bytes);
    const uint8_t* v = cache.block_v(block, layer) + slot * shape.v_row_bytes;
    token.insert(token.end(), v, v + shape.v_row_bytes);
  }
  return token;
}

inline std::vector<Token> contents(const KvCache& cache, SeqId seq) {
  std::vector<Token> rows;
  for (int32_t pos = 0; pos < cache.length(seq); ++pos) rows.push_back(read_token(cache, seq, pos));
  return rows;
}

// Grows `seq` by tokens.size() and writes them.
inline void append(KvCache& cache, SeqId seq, const std::vector<Token>& tokens) {
  const int32_t start = cache.length(seq);
  const Status status = cache.grow(seq, static_cast<int32_t>(tokens.size()));
  ASSERT_TRUE(status.is_ok()) << status.to_string();
  for (size_t i = 0; i < tokens.size(); ++i) {
    write_token(cache, seq, start + static_cast<int32_t>(i), tokens[i]);
  }
}

inline std::vector<Token> make_tokens(const KvCache& cache, int32_t n, uint32_t first_tag) {
  std::vector<Token> tokens;
  for (int32_t i = 0; i < n; ++i) tokens.push_back(make_token(cache, first_tag + i));
  return tokens;
}

// Everything observable, to check that a failed call changed nothing.
struct CacheState {
  std::vector<std::vector<int32_t>> tables;
  std::vector<std::vector<Token>> rows;
  std::vector<int32_t> refcounts;
  int32_t free_blocks = 0;
  bool operator==(const CacheState&) const = default;
};

inline CacheState capture(const KvCache& cache) {
  CacheState state;
  for (SeqId seq = 0; seq < cache.max_sequences(); ++seq) {
    const auto table = cache.block_table(seq);
    state.tables.emplace_back(table.begin(), table.end());
    state.rows.push_back(contents(cache, seq));
  }
  for (int32_t block = 0; block < cache.n_blocks(); ++block) {
    state.refcounts.push_back(cache.block_refcount(block));
  }
  state.free_blocks = cache.free_blocks();
  return state;
}

// Refcounts equal the number of tables holding each block, free blocks are exactly those
// nobody holds, and each table has ceil(length / block_size) distinct blocks.
inline void check_accounting(const KvCache& cache) {
  std::map<int32_t, int32_t> holders;
  for (SeqId seq = 0; seq < cache.max_sequences(); ++seq) {
    const auto table = cache.block_table(seq);
    const int32_t len = cache.length(seq);
    ASSERT_EQ(static_cast<int32_t>(table.size()),
              (len + cache.block_size() - 1) / cache.block_size());
    const std::set<int32_t> distinct(table.begin(), table.end());
    ASSERT_EQ(distinct.size(), table.size());
    for (int32_t block : table) ++holders[block];
  }
  int32_t n_free = 0;
  for (int32_t block = 0; block < cache.n_blocks(); ++block) {
    const auto it = holders.find(block);
    const int32_t expected = it == holders.end() ? 0 : it->second;
    ASSERT_EQ(cache.block_refcount(block), expected) << "block " << block;
    if (expected == 0) ++n_free;
  }
  ASSERT_EQ(cache.free_blocks(), n_free);
}

inline void expect_all_free(const KvCache& cache) {
  EXPECT_EQ(cache.free_blocks(), cache.n_blocks());
  for (int32_t block = 0; block < cache.n_blocks(); ++block) {
    EXPECT_EQ(cache.block_refcount(block), 0) << "block " << block;
  }
}

}  // namespace hearth::engine::test
