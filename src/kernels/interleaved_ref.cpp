// The scalar tiles of the interleaved layouts (interleaved_format.h), which write the
// arithmetic of interleaved.h plainly. Every SIMD tile must give these tiles' bits.
#include <cmath>
#include <cstring>
#include <type_traits>

#include "base/half.h"
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

// Token t's pieces of a tile's arguments.
struct Token {
  const uint8_t* x;
  const float* xd;
  const int32_t* xs;
  const float* xm;
};

Token token(const TileArgs& a, int t, int sums_per_block) {
  return {a.x + static_cast<size_t>(t) * a.x_stride, a.xd + t * a.n_blocks,
          a.xs + t * a.n_blocks * sums_per_block, a.xm + t * a.n_blocks};
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

// One row's integer sums over one Q4_K or Q5_K super-block: sum_j sc_j * (codes_j . x_j)
// and sum_j min_j * s_j. Q5_K passes its fifth bits (`high_bits`, else null).
template <class L>
void q4_k_sums(const uint8_t* blk, const uint8_t* high_bits, int r, const int8_t* xq,
               const int32_t* xs, int32_t& isum, int32_t& msum) {
  isum = 0;
  msum = 0;
  for (int j = 0; j < 8; ++j) {
    const int k = j / 2, shift = 4 * (j % 2);
    int32_t sub = 0;
    for (int c = 0; c < 8; ++c) {
      for (int e = 0; e < 4; ++e) {
        int q = (blk[L::kCodes + (k * 8 + c) * kChunkBytes + 4 * r + e] >> shift) & 0xF;
        if (high_bits != nullptr) q |= ((high_bits[c * kChunkBytes + 4 * r + e] >> j) & 1) << 4;
        sub += q * xq[32 * j + 4 * c + e];
      }
    }
    isum += blk[L::kSubScales + j * kRows + r] * sub;
    const uint32_t pair = static_cast<uint32_t>(xs[k]);
    const int32_t s = static_cast<int16_t>(j % 2 == 0 ? pair & 0xFFFFu : pair >> 16);
    msum += blk[L::kMins + paired_byte(j, r)] * s;
  }
}

template <class L>
void k4_tile(const TileArgs& a) {
  for_each_output(a, L::kBytes, kQ8KSums,
                  [](const uint8_t* blk, int r, const Token& tk, int64_t b, float& acc) {
                    const int8_t* xq =
                        reinterpret_cast<const int8_t*>(tk.x + b * sizeof(BlockQ8K) + 4);
                    const uint8_t* high_bits = nullptr;
                    if constexpr (std::is_same_v<L, Q5_KLayout>) high_bits = blk + L::kHighBits;
                    int32_t isum = 0, msum = 0;
                    q4_k_sums<L>(blk, high_bits, r, xq, tk.xs + b * kQ8KSums, isum, msum);
                    const float d = f16_at(blk + L::kScales + 2 * r) * tk.xd[b];
                    const float dmin = f16_at(blk + L::kMinScales + 2 * r) * tk.xd[b];
                    acc = std::fma(d, static_cast<float>(isum), acc);
                    acc = std::fma(-dmin, static_cast<float>(msum), acc);
                  });
}

void ref_tile_q4_k(const TileArgs& a) {
  k4_tile<Q4_KLayout>(a);
}

void ref_tile_q5_k(const TileArgs& a) {
  k4_tile<Q5_KLayout>(a);
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
    const int sc = static_cast<int8_t>(blk[L::kSubScales + paired_byte(j, r)]);
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

// Code i (0..31) of row r in a 32-element group block: a nibble of chunk (i % 16) / 4.
int nibble_at(const uint8_t* codes, int r, int i) {
  const int byte = codes[((i % 16) / 4) * kChunkBytes + 4 * r + i % 4];
  return i < 16 ? byte & 0xF : byte >> 4;
}

// The fifth bit of code i of row r in a Q5 layout's qh bytes.
int fifth_bit_at(const uint8_t* high_bits, int r, int i) {
  const int byte = high_bits[4 * r + (i % 16) / 4];
  return (byte >> (i % 4 + (i < 16 ? 0 : 4))) & 1;
}

// Code i of row r in a 32-element group block, per layout: a nibble (Q4_0, Q4_1), with its
// fifth bit (Q5_0, Q5_1), a stored byte less 128 (Q8_0), a nibble's code-book value (IQ4_NL).
template <class L>
struct NibbleCode {
  static int at(const uint8_t* blk, int r, int i) { return nibble_at(blk + L::kCodes, r, i); }
};

template <class L>
struct FiveBitCode {
  static int at(const uint8_t* blk, int r, int i) {
    return nibble_at(blk + L::kCodes, r, i) | (fifth_bit_at(blk + L::kHighBits, r, i) << 4);
  }
};

struct Q8_0Code {
  static int at(const uint8_t* blk, int r, int i) {
    return blk[Q8_0Layout::kCodes + (i / 4) * kChunkBytes + 4 * r + i % 4] - 128;
  }
};

struct IQ4_NLCode {
  static int at(const uint8_t* blk, int r, int i) {
    return kIq4nlValues[nibble_at(blk + IQ4_NLLayout::kCodes, r, i)];
  }
};

// The 32-element blocks: isum = codes . x - bias * code sum, acc = fma(d_w * d_x, isum, acc),
// then with a min (Q8_1 activations): acc = fma(m_w, s, acc).
template <class L, class Code, int kBias, bool kMin>
void block32_tile(const TileArgs& a) {
  for_each_output(
      a, L::kBytes, 1, [](const uint8_t* blk, int r, const Token& tk, int64_t b, float& acc) {
        constexpr size_t kAct = kMin ? sizeof(BlockQ8_1) : sizeof(BlockQ8_0);
        const int8_t* xq = reinterpret_cast<const int8_t*>(tk.x + b * kAct + (kAct - kQK));
        int32_t isum = 0;
        for (int i = 0; i < kQK; ++i) isum += Code::at(blk, r, i) * xq[i];
        isum -= kBias * tk.xs[b];
        const float d = f16_at(blk + L::kScales + 2 * r) * tk.xd[b];
        acc = std::fma(d, static_cast<float>(isum), acc);
        if constexpr (kMin) acc = std::fma(f16_at(blk + L::kMinScales + 2 * r), tk.xm[b], acc);
      });
}

void ref_tile_q4_0(const TileArgs& a) {
  block32_tile<Q4_0Layout, NibbleCode<Q4_0Layout>, 8, false>(a);
}

void ref_tile_q8_0(const TileArgs& a) {
  block32_tile<Q8_0Layout, Q8_0Code, 0, false>(a);
}

void ref_tile_q4_1(const TileArgs& a) {
  block32_tile<Q4_1Layout, NibbleCode<Q4_1Layout>, 0, true>(a);
}

void ref_tile_q5_0(const TileArgs& a) {
  block32_tile<Q5_0Layout, FiveBitCode<Q5_0Layout>, 16, false>(a);
}

void ref_tile_q5_1(const TileArgs& a) {
  block32_tile<Q5_1Layout, FiveBitCode<Q5_1Layout>, 0, true>(a);
}

void ref_tile_iq4_nl(const TileArgs& a) {
  block32_tile<IQ4_NLLayout, IQ4_NLCode, 0, false>(a);
}

// IQ4_XS: isum = sum_j (ls_j - 32) * (values_j . x_j) over the 8 sub-blocks.
void ref_tile_iq4_xs(const TileArgs& a) {
  using L = IQ4_XSLayout;
  for_each_output(a, L::kBytes, kQ8KSums,
                  [](const uint8_t* blk, int r, const Token& tk, int64_t b, float& acc) {
                    const int8_t* xq =
                        reinterpret_cast<const int8_t*>(tk.x + b * sizeof(BlockQ8K) + 4);
                    int32_t isum = 0;
                    for (int j = 0; j < 8; ++j) {
                      const uint8_t* codes = blk + L::kCodes + j * 4 * kChunkBytes;
                      int32_t sub = 0;
                      for (int i = 0; i < kQK; ++i)
                        sub += kIq4nlValues[nibble_at(codes, r, i)] * xq[32 * j + i];
                      isum += static_cast<int8_t>(blk[L::kSubScales + paired_byte(j, r)]) * sub;
                    }
                    const float d = f16_at(blk + L::kScales + 2 * r) * tk.xd[b];
                    acc = std::fma(d, static_cast<float>(isum), acc);
                  });
}

// F16 and BF16: per column pair, in order, acc = fma(w_odd, x_odd, acc) then
// acc = fma(w_even, x_even, acc) (vdpbf16ps's order), x rounded to the weight type.
template <class WidenPair>
void float_tile(const TileArgs& a, WidenPair widen) {
  constexpr int kPairs = F16Layout::kElements / 2;
  for (int t = 0; t < a.n_tokens; ++t) {
    const float* xf = a.xf + static_cast<size_t>(t) * a.n_blocks * F16Layout::kElements;
    for (int r = 0; r < kRows; ++r) {
      float acc = 0.0f;
      for (int64_t b = 0; b < a.n_blocks; ++b) {
        for (int p = 0; p < kPairs; ++p) {
          float odd = 0.0f, even = 0.0f;
          widen(a.w + b * F16Layout::kBytes + p * F16Layout::kPairBytes, r, odd, even);
          const float* x = xf + b * F16Layout::kElements + 2 * p;
          acc = std::fma(odd, x[1], acc);
          acc = std::fma(even, x[0], acc);
        }
      }
      a.y[static_cast<size_t>(t) * a.y_stride + static_cast<size_t>(r)] = acc;
    }
  }
}

void ref_tile_f16(const TileArgs& a) {
  float_tile(a, [](const uint8_t* pair, int r, float& odd, float& even) {
    odd = f16_at(pair + 2 * r);
    even = f16_at(pair + 32 + 2 * r);
  });
}

void ref_tile_bf16(const TileArgs& a) {
  float_tile(a, [](const uint8_t* pair, int r, float& odd, float& even) {
    bf16_bits lo = 0, hi = 0;
    std::memcpy(&lo, pair + 4 * r, 2);
    std::memcpy(&hi, pair + 4 * r + 2, 2);
    odd = bf16_to_f32(hi);
    even = bf16_to_f32(lo);
  });
}

}  // namespace interleaved
}  // namespace hearth::kernels
