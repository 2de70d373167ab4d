// AVX-512 VNNI tiles of Q4_K and Q5_K against Q8_K activations, two tokens per 512-bit
// register (the low and high 256-bit halves). Each output is bit-identical to the AVX2
// level's vec_dot (avx2_kquants.cpp, k4_row_block), which this level keeps for one token.
//
// Why the bits agree: per super-block AVX2 forms 8 int32 lanes, lane k the exact sum over
// the 8 sub-blocks of scale * (the 4 products of elements 4k..4k+3), by vpmaddubsw then
// vpmaddwd with the scale words and vpaddd; vpdpwssd does the vpmaddwd and the add in one
// instruction, with the same exact integers. The min term (vpmaddwd of the mins and the
// token's bsums) and the f32 steps are the same instructions on wider registers: first
// acc += (-dmin * dy) * float(mins . bsums), then acc += (d * dy) * float(isum), and the 8
// lanes of each half summed as AVX2 sums them.
//
// A row's codes are unpacked once per super-block in 256-bit registers, exactly as AVX2
// unpacks them, and broadcast to both halves; an odd last token runs the same kernel with
// its high half a copy of the low one, and only the low half is stored.
#include <immintrin.h>

#include <cstddef>
#include <cstdint>
#include <cstring>

#include "kernels/block_formats.h"
#include "kernels/simd/simd_table.h"

// GCC 12's AVX-512 intrinsics start their results from deliberately undefined registers
// (_mm512_undefined_*), which -Wuninitialized reports once they are inlined here.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wuninitialized"
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#pragma GCC push_options
#pragma GCC target("avx512f,avx512bw,avx512vl,avx512dq,avx512vnni,avx2,fma,f16c")

#include "kernels/simd/avx2_util.h"

