// The key/value cache: K and V rows kept in fixed-size blocks, with a block table per
// sequence. Sequences can share a common prefix without copying it: blocks are
// reference-counted, and a shared block that is about to be written is copied first
// (copy-on-write), so one sequence's new tokens never change another's.
//
// Rows are opaque bytes here: the engine decides their element type (f16 by default, f32,
// later quantized types) and converts on the way in and out.
// Layers with a sliding window (KvCacheShape::layer_window) keep their rows in a pool of
// their own, and a sequence releases those of its blocks that no later token can attend to:
// the cache then holds a window's worth of rows for those layers, not the whole context. A
// sequence that has released rows can only be cut back to min_truncation() or beyond (or
// emptied): a shorter prefix would need rows that are gone.
//
// Layout of one block of a pool: for each of the pool's layers, K rows [block_size]
// [k_bytes(layer)] then V rows [block_size][v_bytes(layer)]. A token's row index inside its
// sequence is its position.
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
  // Per layer, the sliding window of its attention: a token sees its last `window` positions
  // (itself included); 0 sees every position. Empty: every layer 0.
  std::vector<int32_t> layer_window;
  // Per layer, its own K and V row bytes where layers differ (hybrid models: lfm2's
  // convolution layers keep one f32 row of n_embd values as their "K" row and no V row).
  // Empty: k_row_bytes and v_row_bytes for every layer.
  std::vector<int32_t> layer_k_row_bytes = {};
  std::vector<int32_t> layer_v_row_bytes = {};
  int32_t window(int32_t layer) const {
    return layer_window.empty() ? 0 : layer_window[static_cast<size_t>(layer)];
  }
  int32_t k_bytes(int32_t layer) const {
    return layer_k_row_bytes.empty() ? k_row_bytes : layer_k_row_bytes[static_cast<size_t>(layer)];
  }
  int32_t v_bytes(int32_t layer) const {
    return layer_v_row_bytes.empty() ? v_row_bytes : layer_v_row_bytes[static_cast<size_t>(layer)];
  }
  // Layers without a window, whose rows a snapshot holds for every token.
  int32_t n_full_layers() const;
  // Bytes of one token's rows over every layer, and over the layers without a window.
  size_t token_bytes() const;
  size_t full_token_bytes() const;
  bool operator==(const KvCacheShape&) const = default;
};

struct KvCacheConfig {
  KvCacheShape shape;
  int32_t block_size = 16;    // tokens per block
  int32_t n_blocks = 0;       // capacity of the pool of the layers without a window
  int32_t max_sequences = 1;  // valid SeqIds are [0, max_sequences)
  // Capacity of each windowed layers' pool; < 0: n_blocks.
  int32_t n_window_blocks = -1;
  // Release the rows of windowed layers that no later token attends to (false keeps every
  // row, as llama-server's --swa-full), keeping `window_slack` positions more than the
  // window needs, so a sequence can still be cut back by that many tokens.
  bool release_outside_windows = true;
  int32_t window_slack = 32;
};

// A sequence's cached rows copied to host memory (the prompt cache, slot save/restore).
struct KvSnapshot {
  KvCacheShape shape;
  int32_t n_tokens = 0;
  // Per token: for each layer its K row then its V row, where tokens before window_first
  // hold the rows of the layers without a window only (the windowed ones were released).
  std::vector<uint8_t> data;
  int32_t window_first = 0;
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
  // Blocks over all pools, and those free.
  int32_t n_blocks() const;
  int32_t max_sequences() const { return config_.max_sequences; }
  int32_t free_blocks() const;
  int32_t used_blocks() const { return n_blocks() - free_blocks(); }
  // Bytes of one token across all layers (K then V per layer), as in KvSnapshot.
  size_t token_bytes() const { return token_bytes_; }
  // Tokens currently cached for `seq` (0 for an unknown sequence).
  int32_t length(SeqId seq) const;
  // The first position whose windowed-layer rows `seq` still holds (0: all of them).
  int32_t window_first(SeqId seq) const;
  // The shortest non-empty prefix `seq` can be cut back to: 0 when it holds every row, else
  // window_first + window - 1 (the rows the next token would attend to), at most length.
  int32_t min_truncation(SeqId seq) const;

  // Free blocks grow(seq, n) would take over all pools, counting the copy of a shared last
  // block and not the rows release_windows() would free first; -1 for an unknown sequence or
  // a bad n. Summing it over several sequences gives an upper bound for growing them all
  // (two sequences sharing a last block need only one copy between them).
  int32_t blocks_needed_to_grow(SeqId seq, int32_t n) const;
  // Appends room for `n` tokens at the end of `seq` (positions length..length+n-1), whose
  // rows the caller then writes. Releases the windowed rows the new tokens cannot see and
  // copies a shared block the new positions fall in first. kResourceExhausted (and no
  // change but that release) when a pool has too few free blocks.
  Status grow(SeqId seq, int32_t n);
  // Releases the windowed-layer blocks of `seq` that hold only positions below
  // length - window + 1 - window_slack (with release_outside_windows).
  void release_windows(SeqId seq);
  // Drops every token at position >= n and returns the new length: n, or 0 when n is below
  // min_truncation() (the whole sequence goes). n >= length does nothing; n < 0 drops
  // everything (as n = 0); an unknown sequence is ignored (0).
  int32_t truncate(SeqId seq, int32_t n);
  void clear(SeqId seq);
  void clear_all();
  // Makes `dst` hold the first `n` tokens of `src` by sharing blocks (dst's old content is
  // dropped first). n is 0, length(src), or in [min_truncation(src), length(src)]. src ==
  // dst truncates. Allocates nothing, so it only fails on bad arguments (and then changes
  // nothing).
  Status share_prefix(SeqId src, SeqId dst, int32_t n);

