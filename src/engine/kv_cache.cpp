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
  return fmt::format("{{n_layer {}, k_row_bytes {}, v_row_bytes {}}}", shape.n_layer,
                     shape.k_row_bytes, shape.v_row_bytes);
}

}  // namespace

Status KvCache::validate_config(const KvCacheConfig& config) {
  const KvCacheShape& shape = config.shape;
  if (shape.n_layer < 0 || shape.k_row_bytes < 0 || shape.v_row_bytes < 0) {
    return error(ErrorCode::kInvalidArgument, "kv cache: negative shape " + shape_text(shape));
  }
  if (config.block_size < 1) {
    return error(ErrorCode::kInvalidArgument,
                 fmt::format("kv cache: block_size {} must be at least 1", config.block_size));
  }
  if (config.n_blocks < 0 || config.max_sequences < 0) {
    return error(ErrorCode::kInvalidArgument,
                 fmt::format("kv cache: negative n_blocks {} or max_sequences {}", config.n_blocks,
                             config.max_sequences));
  }
  const size_t row_pair =
      static_cast<size_t>(shape.k_row_bytes) + static_cast<size_t>(shape.v_row_bytes);
  size_t layer = 0, block = 0, pool = 0;
  if (!mul_fits(row_pair, static_cast<size_t>(config.block_size), &layer) ||
      !mul_fits(layer, static_cast<size_t>(shape.n_layer), &block) ||
      !mul_fits(block, static_cast<size_t>(config.n_blocks), &pool) ||
      pool > static_cast<size_t>(std::numeric_limits<std::ptrdiff_t>::max())) {
    return error(ErrorCode::kInvalidArgument,
                 fmt::format("kv cache: pool of {} blocks of {} tokens with shape {} is too large",
                             config.n_blocks, config.block_size, shape_text(shape)));
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
    return;
  }
  config_ = config;
  const KvCacheShape& shape = config_.shape;
  const size_t row_pair =
      static_cast<size_t>(shape.k_row_bytes) + static_cast<size_t>(shape.v_row_bytes);
  layer_bytes_ = row_pair * static_cast<size_t>(config_.block_size);
  block_bytes_ = layer_bytes_ * static_cast<size_t>(shape.n_layer);
  token_bytes_ = row_pair * static_cast<size_t>(shape.n_layer);
  pool_.assign(block_bytes_ * static_cast<size_t>(config_.n_blocks), 0);
  refcount_.assign(static_cast<size_t>(config_.n_blocks), 0);
  sequences_.resize(static_cast<size_t>(config_.max_sequences));
  clear_all();
}

