// The key/value cache: F16 rows kept in fixed-size blocks, with a block table per
// sequence. Sequences can share a common prefix without copying it: blocks are
// reference-counted, and a shared block that is about to be written is copied first
// (copy-on-write), so one sequence's new tokens never change another's.
//
// Layout of one block: for each layer, K rows [block_size][k_width] then V rows
// [block_size][v_width], all f16. A token's row index inside its sequence is its position.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "base/status.h"

namespace hearth::engine {

using SeqId = int32_t;

struct KvCacheShape {
  int32_t n_layer = 0;
  int32_t k_width = 0;  // f16 elements per token per layer for K (n_head_kv * head_dim)
  int32_t v_width = 0;  // same for V
  bool operator==(const KvCacheShape&) const = default;
};

struct KvCacheConfig {
  KvCacheShape shape;
  int32_t block_size = 16;     // tokens per block
  int32_t n_blocks = 0;        // capacity of the pool
  int32_t max_sequences = 1;   // valid SeqIds are [0, max_sequences)
};

// A sequence's cached rows copied to host memory (the prompt cache, slot save/restore).
struct KvSnapshot {
  KvCacheShape shape;
  int32_t n_tokens = 0;
  std::vector<uint16_t> data;  // per token: for each layer K row then V row
  size_t bytes() const { return data.size() * sizeof(uint16_t); }
};

class KvCache {
 public:
  explicit KvCache(const KvCacheConfig& config);
  KvCache(const KvCache&) = delete;
  KvCache& operator=(const KvCache&) = delete;

  const KvCacheConfig& config() const { return config_; }
  int32_t block_size() const { return config_.block_size; }
  int32_t free_blocks() const;
  // Tokens currently cached for `seq`.
  int32_t length(SeqId seq) const;

  // Appends room for `n` tokens at the end of `seq` (positions length..length+n-1), whose
  // rows the caller then writes. Copies a shared block the new positions fall in first.
  // kResourceExhausted (and no change) when the pool has too few free blocks.
  Status grow(SeqId seq, int32_t n);
  // Drops every token at position >= n (n <= length).
  void truncate(SeqId seq, int32_t n);
  void clear(SeqId seq);
  void clear_all();
  // Makes `dst` hold the first `n` tokens of `src` by sharing blocks (dst's old content is
  // dropped first). n <= length(src). src == dst truncates.
  Status share_prefix(SeqId src, SeqId dst, int32_t n);

  // Rows of one token. Writable rows are those of positions added by the latest grow();
  // writing a row of a shared block is a bug (grow copies it before handing it out).
  uint16_t* k_row(int32_t layer, SeqId seq, int32_t pos);
  uint16_t* v_row(int32_t layer, SeqId seq, int32_t pos);
  const uint16_t* k_row(int32_t layer, SeqId seq, int32_t pos) const;
  const uint16_t* v_row(int32_t layer, SeqId seq, int32_t pos) const;

  // For attention: the block ids holding positions [0, length) in order, and the K or V
  // rows of one block and layer, [block_size][width].
  std::span<const int32_t> block_table(SeqId seq) const;
  const uint16_t* block_k(int32_t block, int32_t layer) const;
  const uint16_t* block_v(int32_t block, int32_t layer) const;

  // Copies the first n tokens (n < 0: all) of `seq` to host memory, and back.
  KvSnapshot save(SeqId seq, int32_t n = -1) const;
  // Replaces `seq`'s content with the snapshot; kInvalidArgument on a shape mismatch,
  // kResourceExhausted when it does not fit.
  Status restore(SeqId seq, const KvSnapshot& snapshot);

  // Reference count of a block (for tests and diagnostics).
  int32_t block_refcount(int32_t block) const;

 private:
  struct Sequence {
    std::vector<int32_t> blocks;
    int32_t length = 0;
  };
  int32_t allocate_block();
  void release_block(int32_t block);
  uint16_t* block_base(int32_t block);
  const uint16_t* block_base(int32_t block) const;
  size_t row_offset_k(int32_t layer, int32_t slot) const;
  size_t row_offset_v(int32_t layer, int32_t slot) const;
  bool valid_seq(SeqId seq) const;

  KvCacheConfig config_;
  size_t block_elems_ = 0;  // f16 elements per block
  std::vector<uint16_t> pool_;
  std::vector<int32_t> refcount_;
  std::vector<int32_t> free_list_;
  std::vector<Sequence> sequences_;
};

}  // namespace hearth::engine