  // Rows of one token. Writable rows are those of positions added by the latest grow();
  // writing a row of a shared block is a bug (grow copies it before handing it out).
  uint8_t* k_row(int32_t layer, SeqId seq, int32_t pos);
  uint8_t* v_row(int32_t layer, SeqId seq, int32_t pos);
  const uint8_t* k_row(int32_t layer, SeqId seq, int32_t pos) const;
  const uint8_t* v_row(int32_t layer, SeqId seq, int32_t pos) const;

  // For attention: the block ids of `layer`'s pool holding positions [0, length) in order
  // (-1 for a released block of a windowed layer), and the K or V rows of one block and
  // layer, [block_size][width]. Without a layer: the table of the layers without a window.
  std::span<const int32_t> block_table(SeqId seq, int32_t layer) const;
  std::span<const int32_t> block_table(SeqId seq) const;
  const uint8_t* block_k(int32_t block, int32_t layer) const;
  const uint8_t* block_v(int32_t block, int32_t layer) const;

  // Copies the first n tokens (n < 0 or n > length: all) of `seq` to host memory, and back.
  // An unknown sequence, or an n that truncate() would not keep, gives an empty snapshot
  // (n_tokens 0).
  KvSnapshot save(SeqId seq, int32_t n = -1) const;
  // Replaces `seq`'s content with the snapshot; kInvalidArgument on a shape mismatch or a
  // data size that disagrees with n_tokens and window_first, kResourceExhausted (and no
  // change) when it does not fit. Blocks only `seq` holds count as available, since its old
  // content is dropped. Windowed rows the sequence would release at once are not stored.
  Status restore(SeqId seq, const KvSnapshot& snapshot);

  // Reference count of a block of the pool of `layer` (default: the layers without a
  // window), for tests and diagnostics; -1 for an id outside the pool.
  int32_t block_refcount(int32_t block, int32_t layer = -1) const;
  int32_t free_blocks_of_layer(int32_t layer) const;

 private:
  // The layers that share a window size (0: the layers without one), with their pool. Pool
  // 0 always exists, so a cache without layers still accounts for its tokens.
  struct Pool {
    int32_t window = 0;
    std::vector<int32_t> layers;
    size_t block_bytes = 0;
    std::vector<uint8_t> bytes;
    std::vector<int32_t> refcount;
    std::vector<int32_t> free_list;
    int32_t n_blocks() const { return static_cast<int32_t>(refcount.size()); }
  };
  // One sequence's blocks in one pool: ceil(length / block_size) entries, -1 for released
  // ones (all below first_pos).
  struct Table {
    std::vector<int32_t> blocks;
    int32_t first_pos = 0;  // the first position whose rows are held
  };
  struct Sequence {
    int32_t length = 0;
    std::vector<Table> tables;  // per pool
  };
  Pool& pool_of(int32_t layer) {
    return pools_[static_cast<size_t>(layer_pool_[static_cast<size_t>(layer)])];
  }
  const Pool& pool_of(int32_t layer) const {
    return pools_[static_cast<size_t>(layer_pool_[static_cast<size_t>(layer)])];
  }
  void build_pools();
  static int32_t allocate_block(Pool& pool);
  static void release_block(Pool& pool, int32_t block);
  size_t row_offset_k(int32_t layer, int32_t slot) const;
  size_t row_offset_v(int32_t layer, int32_t slot) const;
  const uint8_t* row(int32_t layer, SeqId seq, int32_t pos, bool k) const;
  bool valid_seq(SeqId seq) const;
  Status check_seq(SeqId seq, const char* what) const;
  int32_t blocks_for_length(int32_t n_tokens) const;
  int32_t blocks_needed_in_pool(const Pool& pool, const Table& table, int32_t length,
                                int32_t n) const;
  // The first position of a windowed pool a sequence of `length` tokens keeps.
  int32_t keep_from(const Pool& pool, int32_t length) const;
  void release_below(Pool& pool, Table& table, int32_t first_pos);
  void drop_tail(Pool& pool, Table& table, int32_t n_tokens);
  // Gives `seq` its own copy of its last block in `pool` when new positions would land in it
  // while another sequence also holds it.
  void make_tail_exclusive(Pool& pool, Table& table, int32_t length);
  void copy_rows(Pool& pool, int32_t from_block, int32_t to_block, int32_t n_slots);
  void copy_snapshot_rows(SeqId seq, const KvSnapshot& snapshot);

  KvCacheConfig config_;
  Status init_status_;
  size_t token_bytes_ = 0;  // bytes per token over all layers
  std::vector<Pool> pools_;
  std::vector<int32_t> layer_pool_;   // layer -> pool
  std::vector<size_t> layer_offset_;  // layer -> byte offset of its rows in its pool's blocks
  std::vector<Sequence> sequences_;
};

}  // namespace hearth::engine