namespace hearth::kernels::simd {
namespace {

using avx2::hsum8;  // the AVX2 level's reduction order, which these outputs must match
using avx2::k4_scales_mins;
using avx2::load256;
using avx2::load_f16;
using avx2::load_f32;

constexpr size_t kQ8KSize = sizeof(BlockQ8K);
constexpr size_t kQ8KQs = offsetof(BlockQ8K, qs);
constexpr size_t kQ8KBsums = offsetof(BlockQ8K, bsums);

// Two 256-bit values as the halves of one 512-bit register.
inline __m512i pair_i(__m256i lo, __m256i hi) {
  return _mm512_inserti64x4(_mm512_castsi256_si512(lo), hi, 1);
}

inline __m512 pair_f(float lo, float hi) {
  return _mm512_insertf32x8(_mm512_castps256_ps512(_mm256_set1_ps(lo)), _mm256_set1_ps(hi), 1);
}

// A pair of tokens' activation blocks (the odd last token: both halves the same token).
struct TokenPair {
  const uint8_t* lo;
  const uint8_t* hi;
};

// One Q4_K (kQ5 false) or Q5_K super-block of one row against P token pairs.
template <bool kQ5, int P>
inline __attribute__((always_inline)) void k4_row_block(const uint8_t* b, const TokenPair* x,
                                                        const __m512* dy, const __m512i* bsums,
                                                        __m512* acc) {
  constexpr size_t kQs = kQ5 ? offsetof(BlockQ5K, qs) : offsetof(BlockQ4K, qs);
  const __m256i m4 = _mm256_set1_epi8(0x0F);
  const __m256i m16 = _mm256_set1_epi8(0x10);
  const __m128i sm = k4_scales_mins(b + offsetof(BlockQ4K, scales));
  // Min k against both sums of 16 of sub-block k: mn0 mn0 mn1 mn1 ... mn7 mn7, both halves.
  const __m512i mins = _mm512_broadcast_i64x4(_mm256_cvtepu8_epi16(_mm_unpackhi_epi8(sm, sm)));
  const __m512 d = _mm512_set1_ps(load_f16(b));
  const __m512 neg_dmin = _mm512_set1_ps(-load_f16(b + offsetof(BlockQ4K, dmin)));
  for (int p = 0; p < P; ++p) {  // acc += (-(dmin*dy)) * sum(min * bsums)
    const __m512 m = _mm512_cvtepi32_ps(_mm512_madd_epi16(mins, bsums[p]));
    acc[p] = _mm512_fmadd_ps(_mm512_mul_ps(neg_dmin, dy[p]), m, acc[p]);
  }
  alignas(16) uint8_t scale[16];
  _mm_store_si128(reinterpret_cast<__m128i*>(scale), sm);
  __m256i qh = _mm256_setzero_si256();
  if constexpr (kQ5) qh = load256(b + offsetof(BlockQ5K, qh));
  __m512i isum[P];
  for (int p = 0; p < P; ++p) isum[p] = _mm512_setzero_si512();
#pragma GCC unroll 4
  for (int j = 0; j < 4; ++j) {  // 64 codes: sub-blocks 2j (low nibbles) and 2j + 1
    const __m256i q = load256(b + kQs + 32 * j);
    __m256i lo = _mm256_and_si256(q, m4);
    __m256i hi = _mm256_and_si256(_mm256_srli_epi16(q, 4), m4);
    if constexpr (kQ5) {  // bit 2j of qh[l] to bit 4 of the low code, bit 2j + 1 of the high
      lo = _mm256_or_si256(lo, _mm256_and_si256(_mm256_slli_epi16(qh, 4), m16));
      hi = _mm256_or_si256(hi, _mm256_and_si256(_mm256_slli_epi16(qh, 3), m16));
      qh = _mm256_srli_epi16(qh, 2);
    }
    const __m512i lo2 = _mm512_broadcast_i64x4(lo);
    const __m512i hi2 = _mm512_broadcast_i64x4(hi);
    const __m512i slo = _mm512_set1_epi16(scale[2 * j]);
    const __m512i shi = _mm512_set1_epi16(scale[2 * j + 1]);
    for (int p = 0; p < P; ++p) {
      const size_t at = kQ8KQs + 64 * static_cast<size_t>(j);
      const __m512i ylo = pair_i(load256(x[p].lo + at), load256(x[p].hi + at));
      const __m512i yhi = pair_i(load256(x[p].lo + at + 32), load256(x[p].hi + at + 32));
      isum[p] = _mm512_dpwssd_epi32(isum[p], _mm512_maddubs_epi16(lo2, ylo), slo);
      isum[p] = _mm512_dpwssd_epi32(isum[p], _mm512_maddubs_epi16(hi2, yhi), shi);
    }
  }
  for (int p = 0; p < P; ++p) {
    acc[p] = _mm512_fmadd_ps(_mm512_mul_ps(d, dy[p]), _mm512_cvtepi32_ps(isum[p]), acc[p]);
  }
}

// One row against the tokens of P pairs (the last pair maybe one token twice), all blocks.
template <bool kQ5, int P>
void k4_row(const uint8_t* w, const uint8_t* x, size_t xs, int64_t n, int n_tokens, float* y,
            size_t ys) {
  constexpr size_t kBlock = kQ5 ? sizeof(BlockQ5K) : sizeof(BlockQ4K);
  __m512 acc[P];
  for (int p = 0; p < P; ++p) acc[p] = _mm512_setzero_ps();
  for (int64_t i = 0; i < n / kQKK; ++i) {
    TokenPair tok[P];
    __m512 dy[P];
    __m512i bsums[P];
    for (int p = 0; p < P; ++p) {
      const int t_hi = 2 * p + 1 < n_tokens ? 2 * p + 1 : 2 * p;
      tok[p] = {x + static_cast<size_t>(2 * p) * xs + i * kQ8KSize,
                x + static_cast<size_t>(t_hi) * xs + i * kQ8KSize};
      dy[p] = pair_f(load_f32(tok[p].lo), load_f32(tok[p].hi));
      bsums[p] = pair_i(load256(tok[p].lo + kQ8KBsums), load256(tok[p].hi + kQ8KBsums));
    }
    k4_row_block<kQ5, P>(w + i * kBlock, tok, dy, bsums, acc);
  }
  for (int p = 0; p < P; ++p) {
    y[static_cast<size_t>(2 * p) * ys] = hsum8(_mm512_castps512_ps256(acc[p]));
    if (2 * p + 1 < n_tokens) {
      y[static_cast<size_t>(2 * p + 1) * ys] = hsum8(_mm512_extractf32x8_ps(acc[p], 1));
    }
  }
}

// Up to 2 rows x 6 tokens (3 pairs): each unpacked row block serves six tokens.
constexpr int kMaxRows = 2;
constexpr int kMaxTokens = 6;

// The AVX2 tiles of Q4_K and Q5_K (one row), kept for a single token: decoding streams the
// weights once, and a 512-bit register of one token would be half empty. Set when the
// level's table is built, read after.
TileFn avx2_single_token[2] = {nullptr, nullptr};

template <bool kQ5>
void k4_tile(const TileArgs& a) {
  if (a.n_tokens == 1) {
    TileArgs row = a;
    row.n_rows = 1;
    for (int r = 0; r < a.n_rows; ++r) {
      row.w = a.w + static_cast<size_t>(r) * a.w_stride;
      row.y = a.y + r;
      avx2_single_token[kQ5 ? 1 : 0](row);
    }
    return;
  }
  for (int r = 0; r < a.n_rows; ++r) {
    const uint8_t* w = a.w + static_cast<size_t>(r) * a.w_stride;
    float* y = a.y + r;
    switch ((a.n_tokens + 1) / 2) {
      case 1:
        k4_row<kQ5, 1>(w, a.x, a.x_stride, a.n, a.n_tokens, y, a.y_stride);
        break;
      case 2:
        k4_row<kQ5, 2>(w, a.x, a.x_stride, a.n, a.n_tokens, y, a.y_stride);
        break;
      default:
        k4_row<kQ5, 3>(w, a.x, a.x_stride, a.n, a.n_tokens, y, a.y_stride);
        break;
    }
  }
}

}  // namespace
}  // namespace hearth::kernels::simd

#pragma GCC pop_options
#pragma GCC diagnostic pop

namespace hearth::kernels::simd {

void register_avx512_kquants(Table& t) {
  for (TensorType type : {TensorType::kQ4_K, TensorType::kQ5_K}) {
    Entry& e = entry(t, type);
    // Called after register_avx2_kquants: its one-row tile serves a single token.
    avx2_single_token[type == TensorType::kQ5_K ? 1 : 0] = e.tile;
    e.tile = type == TensorType::kQ4_K ? k4_tile<false> : k4_tile<true>;
    e.max_rows = kMaxRows;
    e.max_tokens = kMaxTokens;
  }
}

}  // namespace hearth::kernels::simd
