// The key/value cache: K and V rows kept in fixed-size blocks, with a block table per
// sequence. Sequences can share a common prefix without copying it: blocks are
// reference-counted, and a shared block that is about to be written is copied first
// (copy-on-write), so one sequence's new tokens never change another's.
//
// Rows are opaque bytes here: the engine decides their element type (f16 by default, f32,
// later quantized types) and converts on the way in and out.
// Layout of one block: for each layer, K rows [block_size][k_row_bytes] then V rows
// [block_size][v_row_bytes]. A token's row index inside its sequence is its position.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <vector>

#include "base/status.h"

namespace hearth::engine {

using SeqId = int32_t;

struct KvCacheShape {
  int32_t n_layer = 0;
  int32_t k_row_bytes = 0;  // bytes per token per layer for K (n_head_kv * head_dim elements)
  int32_t v_row_bytes = 0;  // same for V
  bool operator==(const KvCacheShape&) const = default;
};

struct KvCacheConfig {
  KvCacheShape shape;
  int32_t block_size = 16;    // tokens per block
  int32_t n_blocks = 0;       // capacity of the pool
  int32_t max_sequences = 1;  // valid SeqIds are [0, max_sequences)
};

// A sequence's cached rows copied to host memory (the prompt cache, slot save/restore).
struct KvSnapshot {
  KvCacheShape shape;
  int32_t n_tokens = 0;
  std::vector<uint8_t> data;  // per token: for each layer K row then V row
  size_t bytes() const { return data.size(); }
};

// Invalid arguments never crash: entries that take a sequence id or a count check them
// (Status-returning ones report kInvalidArgument; the void and value ones treat an unknown
// sequence as empty and do nothing). The row and block accessors are hot paths and only
// assert their arguments, in debug builds.
// Not thread-safe: one owner (the scheduler) mutates it; readers run between mutations.
class KvCache {
 public:
  // A config that fails validate_config() yields a cache with no blocks and no sequences
  // (every entry then reports an invalid sequence); init_status() holds the reason.
  explicit KvCache(const KvCacheConfig& config);
  KvCache(const KvCache&) = delete;
  KvCache& operator=(const KvCache&) = delete;

  // kInvalidArgument unless every count is in range (block_size >= 1, the rest >= 0) and
  // the pool's size in bytes fits in memory addressing.
  static Status validate_config(const KvCacheConfig& config);
  // validate_config(), then a cache on the heap.
  static Result<std::unique_ptr<KvCache>> create(const KvCacheConfig& config);
  const Status& init_status() const { return init_status_; }

  const KvCacheConfig& config() const { return config_; }
  int32_t block_size() const { return config_.block_size; }
  int32_t n_blocks() const { return config_.n_blocks; }
  int32_t max_sequences() const { return config_.max_sequences; }
  int32_t free_blocks() const;
  int32_t used_blocks() const { return n_blocks() - free_blocks(); }
  // Bytes of one token across all layers (K then V per layer), as in KvSnapshot.
  size_t token_bytes() const { return token_bytes_; }
  // Tokens currently cached for `seq` (0 for an unknown sequence).
  int32_t length(SeqId seq) const;

  // Free blocks grow(seq, n) would take, counting the copy of a shared last block; -1 for an
  // unknown sequence or a bad n. Summing it over several sequences gives an upper bound for
  // growing them all (two sequences sharing a last block need only one copy between them).
  int32_t blocks_needed_to_grow(SeqId seq, int32_t n) const;
  // Appends room for `n` tokens at the end of `seq` (positions length..length+n-1), whose
  // rows the caller then writes. Copies a shared block the new positions fall in first.
  // kResourceExhausted (and no change) when the pool has too few free blocks.
  Status grow(SeqId seq, int32_t n);
  // Drops every token at position >= n. n >= length does nothing; n < 0 drops everything
  // (as n = 0); an unknown sequence is ignored.
  void truncate(SeqId seq, int32_t n);
  void clear(SeqId seq);
  void clear_all();
  // Makes `dst` hold the first `n` tokens of `src` by sharing blocks (dst's old content is
  // dropped first). n <= length(src). src == dst truncates. Allocates nothing, so it only
  // fails on bad arguments (and then changes nothing).
  Status share_prefix(SeqId src, SeqId dst, int32_t n);

  // Rows of one token. Writable rows are those of positions added by the latest grow();
  // writing a row of a shared block is a bug (grow copies it before handing it out).
  uint8_t* k_row(int32_t layer, SeqId seq, int32_t pos);
  uint8_t* v_row(int32_t layer, SeqId seq, int32_t pos);
  const uint8_t* k_row(int32_t layer, SeqId seq, int32_t pos) const;
  const uint8_t* v_row(int32_t layer, SeqId seq, int32_t pos) const;

  // For attention: the block ids holding positions [0, length) in order, and the K or V
  // rows of one block and layer, [block_size][width].
  std::span<const int32_t> block_table(SeqId seq) const;
  const uint8_t* block_k(int32_t block, int32_t layer) const;
  const uint8_t* block_v(int32_t block, int32_t layer) const;

  // Copies the first n tokens (n < 0 or n > length: all) of `seq` to host memory, and back.
  // An unknown sequence gives an empty snapshot (n_tokens 0).
  KvSnapshot save(SeqId seq, int32_t n = -1) const;
  // Replaces `seq`'s content with the snapshot; kInvalidArgument on a shape mismatch or a
  // data size that disagrees with n_tokens, kResourceExhausted (and no change) when it does
  // not fit. Blocks only `seq` holds count as available, since its old content is dropped.
  Status restore(SeqId seq, const KvSnapshot& snapshot);

  // Reference count of a block (for tests and diagnostics); -1 for an id outside the pool.
  int32_t block_refcount(int32_t block) const;

 private:
  struct Sequence {
    std::vector<int32_t> blocks;  // always ceil(length / block_size) entries
    int32_t length = 0;
  };
  int32_t allocate_block();
  void release_block(int32_t block);
  uint8_t* block_base(int32_t block);
  const uint8_t* block_base(int32_t block) const;
  size_t row_offset_k(int32_t layer, int32_t slot) const;
  size_t row_offset_v(int32_t layer, int32_t slot) const;
  bool valid_seq(SeqId seq) const;
  Status check_seq(SeqId seq, const char* what) const;
  int32_t blocks_for_length(int32_t n_tokens) const;
  // Gives `seq` its own copy of its last block when new positions would land in it while
  // another sequence also holds it.
  void make_tail_exclusive(Sequence& seq);
  void copy_rows(int32_t from_block, int32_t to_block, int32_t n_slots);

  KvCacheConfig config_;
  Status init_status_;
  size_t layer_bytes_ = 0;  // bytes per block and layer: K rows then V rows
  size_t block_bytes_ = 0;  // bytes per block
  size_t token_bytes_ = 0;  // bytes per token over all layers
  std::vector<uint8_t> pool_;
  std::vector<int32_t> refcount_;
  std::vector<int32_t> free_list_;
  std::vector<Sequence> sequences_;
};

}  // namespace hearth::engine