int32_t KvCache::free_blocks() const {
  return static_cast<int32_t>(free_list_.size());
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

int32_t KvCache::blocks_for_length(int32_t n_tokens) const {
  const int64_t n = n_tokens;
  return static_cast<int32_t>((n + config_.block_size - 1) / config_.block_size);
}

int32_t KvCache::allocate_block() {
  assert(!free_list_.empty());
  const int32_t block = free_list_.back();
  free_list_.pop_back();
  assert(refcount_[static_cast<size_t>(block)] == 0);
  refcount_[static_cast<size_t>(block)] = 1;
  return block;
}

void KvCache::release_block(int32_t block) {
  int32_t& count = refcount_[static_cast<size_t>(block)];
  assert(count > 0);
  if (--count == 0) free_list_.push_back(block);
}

uint8_t* KvCache::block_base(int32_t block) {
  return pool_.data() + static_cast<size_t>(block) * block_bytes_;
}

const uint8_t* KvCache::block_base(int32_t block) const {
  return pool_.data() + static_cast<size_t>(block) * block_bytes_;
}

size_t KvCache::row_offset_k(int32_t layer, int32_t slot) const {
  return static_cast<size_t>(layer) * layer_bytes_ +
         static_cast<size_t>(slot) * static_cast<size_t>(config_.shape.k_row_bytes);
}

size_t KvCache::row_offset_v(int32_t layer, int32_t slot) const {
  const size_t k_rows =
      static_cast<size_t>(config_.block_size) * static_cast<size_t>(config_.shape.k_row_bytes);
  return static_cast<size_t>(layer) * layer_bytes_ + k_rows +
         static_cast<size_t>(slot) * static_cast<size_t>(config_.shape.v_row_bytes);
}

void KvCache::copy_rows(int32_t from_block, int32_t to_block, int32_t n_slots) {
  const uint8_t* from = block_base(from_block);
  uint8_t* to = block_base(to_block);
  const size_t k_bytes =
      static_cast<size_t>(n_slots) * static_cast<size_t>(config_.shape.k_row_bytes);
  const size_t v_bytes =
      static_cast<size_t>(n_slots) * static_cast<size_t>(config_.shape.v_row_bytes);
  for (int32_t layer = 0; layer < config_.shape.n_layer; ++layer) {
    const size_t k_at = row_offset_k(layer, 0);
    const size_t v_at = row_offset_v(layer, 0);
    if (k_bytes > 0) std::memcpy(to + k_at, from + k_at, k_bytes);
    if (v_bytes > 0) std::memcpy(to + v_at, from + v_at, v_bytes);
  }
}

int32_t KvCache::blocks_needed_to_grow(SeqId seq, int32_t n) const {
  if (!valid_seq(seq) || n < 0) return -1;
  const Sequence& s = sequences_[static_cast<size_t>(seq)];
  if (n > kInt32Max - s.length) return -1;
  if (n == 0) return 0;
  int32_t needed = blocks_for_length(s.length + n) - static_cast<int32_t>(s.blocks.size());
  const bool tail_partial = s.length % config_.block_size != 0;
  if (tail_partial && refcount_[static_cast<size_t>(s.blocks.back())] > 1) ++needed;
  return needed;
}

void KvCache::make_tail_exclusive(Sequence& seq) {
  const int32_t filled = seq.length % config_.block_size;
  // A full last block stays as it is: the new positions start a fresh block.
  if (filled == 0) return;
  int32_t& tail = seq.blocks.back();
  if (refcount_[static_cast<size_t>(tail)] == 1) return;
  const int32_t copy = allocate_block();
  copy_rows(tail, copy, filled);
  release_block(tail);
  tail = copy;
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
  const int32_t needed = blocks_needed_to_grow(seq, n);
  if (needed > free_blocks()) {
    return error(ErrorCode::kResourceExhausted,
                 fmt::format("kv cache grow: sequence {} needs {} blocks for {} more tokens, {} "
                             "of {} are free",
                             seq, needed, n, free_blocks(), config_.n_blocks));
  }
  make_tail_exclusive(s);
  const size_t n_total = static_cast<size_t>(blocks_for_length(s.length + n));
  while (s.blocks.size() < n_total) s.blocks.push_back(allocate_block());
  s.length += n;
  return Status::ok();
}

void KvCache::truncate(SeqId seq, int32_t n) {
  if (!valid_seq(seq)) return;
  Sequence& s = sequences_[static_cast<size_t>(seq)];
  n = std::max(n, 0);
  if (n >= s.length) return;
  const size_t keep = static_cast<size_t>(blocks_for_length(n));
  for (size_t i = keep; i < s.blocks.size(); ++i) release_block(s.blocks[i]);
  s.blocks.resize(keep);
  s.length = n;
}

void KvCache::clear(SeqId seq) {
  truncate(seq, 0);
}

void KvCache::clear_all() {
  for (Sequence& s : sequences_) {
    s.blocks.clear();
    s.length = 0;
  }
  std::fill(refcount_.begin(), refcount_.end(), 0);
  // Hand out low block ids first, which keeps layouts predictable in tests and dumps.
  free_list_.clear();
  free_list_.reserve(static_cast<size_t>(config_.n_blocks));
  for (int32_t block = config_.n_blocks - 1; block >= 0; --block) free_list_.push_back(block);
}

Status KvCache::share_prefix(SeqId src, SeqId dst, int32_t n) {
  HEARTH_RETURN_IF_ERROR(check_seq(src, "share_prefix source"));
  HEARTH_RETURN_IF_ERROR(check_seq(dst, "share_prefix destination"));
  const Sequence& from = sequences_[static_cast<size_t>(src)];
  if (n < 0 || n > from.length) {
    return error(ErrorCode::kInvalidArgument,
                 fmt::format("kv cache share_prefix: prefix of {} tokens of sequence {} of "
                             "length {}",
                             n, src, from.length));
  }
  if (src == dst) {
    truncate(src, n);
    return Status::ok();
  }
  const auto n_shared = static_cast<size_t>(blocks_for_length(n));
  std::vector<int32_t> blocks(from.blocks.begin(),
                              from.blocks.begin() + static_cast<std::ptrdiff_t>(n_shared));
  // Take the new references before dropping dst's old ones, so a block both hold never
  // passes through the free list.
  for (int32_t block : blocks) ++refcount_[static_cast<size_t>(block)];
  clear(dst);
  Sequence& to = sequences_[static_cast<size_t>(dst)];
  to.blocks = std::move(blocks);
  to.length = n;
  return Status::ok();
}

uint8_t* KvCache::k_row(int32_t layer, SeqId seq, int32_t pos) {
  return const_cast<uint8_t*>(std::as_const(*this).k_row(layer, seq, pos));
}

uint8_t* KvCache::v_row(int32_t layer, SeqId seq, int32_t pos) {
  return const_cast<uint8_t*>(std::as_const(*this).v_row(layer, seq, pos));
}

const uint8_t* KvCache::k_row(int32_t layer, SeqId seq, int32_t pos) const {
  assert(valid_seq(seq) && layer >= 0 && layer < config_.shape.n_layer);
  const Sequence& s = sequences_[static_cast<size_t>(seq)];
  assert(pos >= 0 && pos < s.length);
  const int32_t block = s.blocks[static_cast<size_t>(pos / config_.block_size)];
  return block_base(block) + row_offset_k(layer, pos % config_.block_size);
}

const uint8_t* KvCache::v_row(int32_t layer, SeqId seq, int32_t pos) const {
  assert(valid_seq(seq) && layer >= 0 && layer < config_.shape.n_layer);
  const Sequence& s = sequences_[static_cast<size_t>(seq)];
  assert(pos >= 0 && pos < s.length);
  const int32_t block = s.blocks[static_cast<size_t>(pos / config_.block_size)];
  return block_base(block) + row_offset_v(layer, pos % config_.block_size);
}

std::span<const int32_t> KvCache::block_table(SeqId seq) const {
  if (!valid_seq(seq)) return {};
  return sequences_[static_cast<size_t>(seq)].blocks;
}

const uint8_t* KvCache::block_k(int32_t block, int32_t layer) const {
  assert(block >= 0 && block < config_.n_blocks && layer >= 0 && layer < config_.shape.n_layer);
  return block_base(block) + row_offset_k(layer, 0);
}

const uint8_t* KvCache::block_v(int32_t block, int32_t layer) const {
  assert(block >= 0 && block < config_.n_blocks && layer >= 0 && layer < config_.shape.n_layer);
  return block_base(block) + row_offset_v(layer, 0);
}

KvSnapshot KvCache::save(SeqId seq, int32_t n) const {
  KvSnapshot snapshot;
  snapshot.shape = config_.shape;
  if (!valid_seq(seq)) return snapshot;
  const int32_t len = sequences_[static_cast<size_t>(seq)].length;
  if (n < 0 || n > len) n = len;
  snapshot.n_tokens = n;
  snapshot.data.resize(static_cast<size_t>(n) * token_bytes_);
  const auto k_bytes = static_cast<size_t>(config_.shape.k_row_bytes);
  const auto v_bytes = static_cast<size_t>(config_.shape.v_row_bytes);
  uint8_t* out = snapshot.data.data();
  for (int32_t pos = 0; pos < n; ++pos) {
    for (int32_t layer = 0; layer < config_.shape.n_layer; ++layer) {
      if (k_bytes > 0) std::memcpy(out, k_row(layer, seq, pos), k_bytes);
      out += config_.shape.k_row_bytes;
      if (v_bytes > 0) std::memcpy(out, v_row(layer, seq, pos), v_bytes);
      out += config_.shape.v_row_bytes;
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
  const size_t n_bytes = snapshot.data.size();
  const bool size_ok =
      snapshot.n_tokens >= 0 &&
      (token_bytes_ == 0 ? n_bytes == 0
                         : n_bytes % token_bytes_ == 0 &&
                               n_bytes / token_bytes_ == static_cast<size_t>(snapshot.n_tokens));
  if (!size_ok) {
    return error(ErrorCode::kInvalidArgument,
                 fmt::format("kv cache restore: snapshot of {} tokens holds {} values, expected "
                             "{} per token",
                             snapshot.n_tokens, n_bytes, token_bytes_));
  }
  const int32_t needed = blocks_for_length(snapshot.n_tokens);
  // Blocks only this sequence holds come back when its old content is dropped.
  int32_t reclaimable = 0;
  for (int32_t block : sequences_[static_cast<size_t>(seq)].blocks) {
    if (refcount_[static_cast<size_t>(block)] == 1) ++reclaimable;
  }
  if (needed > free_blocks() + reclaimable) {
    return error(ErrorCode::kResourceExhausted,
                 fmt::format("kv cache restore: {} tokens need {} blocks, {} are available",
                             snapshot.n_tokens, needed, free_blocks() + reclaimable));
  }
  clear(seq);
  Sequence& s = sequences_[static_cast<size_t>(seq)];
  for (int32_t i = 0; i < needed; ++i) s.blocks.push_back(allocate_block());
  s.length = snapshot.n_tokens;
  const auto k_bytes = static_cast<size_t>(config_.shape.k_row_bytes);
  const auto v_bytes = static_cast<size_t>(config_.shape.v_row_bytes);
  const uint8_t* in = snapshot.data.data();
  for (int32_t pos = 0; pos < s.length; ++pos) {
    for (int32_t layer = 0; layer < config_.shape.n_layer; ++layer) {
      if (k_bytes > 0) std::memcpy(k_row(layer, seq, pos), in, k_bytes);
      in += config_.shape.k_row_bytes;
      if (v_bytes > 0) std::memcpy(v_row(layer, seq, pos), in, v_bytes);
      in += config_.shape.v_row_bytes;
    }
  }
  return Status::ok();
}

int32_t KvCache::block_refcount(int32_t block) const {
  if (block < 0 || block >= config_.n_blocks) return -1;
  return refcount_[static_cast<size_t>(block)];
}

}  // namespace hearth::engine
