// The matmul driver of interleaved weights (interleaved.h): each token's activations are
// converted once into the weight type's dot format (the reference engine's bytes) plus the
// side arrays of interleaved_format.h, then the pool splits the 16-row groups, and each
// group meets a block of up to 64 tokens while its weights are in cache.
#include <algorithm>
#include <cstring>
#include <vector>

#include "base/half.h"
#include "kernels/block_formats.h"
#include "kernels/interleaved.h"
#include "kernels/interleaved_format.h"
#include "kernels/kernel_table.h"
#include "kernels/quant.h"

namespace hearth::kernels {
namespace {

using interleaved::TileArgs;
using interleaved::TileFn;

// Tokens whose converted rows a group's tile sweeps before the next group: 64 rows of a
// 2048-wide Q8_0 activation (~140 KB) stay in L2 while the thread's groups stream past.
constexpr int64_t kTokenBlock = 64;

struct Converted {
  std::vector<uint8_t> rows;
  std::vector<float> d;
  std::vector<int32_t> sums;
  std::vector<float> s;     // Q8_1's block sums
  std::vector<float> wide;  // F16/BF16 rows widened to f32
  size_t stride = 0;        // bytes per token in rows
  int64_t n_blocks = 0;     // blocks per token
  int sums_per_block = 1;
};

// Token t's Q8_0 row -> its block scales and code sums.
void q8_0_side(const uint8_t* row, int64_t n_blocks, float* d, int32_t* sums) {
  for (int64_t b = 0; b < n_blocks; ++b) {
    BlockQ8_0 blk;
    std::memcpy(&blk, row + b * static_cast<int64_t>(sizeof(blk)), sizeof(blk));
    d[b] = f16_to_f32(blk.d);
    int32_t s = 0;
    for (int8_t q : blk.qs) s += q;
    sums[b] = s;
  }
}

// Token t's Q8_1 row -> its block scales, code sums and f16 sums s.
void q8_1_side(const uint8_t* row, int64_t n_blocks, float* d, int32_t* sums, float* s) {
  for (int64_t b = 0; b < n_blocks; ++b) {
    BlockQ8_1 blk;
    std::memcpy(&blk, row + b * static_cast<int64_t>(sizeof(blk)), sizeof(blk));
    d[b] = f16_to_f32(blk.d);
    s[b] = f16_to_f32(blk.s);
    int32_t total = 0;
    for (int8_t q : blk.qs) total += q;
    sums[b] = total;
  }
}

// Token t's Q8_K row -> its scales and, unless `sums` is null (Q6_K reads the block's own
// 16-element sums), the 32-element sums as 16-bit pairs.
void q8_k_side(const uint8_t* row, int64_t n_blocks, float* d, int32_t* sums) {
  for (int64_t b = 0; b < n_blocks; ++b) {
    BlockQ8K blk;
    std::memcpy(&blk, row + b * static_cast<int64_t>(sizeof(blk)), sizeof(blk));
    d[b] = blk.d;
    for (int i = 0; sums != nullptr && i < interleaved::kQ8KSums; ++i) {
      const int s0 = blk.bsums[4 * i] + blk.bsums[4 * i + 1];
      const int s1 = blk.bsums[4 * i + 2] + blk.bsums[4 * i + 3];
      sums[b * interleaved::kQ8KSums + i] = static_cast<int32_t>(
          (static_cast<uint32_t>(static_cast<uint16_t>(s1)) << 16) | static_cast<uint16_t>(s0));
    }
  }
}

struct Job {
  const WeightMatrix& w;
  const float* x;
  int64_t n_tokens;
  float* y;
  TileFn tile;
  QuantizeRowFn from_float;
  TensorType act;
  Converted& cv;
};

// F16/BF16 weights take activations of their own type, widened back to f32 for the tiles.
bool is_float(TensorType act) {
  return act == TensorType::kF16 || act == TensorType::kBF16;
}

void convert_tokens(const Job& j, int64_t begin, int64_t end) {
  Converted& cv = j.cv;
  for (int64_t t = begin; t < end; ++t) {
    uint8_t* row = cv.rows.data() + static_cast<size_t>(t) * cv.stride;
    j.from_float(j.x + t * j.w.n_cols, row, j.w.n_cols);
    float* d = cv.d.data() + t * cv.n_blocks;
    int32_t* sums = cv.sums.data() + t * cv.n_blocks * cv.sums_per_block;
    if (is_float(j.act)) {
      dequantize_row(j.act, row, cv.wide.data() + t * j.w.n_cols, j.w.n_cols);
    } else if (j.act == TensorType::kQ8_K) {
      q8_k_side(row, cv.n_blocks, d, j.w.type == TensorType::kQ6_K ? nullptr : sums);
    } else if (j.act == TensorType::kQ8_1) {
      q8_1_side(row, cv.n_blocks, d, sums, cv.s.data() + t * cv.n_blocks);
    } else {
      q8_0_side(row, cv.n_blocks, d, sums);
    }
  }
}

void run_groups(const Job& j, int64_t g_begin, int64_t g_end) {
  const Converted& cv = j.cv;
  const size_t group_bytes = static_cast<size_t>(cv.n_blocks) *
                             static_cast<size_t>(interleaved::group_block_bytes(j.w.type));
  const auto* base = static_cast<const uint8_t*>(j.w.data);
  for (int64_t t0 = 0; t0 < j.n_tokens; t0 += kTokenBlock) {
    TileArgs a;
    a.x = cv.rows.data() + static_cast<size_t>(t0) * cv.stride;
    a.x_stride = cv.stride;
    a.xd = cv.d.data() + t0 * cv.n_blocks;
    a.xs = cv.sums.data() + t0 * cv.n_blocks * cv.sums_per_block;
    a.xm = cv.s.data() + t0 * cv.n_blocks;
    a.xf = is_float(j.act) ? cv.wide.data() + t0 * j.w.n_cols : nullptr;
    a.n_blocks = cv.n_blocks;
    a.y_stride = static_cast<size_t>(j.w.n_rows);
    a.n_tokens = static_cast<int>(std::min(kTokenBlock, j.n_tokens - t0));
    for (int64_t g = g_begin; g < g_end; ++g) {
      a.w = base + static_cast<size_t>(g) * group_bytes;
      a.y = j.y + t0 * j.w.n_rows + g * kInterleaveRows;
      j.tile(a);
    }
  }
}

// The activations' format: F16 and BF16 their own type, the super-blocks Q8_K, the types
// with a min Q8_1 (whose rounded sums s the reference multiplies by the min), the others
// Q8_0.
TensorType activation_type(TensorType type) {
  if (type == TensorType::kF16 || type == TensorType::kBF16) return type;
  if (interleaved::group_block_elements(type) == kQKK) return TensorType::kQ8_K;
  if (type == TensorType::kQ4_1 || type == TensorType::kQ5_1) return TensorType::kQ8_1;
  return TensorType::kQ8_0;
}

TileFn tile_for(const simd::InterleavedEntry& e, TensorType type) {
  switch (type) {
    case TensorType::kQ4_0:
      return e.q4_0;
    case TensorType::kQ8_0:
      return e.q8_0;
    case TensorType::kQ4_K:
      return e.q4_k;
    case TensorType::kQ6_K:
      return e.q6_k;
    case TensorType::kQ4_1:
      return e.q4_1;
    case TensorType::kQ5_0:
      return e.q5_0;
    case TensorType::kQ5_1:
      return e.q5_1;
    case TensorType::kIQ4_NL:
      return e.iq4_nl;
    case TensorType::kQ5_K:
      return e.q5_k;
    case TensorType::kIQ4_XS:
      return e.iq4_xs;
    case TensorType::kF16:
      return e.f16;
    case TensorType::kBF16:
      return e.bf16;
    default:
      return nullptr;
  }
}

// The tiles of a level, each set built on first use of its own level only: the builders of
// the SIMD sets are compiled for their instruction sets and may use them (a 96-byte entry is
// stored with zmm moves), so a CPU must never run the builder of a level it lacks.
const simd::InterleavedEntry& level_entry(CpuLevel level) {
  using namespace interleaved;
  switch (level) {
    case CpuLevel::kAvx2: {
      static const simd::InterleavedEntry avx2 =
          cpu_has_avx_vnni() ? simd::avxvnni_interleaved() : simd::avx2_interleaved();
      return avx2;
    }
    case CpuLevel::kAvx512: {
      static const simd::InterleavedEntry avx512 = [] {
        simd::InterleavedEntry e = simd::avx512_interleaved();
        if (cpu_has_avx512_bf16()) e.bf16 = simd::avx512bf16_tile_bf16();
        return e;
      }();
      return avx512;
    }
    default: {
      static const simd::InterleavedEntry scalar{ref_tile_q4_0,   ref_tile_q8_0,   ref_tile_q4_k,
                                                 ref_tile_q6_k,   ref_tile_q4_1,   ref_tile_q5_0,
                                                 ref_tile_q5_1,   ref_tile_iq4_nl, ref_tile_q5_k,
                                                 ref_tile_iq4_xs, ref_tile_f16,    ref_tile_bf16};
      return scalar;
    }
  }
}

// Converts the tokens (with `level`'s quantizers) and runs `tile` over the groups.
void run_matmul(TileFn tile, CpuLevel level, const WeightMatrix& w, const float* x,
                int64_t n_tokens, float* y, ThreadPool& pool) {
  const TensorType act = activation_type(w.type);
  const bool k_quant = act == TensorType::kQ8_K;
  // Kept per calling thread: decode calls matmul hundreds of times per token.
  thread_local Converted cv;
  cv.n_blocks = w.n_cols / interleaved::group_block_elements(w.type);
  cv.sums_per_block = k_quant ? interleaved::kQ8KSums : 1;
  cv.stride = row_bytes(traits_of(act), static_cast<uint64_t>(w.n_cols));
  const auto n = static_cast<size_t>(n_tokens);
  if (cv.rows.size() < cv.stride * n) cv.rows.resize(cv.stride * n);
  if (cv.d.size() < static_cast<size_t>(cv.n_blocks) * n) {
    cv.d.resize(static_cast<size_t>(cv.n_blocks) * n);
    cv.s.resize(cv.d.size());
  }
  const size_t n_sums = static_cast<size_t>(cv.n_blocks * cv.sums_per_block) * n;
  if (cv.sums.size() < n_sums) cv.sums.resize(n_sums);
  if (is_float(act) && cv.wide.size() < static_cast<size_t>(w.n_cols) * n)
    cv.wide.resize(static_cast<size_t>(w.n_cols) * n);
  const Job job{w, x, n_tokens, y, tile, level_kernels(level, act).from_float, act, cv};
  const Job* p = &job;
  if (n_tokens == 1) {
    convert_tokens(job, 0, 1);
  } else {
    pool.parallel_for(n_tokens, [p](int64_t begin, int64_t end, int /*thread_index*/) {
      convert_tokens(*p, begin, end);
    });
  }
  pool.parallel_for(w.n_rows / kInterleaveRows, [p](int64_t begin, int64_t end, int /*thread*/) {
    run_groups(*p, begin, end);
  });
}

}  // namespace

void interleaved::matmul_with(const simd::InterleavedEntry& entry, CpuLevel level,
                              const WeightMatrix& w, const float* x, int64_t n_tokens, float* y,
                              ThreadPool& pool) {
  run_matmul(tile_for(entry, w.type), level, w, x, n_tokens, y, pool);
}

void matmul_interleaved(CpuLevel level, const WeightMatrix& w, const float* x, int64_t n_tokens,
                        float* y, ThreadPool& pool) {
  run_matmul(tile_for(level_entry(level), w.type), level, w, x, n_tokens, y, pool);
}

}  // namespace hearth::kernels
