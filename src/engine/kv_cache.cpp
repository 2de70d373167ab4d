#include "engine/kv_cache.h"

#include <algorithm>
#include <cassert>
#include <cstring>
#include <limits>
#include <string>
#include <utility>

#include <fmt/format.h>

namespace hearth::engine {
namespace {

constexpr int32_t kInt32Max = std::numeric_limits<int32_t>::max();

// a * b, or false when it does not fit in size_t.
bool mul_fits(size_t a, size_t b, size_t* out) {
  return !__builtin_mul_overflow(a, b, out);
}

std::string shape_text(const KvCacheShape& shape) {
  return fmt::format("{{n_layer {}, k_row_bytes {}, v_row_bytes {}{}}}", shape.n_layer,
                     shape.k_row_bytes, shape.v_row_bytes,
                     shape.layer_k_row_bytes.empty() ? "" : ", per-layer rows");
}

// True when the per-layer row sizes are absent, or one non-negative value per layer each.
bool layer_rows_valid(const KvCacheShape& shape) {
  const auto valid = [&](const std::vector<int32_t>& rows) {
    return rows.empty() ||
           (rows.size() == static_cast<size_t>(shape.n_layer) &&
            std::all_of(rows.begin(), rows.end(), [](int32_t n) { return n >= 0; }));
  };
  return valid(shape.layer_k_row_bytes) && valid(shape.layer_v_row_bytes) &&
         shape.layer_k_row_bytes.empty() == shape.layer_v_row_bytes.empty();
}

}  // namespace

int32_t KvCacheShape::n_full_layers() const {
  if (layer_window.empty()) return n_layer;
  return static_cast<int32_t>(std::count(layer_window.begin(), layer_window.end(), 0));
}

size_t KvCacheShape::token_bytes() const {
  size_t n = 0;
  for (int32_t layer = 0; layer < n_layer; ++layer)
    n += static_cast<size_t>(k_bytes(layer)) + static_cast<size_t>(v_bytes(layer));
  return n;
}

size_t KvCacheShape::full_token_bytes() const {
  size_t n = 0;
  for (int32_t layer = 0; layer < n_layer; ++layer)
    if (window(layer) == 0)
      n += static_cast<size_t>(k_bytes(layer)) + static_cast<size_t>(v_bytes(layer));
  return n;
}

Status KvCache::validate_config(const KvCacheConfig& config) {
  const KvCacheShape& shape = config.shape;
  if (shape.n_layer < 0 || shape.k_row_bytes < 0 || shape.v_row_bytes < 0 ||
      !layer_rows_valid(shape)) {
    return error(
        ErrorCode::kInvalidArgument,
        "kv cache: negative shape or per-layer rows not one per layer " + shape_text(shape));
  }
  if (!shape.layer_window.empty() &&
      (shape.layer_window.size() != static_cast<size_t>(shape.n_layer) ||
       std::any_of(shape.layer_window.begin(), shape.layer_window.end(),
                   [](int32_t w) { return w < 0; }))) {
    return error(ErrorCode::kInvalidArgument,
                 fmt::format("kv cache: {} layer windows for {} layers (each >= 0)",
                             shape.layer_window.size(), shape.n_layer));
  }
  if (config.block_size < 1) {
    return error(ErrorCode::kInvalidArgument,
                 fmt::format("kv cache: block_size {} must be at least 1", config.block_size));
  }
  if (config.n_blocks < 0 || config.max_sequences < 0 || config.window_slack < 0) {
    return error(ErrorCode::kInvalidArgument,
                 fmt::format("kv cache: negative n_blocks {}, max_sequences {} or window_slack {}",
                             config.n_blocks, config.max_sequences, config.window_slack));
  }
  // Every row is at most INT32_MAX bytes, so a token's rows over n_layer layers fit size_t.
  const size_t token = shape.token_bytes();
  const auto n_pool = static_cast<size_t>(std::max(config.n_blocks, config.n_window_blocks));
  size_t block = 0, pool = 0;
  if (!mul_fits(token, static_cast<size_t>(config.block_size), &block) ||
      !mul_fits(block, n_pool, &pool) ||
      pool > static_cast<size_t>(std::numeric_limits<std::ptrdiff_t>::max())) {
    return error(ErrorCode::kInvalidArgument,
                 fmt::format("kv cache: pool of {} blocks of {} tokens with shape {} is too large",
                             n_pool, config.block_size, shape_text(shape)));
  }
  return Status::ok();
}

Result<std::unique_ptr<KvCache>> KvCache::create(const KvCacheConfig& config) {
  HEARTH_RETURN_IF_ERROR(validate_config(config));
  return std::make_unique<KvCache>(config);
}

KvCache::KvCache(const KvCacheConfig& config) : init_status_(validate_config(config)) {
  if (!init_status_.is_ok()) {
    config_.n_blocks = 0;
    config_.max_sequences = 0;
    config_.shape = {};
    build_pools();
    return;
  }
  config_ = config;
  const KvCacheShape& shape = config_.shape;
  token_bytes_ = shape.token_bytes();
  sequences_.resize(static_cast<size_t>(config_.max_sequences));
  build_pools();
  clear_all();
}

// Pool 0 for the layers without a window, then one per window size in order of appearance.
void KvCache::build_pools() {
  const KvCacheShape& shape = config_.shape;
  pools_.assign(1, Pool{});
  layer_pool_.assign(static_cast<size_t>(shape.n_layer), 0);
  layer_offset_.assign(static_cast<size_t>(shape.n_layer), 0);
  for (int32_t layer = 0; layer < shape.n_layer; ++layer) {
    const int32_t window = shape.window(layer);
    size_t p = 0;
    while (p < pools_.size() && pools_[p].window != window) ++p;
    if (p == pools_.size()) pools_.push_back(Pool{window, {}, 0, {}, {}, {}});
    layer_pool_[static_cast<size_t>(layer)] = static_cast<int32_t>(p);
    // The layer's rows follow those of the pool's earlier layers in each block.
    layer_offset_[static_cast<size_t>(layer)] = pools_[p].block_bytes;
    pools_[p].block_bytes +=
        (static_cast<size_t>(shape.k_bytes(layer)) + static_cast<size_t>(shape.v_bytes(layer))) *
        static_cast<size_t>(config_.block_size);
    pools_[p].layers.push_back(layer);
  }
  for (Pool& pool : pools_) {
    const int32_t n = pool.window == 0 || config_.n_window_blocks < 0 ? config_.n_blocks
                                                                      : config_.n_window_blocks;
    pool.bytes.assign(pool.block_bytes * static_cast<size_t>(n), 0);
    pool.refcount.assign(static_cast<size_t>(n), 0);
  }
  for (Sequence& s : sequences_) s.tables.assign(pools_.size(), Table{});
}

int32_t KvCache::n_blocks() const {
  int32_t n = 0;
  for (const Pool& pool : pools_) n += pool.n_blocks();
  return n;
}

int32_t KvCache::free_blocks() const {
  size_t n = 0;
  for (const Pool& pool : pools_) n += pool.free_list.size();
  return static_cast<int32_t>(n);
}

int32_t KvCache::free_blocks_of_layer(int32_t layer) const {
  if (layer < 0 || layer >= config_.shape.n_layer) return -1;
  return static_cast<int32_t>(pool_of(layer).free_list.size());
}

bool KvCache::valid_seq(SeqId seq) const {
  return seq >= 0 && seq < config_.max_sequences;
}

Status KvCache::check_seq(SeqId seq, const char* what) const {
  if (valid_seq(seq)) return Status::ok();
  return error(ErrorCode::kInvalidArgument,
               fmt::format("kv cache {}: sequence id {} is outside [0, {})", what, seq,
                           config_.max_sequences));
}

int32_t KvCache::length(SeqId seq) const {
  return valid_seq(seq) ? sequences_[static_cast<size_t>(seq)].length : 0;
}

int32_t KvCache::window_first(SeqId seq) const {
  if (!valid_seq(seq)) return 0;
  int32_t first = 0;
  for (const Table& t : sequences_[static_cast<size_t>(seq)].tables)
    first = std::max(first, t.first_pos);
  return first;
}

int32_t KvCache::min_truncation(SeqId seq) const {
  if (!valid_seq(seq)) return 0;
  const Sequence& s = sequences_[static_cast<size_t>(seq)];
  int32_t shortest = 0;
  for (size_t p = 1; p < pools_.size(); ++p) {
    const int32_t first = s.tables[p].first_pos;
    if (first > 0) shortest = std::max(shortest, first + pools_[p].window - 1);
  }
  return std::min(shortest, s.length);
}

int32_t KvCache::blocks_for_length(int32_t n_tokens) const {
  const int64_t n = n_tokens;
  return static_cast<int32_t>((n + config_.block_size - 1) / config_.block_size);
}

int32_t KvCache::allocate_block(Pool& pool) {
  assert(!pool.free_list.empty());
  const int32_t block = pool.free_list.back();
  pool.free_list.pop_back();
  assert(pool.refcount[static_cast<size_t>(block)] == 0);
  pool.refcount[static_cast<size_t>(block)] = 1;
  return block;
}

void KvCache::release_block(Pool& pool, int32_t block) {
  if (block < 0) return;  // released before (a windowed layer's old block)
  int32_t& count = pool.refcount[static_cast<size_t>(block)];
  assert(count > 0);
  if (--count == 0) pool.free_list.push_back(block);
}

size_t KvCache::row_offset_k(int32_t layer, int32_t slot) const {
  return layer_offset_[static_cast<size_t>(layer)] +
         static_cast<size_t>(slot) * static_cast<size_t>(config_.shape.k_bytes(layer));
}

size_t KvCache::row_offset_v(int32_t layer, int32_t slot) const {
  const size_t k_rows =
      static_cast<size_t>(config_.block_size) * static_cast<size_t>(config_.shape.k_bytes(layer));
  return layer_offset_[static_cast<size_t>(layer)] + k_rows +
         static_cast<size_t>(slot) * static_cast<size_t>(config_.shape.v_bytes(layer));
}

// Copies the first n_slots rows of every layer of the pool (one block is contiguous).
void KvCache::copy_rows(Pool& pool, int32_t from_block, int32_t to_block, int32_t n_slots) {
  const uint8_t* from = pool.bytes.data() + static_cast<size_t>(from_block) * pool.block_bytes;
  uint8_t* to = pool.bytes.data() + static_cast<size_t>(to_block) * pool.block_bytes;
  for (int32_t layer : pool.layers) {
    const size_t k_bytes =
        static_cast<size_t>(n_slots) * static_cast<size_t>(config_.shape.k_bytes(layer));
    const size_t v_bytes =
        static_cast<size_t>(n_slots) * static_cast<size_t>(config_.shape.v_bytes(layer));
    const size_t k_at = row_offset_k(layer, 0);
    const size_t v_at = row_offset_v(layer, 0);
    if (k_bytes > 0) std::memcpy(to + k_at, from + k_at, k_bytes);
    if (v_bytes > 0) std::memcpy(to + v_at, from + v_at, v_bytes);
  }
}

int32_t KvCache::blocks_needed_in_pool(const Pool& pool, const Table& table, int32_t length,
                                       int32_t n) const {
  int32_t needed = blocks_for_length(length + n) - static_cast<int32_t>(table.blocks.size());
  const bool tail_partial = length % config_.block_size != 0;
  if (tail_partial && table.blocks.back() >= 0 &&
      pool.refcount[static_cast<size_t>(table.blocks.back())] > 1)
    ++needed;
  return needed;
}

int32_t KvCache::blocks_needed_to_grow(SeqId seq, int32_t n) const {
  if (!valid_seq(seq) || n < 0) return -1;
  const Sequence& s = sequences_[static_cast<size_t>(seq)];
  if (n > kInt32Max - s.length) return -1;
  if (n == 0) return 0;
  int32_t needed = 0;
  for (size_t p = 0; p < pools_.size(); ++p)
    needed += blocks_needed_in_pool(pools_[p], s.tables[p], s.length, n);
  return needed;
}

void KvCache::make_tail_exclusive(Pool& pool, Table& table, int32_t length) {
  const int32_t filled = length % config_.block_size;
  // A full last block stays as it is: the new positions start a fresh block.
  if (filled == 0) return;
  int32_t& tail = table.blocks.back();
  if (tail < 0 || pool.refcount[static_cast<size_t>(tail)] == 1) return;
  const int32_t copy = allocate_block(pool);
  copy_rows(pool, tail, copy, filled);
  release_block(pool, tail);
  tail = copy;
}

int32_t KvCache::keep_from(const Pool& pool, int32_t length) const {
  if (pool.window == 0 || !config_.release_outside_windows) return 0;
  const int64_t first = int64_t{length} - pool.window + 1 - config_.window_slack;
  return first <= 0 ? 0 : static_cast<int32_t>(first / config_.block_size * config_.block_size);
}

// Releases the blocks wholly below first_pos.
void KvCache::release_below(Pool& pool, Table& table, int32_t first_pos) {
  if (first_pos <= table.first_pos) return;
  const auto n_below =
      std::min(table.blocks.size(), static_cast<size_t>(first_pos / config_.block_size));
  for (size_t i = 0; i < n_below; ++i) {
    release_block(pool, table.blocks[i]);
    table.blocks[i] = -1;
  }
  table.first_pos = first_pos;
}

void KvCache::release_windows(SeqId seq) {
  if (!valid_seq(seq)) return;
  Sequence& s = sequences_[static_cast<size_t>(seq)];
  for (size_t p = 1; p < pools_.size(); ++p)
    release_below(pools_[p], s.tables[p], keep_from(pools_[p], s.length));
}

Status KvCache::grow(SeqId seq, int32_t n) {
  HEARTH_RETURN_IF_ERROR(check_seq(seq, "grow"));
  Sequence& s = sequences_[static_cast<size_t>(seq)];
  if (n < 0 || n > kInt32Max - s.length) {
    return error(ErrorCode::kInvalidArgument,
                 fmt::format("kv cache grow: cannot add {} tokens to sequence {} of length {}", n,
                             seq, s.length));
  }
  if (n == 0) return Status::ok();
  release_windows(seq);
  for (size_t p = 0; p < pools_.size(); ++p) {
    const int32_t needed = blocks_needed_in_pool(pools_[p], s.tables[p], s.length, n);
    const auto free = static_cast<int32_t>(pools_[p].free_list.size());
    if (needed > free) {
      return error(ErrorCode::kResourceExhausted,
                   fmt::format("kv cache grow: sequence {} needs {} blocks for {} more tokens, {} "
                               "of {} are free",
                               seq, needed, n, free, pools_[p].n_blocks()));
    }
  }
  const auto n_total = static_cast<size_t>(blocks_for_length(s.length + n));
  for (size_t p = 0; p < pools_.size(); ++p) {
    make_tail_exclusive(pools_[p], s.tables[p], s.length);
    while (s.tables[p].blocks.size() < n_total)
      s.tables[p].blocks.push_back(allocate_block(pools_[p]));
  }
  s.length += n;
  return Status::ok();
}

void KvCache::drop_tail(Pool& pool, Table& table, int32_t n_tokens) {
  const auto keep = static_cast<size_t>(blocks_for_length(n_tokens));
  for (size_t i = keep; i < table.blocks.size(); ++i) release_block(pool, table.blocks[i]);
  table.blocks.resize(std::min(keep, table.blocks.size()));
  if (n_tokens == 0) table.first_pos = 0;
}

int32_t KvCache::truncate(SeqId seq, int32_t n) {
  if (!valid_seq(seq)) return 0;
  Sequence& s = sequences_[static_cast<size_t>(seq)];
  n = std::max(n, 0);
  if (n >= s.length) return s.length;
  if (n < min_truncation(seq)) n = 0;
  for (size_t p = 0; p < pools_.size(); ++p) drop_tail(pools_[p], s.tables[p], n);
  s.length = n;
  return n;
}

void KvCache::clear(SeqId seq) {
  truncate(seq, 0);
}

void KvCache::clear_all() {
  for (Sequence& s : sequences_) {
    s.tables.assign(pools_.size(), Table{});
    s.length = 0;
  }
  for (Pool& pool : pools_) {
    std::fill(pool.refcount.begin(), pool.refcount.end(), 0);
    // Hand out low block ids first, which keeps layouts predictable in tests and dumps.
    pool.free_list.clear();
    pool.free_list.reserve(pool.refcount.size());
    for (int32_t block = pool.n_blocks() - 1; block >= 0; --block) pool.free_list.push_back(block);
  }
}

Status KvCache::share_prefix(SeqId src, SeqId dst, int32_t n) {
  HEARTH_RETURN_IF_ERROR(check_seq(src, "share_prefix source"));
  HEARTH_RETURN_IF_ERROR(check_seq(dst, "share_prefix destination"));
  const Sequence& from = sequences_[static_cast<size_t>(src)];
  if (n < 0 || n > from.length || (n > 0 && n < min_truncation(src))) {
    return error(ErrorCode::kInvalidArgument,
                 fmt::format("kv cache share_prefix: prefix of {} tokens of sequence {} of "
                             "length {} (windowed rows held from {})",
                             n, src, from.length, window_first(src)));
  }
  if (src == dst) {
    truncate(src, n);
    return Status::ok();
  }
  const auto n_shared = static_cast<size_t>(blocks_for_length(n));
  std::vector<Table> tables(pools_.size());
  // Take the new references before dropping dst's old ones, so a block both hold never
  // passes through the free list.
  for (size_t p = 0; p < pools_.size(); ++p) {
    const Table& t = from.tables[p];
    tables[p].blocks.assign(t.blocks.begin(),
                            t.blocks.begin() + static_cast<std::ptrdiff_t>(n_shared));
    tables[p].first_pos = n == 0 ? 0 : t.first_pos;
    for (int32_t block : tables[p].blocks)
      if (block >= 0) ++pools_[p].refcount[static_cast<size_t>(block)];
  }
  clear(dst);
  Sequence& to = sequences_[static_cast<size_t>(dst)];
  to.tables = std::move(tables);
  to.length = n;
  return Status::ok();
}

uint8_t* KvCache::k_row(int32_t layer, SeqId seq, int32_t pos) {
  return const_cast<uint8_t*>(row(layer, seq, pos, true));
}

uint8_t* KvCache::v_row(int32_t layer, SeqId seq, int32_t pos) {
  return const_cast<uint8_t*>(row(layer, seq, pos, false));
}

const uint8_t* KvCache::k_row(int32_t layer, SeqId seq, int32_t pos) const {
  return row(layer, seq, pos, true);
}

const uint8_t* KvCache::v_row(int32_t layer, SeqId seq, int32_t pos) const {
  return row(layer, seq, pos, false);
}

const uint8_t* KvCache::row(int32_t layer, SeqId seq, int32_t pos, bool k) const {
  assert(valid_seq(seq) && layer >= 0 && layer < config_.shape.n_layer);
  const Sequence& s = sequences_[static_cast<size_t>(seq)];
  assert(pos >= 0 && pos < s.length);
  const auto p = static_cast<size_t>(layer_pool_[static_cast<size_t>(layer)]);
  const int32_t block = s.tables[p].blocks[static_cast<size_t>(pos / config_.block_size)];
  assert(block >= 0 && pos >= s.tables[p].first_pos);
  const int32_t slot = pos % config_.block_size;
  return pools_[p].bytes.data() + static_cast<size_t>(block) * pools_[p].block_bytes +
         (k ? row_offset_k(layer, slot) : row_offset_v(layer, slot));
}

std::span<const int32_t> KvCache::block_table(SeqId seq, int32_t layer) const {
  if (!valid_seq(seq) || layer < 0 || layer >= config_.shape.n_layer) return {};
  return sequences_[static_cast<size_t>(seq)]
      .tables[static_cast<size_t>(layer_pool_[static_cast<size_t>(layer)])]
      .blocks;
}

std::span<const int32_t> KvCache::block_table(SeqId seq) const {
  if (!valid_seq(seq)) return {};
  return sequences_[static_cast<size_t>(seq)].tables[0].blocks;
}

const uint8_t* KvCache::block_k(int32_t block, int32_t layer) const {
  assert(layer >= 0 && layer < config_.shape.n_layer);
  const Pool& pool = pool_of(layer);
  assert(block >= 0 && block < pool.n_blocks());
  return pool.bytes.data() + static_cast<size_t>(block) * pool.block_bytes + row_offset_k(layer, 0);
}

const uint8_t* KvCache::block_v(int32_t block, int32_t layer) const {
  assert(layer >= 0 && layer < config_.shape.n_layer);
  const Pool& pool = pool_of(layer);
  assert(block >= 0 && block < pool.n_blocks());
  return pool.bytes.data() + static_cast<size_t>(block) * pool.block_bytes + row_offset_v(layer, 0);
}

KvSnapshot KvCache::save(SeqId seq, int32_t n) const {
  KvSnapshot snapshot;
  snapshot.shape = config_.shape;
  if (!valid_seq(seq)) return snapshot;
  const int32_t len = sequences_[static_cast<size_t>(seq)].length;
  if (n < 0 || n > len) n = len;
  if (n > 0 && n < len && n < min_truncation(seq)) return snapshot;
  snapshot.n_tokens = n;
  snapshot.window_first = n == 0 ? 0 : window_first(seq);
  const size_t full_bytes = config_.shape.full_token_bytes();
  snapshot.data.resize(static_cast<size_t>(snapshot.window_first) * full_bytes +
                       static_cast<size_t>(n - snapshot.window_first) * token_bytes_);
  uint8_t* out = snapshot.data.data();
  for (int32_t pos = 0; pos < n; ++pos) {
    for (int32_t layer = 0; layer < config_.shape.n_layer; ++layer) {
      if (pos < snapshot.window_first && config_.shape.window(layer) > 0) continue;
      const auto k_bytes = static_cast<size_t>(config_.shape.k_bytes(layer));
      const auto v_bytes = static_cast<size_t>(config_.shape.v_bytes(layer));
      if (k_bytes > 0) std::memcpy(out, k_row(layer, seq, pos), k_bytes);
      out += k_bytes;
      if (v_bytes > 0) std::memcpy(out, v_row(layer, seq, pos), v_bytes);
      out += v_bytes;
    }
  }
  return snapshot;
}

Status KvCache::restore(SeqId seq, const KvSnapshot& snapshot) {
  HEARTH_RETURN_IF_ERROR(check_seq(seq, "restore"));
  if (snapshot.shape != config_.shape) {
    return error(ErrorCode::kInvalidArgument,
                 "kv cache restore: snapshot shape " + shape_text(snapshot.shape) +
                     " differs from the cache's " + shape_text(config_.shape));
  }
  const int32_t n = snapshot.n_tokens;
  const int32_t wf = snapshot.window_first;
  const size_t full_bytes = config_.shape.full_token_bytes();
  const bool size_ok = n >= 0 && wf >= 0 && wf <= n &&
                       snapshot.data.size() == static_cast<size_t>(wf) * full_bytes +
                                                   static_cast<size_t>(n - wf) * token_bytes_;
  if (!size_ok) {
    return error(ErrorCode::kInvalidArgument,
                 fmt::format("kv cache restore: snapshot of {} tokens (windowed rows from {}) "
                             "holds {} bytes, expected {} per token",
                             n, wf, snapshot.data.size(), token_bytes_));
  }
  const Sequence& old = sequences_[static_cast<size_t>(seq)];
  std::vector<int32_t> first_pos(pools_.size(), 0);
  for (size_t p = 0; p < pools_.size(); ++p) {
    if (pools_[p].window > 0) first_pos[p] = std::max(wf, keep_from(pools_[p], n));
    const int32_t needed = blocks_for_length(n) - first_pos[p] / config_.block_size;
    // Blocks only this sequence holds come back when its old content is dropped.
    int32_t available = static_cast<int32_t>(pools_[p].free_list.size());
    for (int32_t block : old.tables[p].blocks)
      if (block >= 0 && pools_[p].refcount[static_cast<size_t>(block)] == 1) ++available;
    if (needed > available) {
      return error(ErrorCode::kResourceExhausted,
                   fmt::format("kv cache restore: {} tokens need {} blocks, {} are available", n,
                               needed, available));
    }
  }
  clear(seq);
  Sequence& s = sequences_[static_cast<size_t>(seq)];
  for (size_t p = 0; p < pools_.size(); ++p) {
    Table& t = s.tables[p];
    t.first_pos = first_pos[p];
    const int32_t first_block = first_pos[p] / config_.block_size;
    for (int32_t i = 0; i < blocks_for_length(n); ++i)
      t.blocks.push_back(i < first_block ? -1 : allocate_block(pools_[p]));
  }
  s.length = n;
  copy_snapshot_rows(seq, snapshot);
  return Status::ok();
}

// The snapshot's rows into `seq`'s blocks, skipping the windowed ones it does not keep.
void KvCache::copy_snapshot_rows(SeqId seq, const KvSnapshot& snapshot) {
  const Sequence& s = sequences_[static_cast<size_t>(seq)];
  const uint8_t* in = snapshot.data.data();
  for (int32_t pos = 0; pos < snapshot.n_tokens; ++pos) {
    for (int32_t layer = 0; layer < config_.shape.n_layer; ++layer) {
      const bool windowed = config_.shape.window(layer) > 0;
      if (pos < snapshot.window_first && windowed) continue;
      const auto k_bytes = static_cast<size_t>(config_.shape.k_bytes(layer));
      const auto v_bytes = static_cast<size_t>(config_.shape.v_bytes(layer));
      const auto p = static_cast<size_t>(layer_pool_[static_cast<size_t>(layer)]);
      if (pos >= s.tables[p].first_pos) {
        if (k_bytes > 0) std::memcpy(k_row(layer, seq, pos), in, k_bytes);
        if (v_bytes > 0) std::memcpy(v_row(layer, seq, pos), in + k_bytes, v_bytes);
      }
      in += k_bytes + v_bytes;
    }
  }
}

int32_t KvCache::block_refcount(int32_t block, int32_t layer) const {
  const Pool& pool = layer < 0 || layer >= config_.shape.n_layer ? pools_[0] : pool_of(layer);
  if (block < 0 || block >= pool.n_blocks()) return -1;
  return pool.refcount[static_cast<size_t>(block)];
}

}  // namespace hearth::engine
