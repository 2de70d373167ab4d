// The interleaved layouts (interleaved_format.h): repacking at load, rows read back, and the
// scalar tiles, which write the arithmetic of interleaved.h plainly. Every SIMD tile must
// give these tiles' bits.
#include <cmath>
#include <cstring>

#include "base/half.h"
#include "kernels/block_access.h"
#include "kernels/block_formats.h"
#include "kernels/interleaved.h"
#include "kernels/interleaved_format.h"

namespace hearth::kernels {
namespace interleaved {
namespace {

float f16_at(const uint8_t* p) {
  f16_bits h = 0;
  std::memcpy(&h, p, sizeof(h));
  return f16_to_f32(h);
}

// 16 rows of the file's layout -> one group, block by block. `src` is row 0 of the group.
void pack_q4_0(const uint8_t* src, size_t row_stride, int64_t n_blocks, uint8_t* dst) {
  using L = Q4_0Layout;
  for (int64_t b = 0; b < n_blocks; ++b) {
    uint8_t* out = dst + b * L::kBytes;
    for (int r = 0; r < kRows; ++r) {
      const auto blk = load_block<BlockQ4_0>(src + r * row_stride, b);
      std::memcpy(out + L::kScales + 2 * r, &blk.d, 2);
      for (int c = 0; c < 4; ++c)
        std::memcpy(out + L::kCodes + c * kChunkBytes + 4 * r, blk.qs + 4 * c, 4);
    }
  }
}

void unpack_q4_0(const uint8_t* group, int r, int64_t n_blocks, uint8_t* row) {
  using L = Q4_0Layout;
  for (int64_t b = 0; b < n_blocks; ++b) {
    const uint8_t* in = group + b * L::kBytes;
    BlockQ4_0 blk;
    std::memcpy(&blk.d, in + L::kScales + 2 * r, 2);
    for (int c = 0; c < 4; ++c)
      std::memcpy(blk.qs + 4 * c, in + L::kCodes + c * kChunkBytes + 4 * r, 4);
    store_block(row, b, blk);
  }
}

void pack_q8_0(const uint8_t* src, size_t row_stride, int64_t n_blocks, uint8_t* dst) {
  using L = Q8_0Layout;
  for (int64_t b = 0; b < n_blocks; ++b) {
    uint8_t* out = dst + b * L::kBytes;
    for (int r = 0; r < kRows; ++r) {
      const auto blk = load_block<BlockQ8_0>(src + r * row_stride, b);
      std::memcpy(out + L::kScales + 2 * r, &blk.d, 2);
      for (int e = 0; e < kQK; ++e) {
        out[L::kCodes + (e / 4) * kChunkBytes + 4 * r + e % 4] =
            static_cast<uint8_t>(static_cast<uint8_t>(blk.qs[e]) ^ 0x80u);
      }
    }
  }
}

void unpack_q8_0(const uint8_t* group, int r, int64_t n_blocks, uint8_t* row) {
  using L = Q8_0Layout;
  for (int64_t b = 0; b < n_blocks; ++b) {
    const uint8_t* in = group + b * L::kBytes;
    BlockQ8_0 blk;
    std::memcpy(&blk.d, in + L::kScales + 2 * r, 2);
    for (int e = 0; e < kQK; ++e) {
      blk.qs[e] =
          static_cast<int8_t>(in[L::kCodes + (e / 4) * kChunkBytes + 4 * r + e % 4] ^ 0x80u);
    }
    store_block(row, b, blk);
  }
}

void pack_q4_k(const uint8_t* src, size_t row_stride, int64_t n_blocks, uint8_t* dst) {
  using L = Q4_KLayout;
  for (int64_t b = 0; b < n_blocks; ++b) {
    uint8_t* out = dst + b * L::kBytes;
    for (int r = 0; r < kRows; ++r) {
      const auto blk = load_block<BlockQ4K>(src + r * row_stride, b);
      std::memcpy(out + L::kScales + 2 * r, &blk.d, 2);
      std::memcpy(out + L::kMinScales + 2 * r, &blk.dmin, 2);
      for (int j = 0; j < 8; ++j) {
        int sc = 0, mn = 0;
        unpack_k4_scale_min(blk.scales, j, sc, mn);
        out[L::kSubScales + j * kRows + r] = static_cast<uint8_t>(sc);
        out[L::kMins + (j / 2) * 2 * kRows + 2 * r + j % 2] = static_cast<uint8_t>(mn);
      }
      for (int k = 0; k < 4; ++k) {
        for (int c = 0; c < 8; ++c) {
          std::memcpy(out + L::kCodes + (k * 8 + c) * kChunkBytes + 4 * r, blk.qs + 32 * k + 4 * c,
                      4);
        }
      }
    }
  }
}

// The inverse of unpack_k4_scale_min: eight 6-bit scales and mins into the 12 packed bytes.
void pack_k4_scales(const int* sc, const int* mn, uint8_t* q) {
  for (int k = 0; k < 4; ++k) {
    q[k] = static_cast<uint8_t>(sc[k] | ((sc[k + 4] >> 4) << 6));
    q[k + 4] = static_cast<uint8_t>(mn[k] | ((mn[k + 4] >> 4) << 6));
    q[k + 8] = static_cast<uint8_t>((sc[k + 4] & 0xF) | ((mn[k + 4] & 0xF) << 4));
  }
}

void unpack_q4_k(const uint8_t* group, int r, int64_t n_blocks, uint8_t* row) {
  using L = Q4_KLayout;
  for (int64_t b = 0; b < n_blocks; ++b) {
    const uint8_t* in = group + b * L::kBytes;
    BlockQ4K blk;
    std::memcpy(&blk.d, in + L::kScales + 2 * r, 2);
    std::memcpy(&blk.dmin, in + L::kMinScales + 2 * r, 2);
    int sc[8], mn[8];
    for (int j = 0; j < 8; ++j) {
      sc[j] = in[L::kSubScales + j * kRows + r];
      mn[j] = in[L::kMins + (j / 2) * 2 * kRows + 2 * r + j % 2];
    }
    pack_k4_scales(sc, mn, blk.scales);
    for (int k = 0; k < 4; ++k) {
      for (int c = 0; c < 8; ++c) {
        std::memcpy(blk.qs + 32 * k + 4 * c, in + L::kCodes + (k * 8 + c) * kChunkBytes + 4 * r, 4);
      }
    }
    store_block(row, b, blk);
  }
}

void pack_q6_k(const uint8_t* src, size_t row_stride, int64_t n_blocks, uint8_t* dst) {
  using L = Q6_KLayout;
  for (int64_t b = 0; b < n_blocks; ++b) {
    uint8_t* out = dst + b * L::kBytes;
    for (int r = 0; r < kRows; ++r) {
      const auto blk = load_block<BlockQ6K>(src + r * row_stride, b);
      std::memcpy(out + L::kScales + 2 * r, &blk.d, 2);
      for (int j = 0; j < 16; ++j)
        out[L::kSubScales + (j / 2) * 2 * kRows + 2 * r + j % 2] =
            static_cast<uint8_t>(blk.scales[j]);
      for (int h = 0; h < 2; ++h) {
        for (int c = 0; c < 8; ++c) {
          uint8_t* chunk = out + L::kCodes + h * L::kHalfBytes + c * 3 * kChunkBytes + 4 * r;
          std::memcpy(chunk, blk.ql + 64 * h + 4 * c, 4);
          std::memcpy(chunk + kChunkBytes, blk.ql + 64 * h + 32 + 4 * c, 4);
          std::memcpy(chunk + 2 * kChunkBytes, blk.qh + 32 * h + 4 * c, 4);
        }
      }
    }
  }
}

void unpack_q6_k(const uint8_t* group, int r, int64_t n_blocks, uint8_t* row) {
  using L = Q6_KLayout;
  for (int64_t b = 0; b < n_blocks; ++b) {
    const uint8_t* in = group + b * L::kBytes;
    BlockQ6K blk;
    std::memcpy(&blk.d, in + L::kScales + 2 * r, 2);
    for (int j = 0; j < 16; ++j)
      blk.scales[j] = static_cast<int8_t>(in[L::kSubScales + (j / 2) * 2 * kRows + 2 * r + j % 2]);
    for (int h = 0; h < 2; ++h) {
      for (int c = 0; c < 8; ++c) {
        const uint8_t* chunk = in + L::kCodes + h * L::kHalfBytes + c * 3 * kChunkBytes + 4 * r;
        std::memcpy(blk.ql + 64 * h + 4 * c, chunk, 4);
        std::memcpy(blk.ql + 64 * h + 32 + 4 * c, chunk + kChunkBytes, 4);
        std::memcpy(blk.qh + 32 * h + 4 * c, chunk + 2 * kChunkBytes, 4);
      }
    }
    store_block(row, b, blk);
  }
}

using PackFn = void (*)(const uint8_t* src, size_t row_stride, int64_t n_blocks, uint8_t* dst);
using UnpackFn = void (*)(const uint8_t* group, int r, int64_t n_blocks, uint8_t* row);

struct Format {
  int bytes = 0;
  int elements = 0;
  PackFn pack = nullptr;
  UnpackFn unpack = nullptr;
};

Format format_of(TensorType type) {
  switch (type) {
    case TensorType::kQ4_0:
      return {Q4_0Layout::kBytes, Q4_0Layout::kElements, pack_q4_0, unpack_q4_0};
    case TensorType::kQ8_0:
      return {Q8_0Layout::kBytes, Q8_0Layout::kElements, pack_q8_0, unpack_q8_0};
    case TensorType::kQ4_K:
      return {Q4_KLayout::kBytes, Q4_KLayout::kElements, pack_q4_k, unpack_q4_k};
    case TensorType::kQ6_K:
      return {Q6_KLayout::kBytes, Q6_KLayout::kElements, pack_q6_k, unpack_q6_k};
    default:
      return {};
  }
}

// Token t's pieces of a tile's arguments.
struct Token {
  const uint8_t* x;
  const float* xd;
  const int32_t* xs;
};

Token token(const TileArgs& a, int t, int sums_per_block) {
  return {a.x + static_cast<size_t>(t) * a.x_stride, a.xd + t * a.n_blocks,
          a.xs + t * a.n_blocks * sums_per_block};
}

// y[t][r] for every token and row of a tile: acc starts at 0 and add_block(block, row,
// token, b, acc) adds block b's FMAs, block after block.
template <class AddBlock>
void for_each_output(const TileArgs& a, int block_bytes, int sums_per_block, AddBlock add_block) {
  for (int t = 0; t < a.n_tokens; ++t) {
    const Token tk = token(a, t, sums_per_block);
    for (int r = 0; r < kRows; ++r) {
      float acc = 0.0f;
      for (int64_t b = 0; b < a.n_blocks; ++b) add_block(a.w + b * block_bytes, r, tk, b, acc);
      a.y[static_cast<size_t>(t) * a.y_stride + static_cast<size_t>(r)] = acc;
    }
  }
}

}  // namespace

int group_block_bytes(TensorType type) {
  return format_of(type).bytes;
}

int group_block_elements(TensorType type) {
  return format_of(type).elements;
}

void ref_tile_q4_0(const TileArgs& a) {
  using L = Q4_0Layout;
  for_each_output(
      a, L::kBytes, 1, [](const uint8_t* blk, int r, const Token& tk, int64_t b, float& acc) {
        const int8_t* xq = reinterpret_cast<const int8_t*>(tk.x + b * sizeof(BlockQ8_0) + 2);
        int32_t isum = 0;
        for (int c = 0; c < 4; ++c) {
          for (int e = 0; e < 4; ++e) {
            const int q = blk[L::kCodes + c * kChunkBytes + 4 * r + e];
            isum += (q & 0xF) * xq[4 * c + e] + (q >> 4) * xq[16 + 4 * c + e];
          }
        }
        isum -= 8 * tk.xs[b];
        const float d = f16_at(blk + L::kScales + 2 * r) * tk.xd[b];
        acc = std::fma(d, static_cast<float>(isum), acc);
      });
}

void ref_tile_q8_0(const TileArgs& a) {
  using L = Q8_0Layout;
  for_each_output(
      a, L::kBytes, 1, [](const uint8_t* blk, int r, const Token& tk, int64_t b, float& acc) {
        const int8_t* xq = reinterpret_cast<const int8_t*>(tk.x + b * sizeof(BlockQ8_0) + 2);
        int32_t isum = 0;
        for (int e = 0; e < kQK; ++e) {
          const int u = blk[L::kCodes + (e / 4) * kChunkBytes + 4 * r + e % 4];
          isum += (u - 128) * xq[e];
        }
        const float d = f16_at(blk + L::kScales + 2 * r) * tk.xd[b];
        acc = std::fma(d, static_cast<float>(isum), acc);
      });
}

// One row's integer sums over one Q4_K super-block: sum_j sc_j * (codes . x) and
// sum_j min_j * s_j.
void q4_k_sums(const uint8_t* blk, int r, const int8_t* xq, const int32_t* xs, int32_t& isum,
               int32_t& msum) {
  using L = Q4_KLayout;
  isum = 0;
  msum = 0;
  for (int j = 0; j < 8; ++j) {
    const int k = j / 2, shift = 4 * (j % 2);
    int32_t sub = 0;
    for (int c = 0; c < 8; ++c) {
      for (int e = 0; e < 4; ++e) {
        const int q = (blk[L::kCodes + (k * 8 + c) * kChunkBytes + 4 * r + e] >> shift) & 0xF;
        sub += q * xq[32 * j + 4 * c + e];
      }
    }
    isum += blk[L::kSubScales + j * kRows + r] * sub;
    const uint32_t pair = static_cast<uint32_t>(xs[k]);
    const int32_t s = static_cast<int16_t>(j % 2 == 0 ? pair & 0xFFFFu : pair >> 16);
    msum += blk[L::kMins + k * 2 * kRows + 2 * r + j % 2] * s;
  }
}

void ref_tile_q4_k(const TileArgs& a) {
  using L = Q4_KLayout;
  for_each_output(a, L::kBytes, kQ8KSums,
                  [](const uint8_t* blk, int r, const Token& tk, int64_t b, float& acc) {
                    const int8_t* xq =
                        reinterpret_cast<const int8_t*>(tk.x + b * sizeof(BlockQ8K) + 4);
                    int32_t isum = 0, msum = 0;
                    q4_k_sums(blk, r, xq, tk.xs + b * kQ8KSums, isum, msum);
                    const float d = f16_at(blk + L::kScales + 2 * r) * tk.xd[b];
                    const float dmin = f16_at(blk + L::kMinScales + 2 * r) * tk.xd[b];
                    acc = std::fma(d, static_cast<float>(isum), acc);
                    acc = std::fma(-dmin, static_cast<float>(msum), acc);
                  });
}

// One row's integer sum over one Q6_K super-block: sum_j sc_j * (codes_j . x_j) - 32 *
// sum_j sc_j * bsum_j, with bsum_j the Q8_K block's sum of sub-block j's 16 codes.
int32_t q6_k_sum(const uint8_t* blk, int r, const uint8_t* x_block) {
  using L = Q6_KLayout;
  const auto* xq = reinterpret_cast<const int8_t*>(x_block + 4);
  int16_t bsums[16];
  std::memcpy(bsums, x_block + 260, sizeof(bsums));
  int32_t isum = 0, bias = 0;
  for (int j = 0; j < 16; ++j) {
    const int h = j / 8, g = (j % 8) / 2, c0 = (j % 2) * 4;
    int32_t sub = 0;
    for (int c = c0; c < c0 + 4; ++c) {
      const uint8_t* chunk = blk + L::kCodes + h * L::kHalfBytes + c * 3 * kChunkBytes + 4 * r;
      for (int e = 0; e < 4; ++e) {
        const int ql = chunk[(g % 2) * kChunkBytes + e];
        const int lo4 = g < 2 ? ql & 0xF : ql >> 4;
        const int hi2 = (chunk[2 * kChunkBytes + e] >> (2 * g)) & 3;
        sub += (lo4 | (hi2 << 4)) * xq[128 * h + 32 * g + 4 * c + e];
      }
    }
    const int sc = static_cast<int8_t>(blk[L::kSubScales + (j / 2) * 2 * kRows + 2 * r + j % 2]);
    isum += sc * sub;
    bias += sc * bsums[j];
  }
  return isum - 32 * bias;
}

void ref_tile_q6_k(const TileArgs& a) {
  using L = Q6_KLayout;
  for_each_output(a, L::kBytes, kQ8KSums,
                  [](const uint8_t* blk, int r, const Token& tk, int64_t b, float& acc) {
                    const int32_t isum = q6_k_sum(blk, r, tk.x + b * sizeof(BlockQ8K));
                    const float d = f16_at(blk + L::kScales + 2 * r) * tk.xd[b];
                    acc = std::fma(d, static_cast<float>(isum), acc);
                  });
}

}  // namespace interleaved

bool has_interleaved_layout(TensorType type) {
  return interleaved::format_of(type).bytes != 0;
}

bool can_interleave(const WeightMatrix& w) {
  const interleaved::Format f = interleaved::format_of(w.type);
  return f.bytes != 0 && w.layout == WeightLayout::kRows && w.n_rows > 0 &&
         w.n_rows % kInterleaveRows == 0 && w.n_cols > 0 && w.n_cols % f.elements == 0 &&
         active_cpu_level() != CpuLevel::kScalar;
}

size_t interleaved_bytes(const WeightMatrix& w) {
  const interleaved::Format f = interleaved::format_of(w.type);
  if (f.bytes == 0) return 0;
  return static_cast<size_t>(w.n_rows / kInterleaveRows) *
         static_cast<size_t>(w.n_cols / f.elements) * static_cast<size_t>(f.bytes);
}

WeightMatrix interleave(const WeightMatrix& w, void* dst) {
  const interleaved::Format f = interleaved::format_of(w.type);
  const int64_t n_blocks = w.n_cols / f.elements;
  const auto* src = static_cast<const uint8_t*>(w.data);
  auto* out = static_cast<uint8_t*>(dst);
  const size_t group_bytes = static_cast<size_t>(n_blocks) * static_cast<size_t>(f.bytes);
  for (int64_t g = 0; g < w.n_rows / kInterleaveRows; ++g) {
    f.pack(src + static_cast<size_t>(g) * kInterleaveRows * w.row_stride, w.row_stride, n_blocks,
           out + static_cast<size_t>(g) * group_bytes);
  }
  WeightMatrix view = w;
  view.data = dst;
  view.layout = WeightLayout::kInterleaved16;
  return view;
}

void extract_row(const WeightMatrix& w, int64_t r, void* dst) {
  const interleaved::Format f = interleaved::format_of(w.type);
  const int64_t n_blocks = w.n_cols / f.elements;
  const size_t group_bytes = static_cast<size_t>(n_blocks) * static_cast<size_t>(f.bytes);
  const auto* group =
      static_cast<const uint8_t*>(w.data) + static_cast<size_t>(r / kInterleaveRows) * group_bytes;
  f.unpack(group, static_cast<int>(r % kInterleaveRows), n_blocks, static_cast<uint8_t*>(dst));
}

}  // namespace hearth::kernels
