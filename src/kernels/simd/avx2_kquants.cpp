// AVX2 kernels of the 256-element super-block formats (quantization.md §3.7, §4.3, §4.4):
// the Q8_K activation conversion, and the Q4_K, Q5_K and Q6_K dot-product tiles (Q2_K,
// Q3_K and IQ4_XS are in avx2_kquants2.cpp).
//
// Every dot product works on one super-block at a time: the weight codes are unpacked to
// unsigned bytes, multiplied with the signed Q8_K codes by vpmaddubsw (pairs summed to
// int16, never saturating: codes <= 63, |q8| <= 127), and widened to int32 by vpmaddwd
// against the 16-bit sub-block scales, so each block's integer sum is exact in eight int32
// lanes. Offsets the reference subtracts from every code (Q6_K's 32) and the min terms
// (Q4_K, Q5_K) come from the activation's bsums. Each block then adds
// (d*dy) * float(lanes) and (-(dmin*dy)) * float(min lanes) to the output's __m256
// accumulator by FMA, and the eight lanes are summed in a fixed order at the end.
//
// A tile of R rows x T tokens runs exactly these instructions for each of its outputs
// (each owns its int32 sums and its accumulator), so its results equal vec_dot's, which is
// the 1x1 tile.
#include <immintrin.h>

#include <cstddef>
#include <cstdint>
#include <cstring>

#include "kernels/block_formats.h"
#include "kernels/simd/simd_table.h"

namespace hearth::kernels::simd {

// Q2_K, Q3_K and IQ4_XS (avx2_kquants2.cpp).
void register_avx2_kquants2(Table& t);

}  // namespace hearth::kernels::simd

#pragma GCC push_options
#pragma GCC target("avx2,fma,f16c")

#include "kernels/simd/avx2_kquant_tile.h"
#include "kernels/simd/avx2_util.h"

namespace hearth::kernels::simd {
namespace {

using namespace avx2;  // NOLINT(google-build-using-namespace): the file's own toolbox

// ---- Q8_K activations --------------------------------------------------------------

// Index of the first of the 256 values with the largest magnitude (NaN never counts), or
// -1 when all are zero.
int q8k_first_max(const float* x) {
  const __m256 abs_mask = _mm256_castsi256_ps(_mm256_set1_epi32(0x7FFFFFFF));
  __m256 m[4];
  for (int k = 0; k < 4; ++k) m[k] = _mm256_setzero_ps();
  // vmaxps returns its second operand when either is NaN: NaN inputs are skipped.
  for (int j = 0; j < kQKK; j += 32) {
    for (int k = 0; k < 4; ++k) {
      m[k] = _mm256_max_ps(_mm256_and_ps(_mm256_loadu_ps(x + j + 8 * k), abs_mask), m[k]);
    }
  }
  const __m256 m8 = _mm256_max_ps(_mm256_max_ps(m[0], m[1]), _mm256_max_ps(m[2], m[3]));
  __m128 h = _mm_max_ps(_mm256_castps256_ps128(m8), _mm256_extractf128_ps(m8, 1));
  h = _mm_max_ps(h, _mm_movehl_ps(h, h));
  h = _mm_max_ss(h, _mm_movehdup_ps(h));
  const float amax = _mm_cvtss_f32(h);
  if (!(amax > 0.0f)) return -1;
  const __m256 target = _mm256_set1_ps(amax);
  for (int j = 0; j < kQKK; j += 8) {
    const __m256 ax = _mm256_and_ps(_mm256_loadu_ps(x + j), abs_mask);
    const int bits = _mm256_movemask_ps(_mm256_cmp_ps(ax, target, _CMP_EQ_OQ));
    if (bits != 0) return j + __builtin_ctz(static_cast<unsigned>(bits));
  }
  return -1;
}

// 32 codes min(127, nearest_int(iscale * x)) as the reference computes them (the 1.5*2^23
// trick), truncated to their low byte like its int8 cast.
inline __m256i q8k_codes32(const float* x, __m256 iscale) {
  const __m256 magic = _mm256_set1_ps(12582912.0f);
  const __m256i mantissa = _mm256_set1_epi32(0x007FFFFF);
  const __m256i bias = _mm256_set1_epi32(0x00400000);
  const __m256i top = _mm256_set1_epi32(127);
  const __m256i low_byte = _mm256_set1_epi32(0xFF);
  __m256i v[4];
  for (int k = 0; k < 4; ++k) {
    const __m256 s = _mm256_add_ps(_mm256_mul_ps(iscale, _mm256_loadu_ps(x + 8 * k)), magic);
    const __m256i i = _mm256_sub_epi32(_mm256_and_si256(_mm256_castps_si256(s), mantissa), bias);
    v[k] = _mm256_and_si256(_mm256_min_epi32(i, top), low_byte);
  }
  // Values 0..255 pass both unsigned packs unchanged; the permute undoes their interleave.
  const __m256i bytes =
      _mm256_packus_epi16(_mm256_packus_epi32(v[0], v[1]), _mm256_packus_epi32(v[2], v[3]));
  return _mm256_permutevar8x32_epi32(bytes, _mm256_setr_epi32(0, 4, 1, 5, 2, 6, 3, 7));
}

// The sixteen int16 sums of 16 codes of q[0..7] (32 codes each) into out.
inline void q8k_bsums(const __m256i* q, uint8_t* out) {
  const __m256i ones8 = _mm256_set1_epi8(1);
  const __m256i ones16 = _mm256_set1_epi16(1);
  __m256i s[8];  // per 128-bit half: four sums of 4 codes of one group of 16
  for (int c = 0; c < 8; ++c) s[c] = _mm256_madd_epi16(_mm256_maddubs_epi16(ones8, q[c]), ones16);
  // Low halves end up with groups 0, 2, 4, ..., high halves with groups 1, 3, 5, ...
  const __m256i g0 =
      _mm256_hadd_epi32(_mm256_hadd_epi32(s[0], s[1]), _mm256_hadd_epi32(s[2], s[3]));
  const __m256i g1 =
      _mm256_hadd_epi32(_mm256_hadd_epi32(s[4], s[5]), _mm256_hadd_epi32(s[6], s[7]));
  const __m256i p = _mm256_packs_epi32(g0, g1);  // |sum| <= 2048: no saturation
  const __m128i lo = _mm256_castsi256_si128(p);
  const __m128i hi = _mm256_extracti128_si256(p, 1);
  _mm_storeu_si128(reinterpret_cast<__m128i*>(out), _mm_unpacklo_epi16(lo, hi));
  _mm_storeu_si128(reinterpret_cast<__m128i*>(out + 16), _mm_unpackhi_epi16(lo, hi));
}

// ref::quantize_act_row_q8_k, byte for byte.
void from_float_q8_k(const float* src, void* dst, int64_t n) {
  auto* out = static_cast<uint8_t*>(dst);
  for (int64_t i = 0; i < n / kQKK; ++i, src += kQKK, out += kQ8KSize) {
    const int imax = q8k_first_max(src);
    if (imax < 0) {
      std::memset(out, 0, kQ8KSize);
      continue;
    }
    const float iscale = -127.0f / src[imax];
    const __m256 vscale = _mm256_set1_ps(iscale);
    __m256i q[8];
    for (int c = 0; c < 8; ++c) {
      q[c] = q8k_codes32(src + 32 * c, vscale);
      _mm256_storeu_si256(reinterpret_cast<__m256i*>(out + kQ8KQs + 32 * c), q[c]);
    }
    q8k_bsums(q, out + kQ8KBsums);
    const float d = 1.0f / iscale;
    std::memcpy(out, &d, sizeof(d));
  }
}

// ---- Q4_K and Q5_K -----------------------------------------------------------------

// One Q4_K (kQ5 false) or Q5_K super-block of one row against T tokens into acc[0..T):
// first the min terms, then the codes.
template <bool kQ5, int T>
inline __attribute__((always_inline)) void k4_row_block(const uint8_t* b, const uint8_t* x,
                                                        size_t xs, const __m256* dy,
                                                        const __m256i* bsums, __m256* acc) {
  constexpr size_t kQs = kQ5 ? offsetof(BlockQ5K, qs) : offsetof(BlockQ4K, qs);
  const __m256i m4 = _mm256_set1_epi8(0x0F);
  const __m256i m16 = _mm256_set1_epi8(0x10);
  const __m128i sm = k4_scales_mins(b + offsetof(BlockQ4K, scales));
  const __m256i scales = _mm256_broadcastsi128_si256(_mm_cvtepu8_epi16(sm));
  // Min k against both sums of 16 of sub-block k: mn0 mn0 mn1 mn1 ... mn7 mn7.
  const __m256i mins = _mm256_cvtepu8_epi16(_mm_unpackhi_epi8(sm, sm));
  const __m256 d = _mm256_set1_ps(load_f16(b));
  const __m256 neg_dmin = _mm256_set1_ps(-load_f16(b + offsetof(BlockQ4K, dmin)));
  for (int t = 0; t < T; ++t) {  // acc += (-(dmin*dy)) * sum(min * bsums)
    const __m256 m = _mm256_cvtepi32_ps(_mm256_madd_epi16(mins, bsums[t]));
    acc[t] = _mm256_fmadd_ps(_mm256_mul_ps(neg_dmin, dy[t]), m, acc[t]);
  }
  __m256i qh = _mm256_setzero_si256();
  if constexpr (kQ5) qh = load256(b + offsetof(BlockQ5K, qh));
  __m256i isum[T];
  for (int t = 0; t < T; ++t) isum[t] = _mm256_setzero_si256();
#pragma GCC unroll 8
  for (int j = 0; j < 4; ++j) {  // 64 codes: sub-blocks 2j (low nibbles) and 2j + 1
    const __m256i q = load256(b + kQs + 32 * j);
    __m256i lo = _mm256_and_si256(q, m4);
    __m256i hi = _mm256_and_si256(_mm256_srli_epi16(q, 4), m4);
    if constexpr (kQ5) {  // bit 2j of qh[l] to bit 4 of the low code, bit 2j + 1 of the high
      lo = _mm256_or_si256(lo, _mm256_and_si256(_mm256_slli_epi16(qh, 4), m16));
      hi = _mm256_or_si256(hi, _mm256_and_si256(_mm256_slli_epi16(qh, 3), m16));
      qh = _mm256_srli_epi16(qh, 2);
    }
    const __m256i slo = _mm256_shuffle_epi8(scales, word_mask(2 * j));
    const __m256i shi = _mm256_shuffle_epi8(scales, word_mask(2 * j + 1));
    for (int t = 0; t < T; ++t) {
      const uint8_t* y = x + t * xs + kQ8KQs + 64 * j;
      const __m256i plo = _mm256_madd_epi16(_mm256_maddubs_epi16(lo, load256(y)), slo);
      const __m256i phi = _mm256_madd_epi16(_mm256_maddubs_epi16(hi, load256(y + 32)), shi);
      isum[t] = _mm256_add_epi32(isum[t], _mm256_add_epi32(plo, phi));
    }
  }
  for (int t = 0; t < T; ++t) {
    acc[t] = _mm256_fmadd_ps(_mm256_mul_ps(d, dy[t]), _mm256_cvtepi32_ps(isum[t]), acc[t]);
  }
}

// ---- Q6_K --------------------------------------------------------------------------

// One Q6_K super-block of one row against T tokens into acc[0..T). The codes are used
// unsigned (0..63); the reference's -32 comes back as -32 * sum(scale * bsums).
template <int T>
inline __attribute__((always_inline)) void q6k_row_block(const uint8_t* b, const uint8_t* x,
                                                         size_t xs, const __m256* dy,
                                                         const __m256i* bsums, __m256* acc) {
  const __m256i m4 = _mm256_set1_epi8(0x0F);
  const __m256i m30 = _mm256_set1_epi8(0x30);
  const __m256i sc = _mm256_cvtepi8_epi16(load128(b + offsetof(BlockQ6K, scales)));
  // Sub-block scales 0..7 and 8..15 as int16, each in both halves.
  const __m256i half_scales[2] = {_mm256_permute2x128_si256(sc, sc, 0x00),
                                  _mm256_permute2x128_si256(sc, sc, 0x11)};
  __m256i isum[T];
  for (int t = 0; t < T; ++t) {
    isum[t] = _mm256_sub_epi32(_mm256_setzero_si256(),
                               _mm256_slli_epi32(_mm256_madd_epi16(sc, bsums[t]), 5));
  }
#pragma GCC unroll 8
  for (int h = 0; h < 2; ++h) {  // 128 codes
    const __m256i qh = load256(b + offsetof(BlockQ6K, qh) + 32 * h);
#pragma GCC unroll 8
    for (int k = 0; k < 4; ++k) {  // 32 codes: sub-blocks 8h + 2k, 8h + 2k + 1
      const __m256i ql = load256(b + offsetof(BlockQ6K, ql) + 64 * h + 32 * (k & 1));
      const __m256i lo4 = k < 2 ? ql : _mm256_srli_epi16(ql, 4);
      // Bit pair k of qh to bits 4..5.
      const __m256i hi2 = k == 0   ? _mm256_slli_epi16(qh, 4)
                          : k == 1 ? _mm256_slli_epi16(qh, 2)
                          : k == 2 ? qh
                                   : _mm256_srli_epi16(qh, 2);
      const __m256i q = _mm256_or_si256(_mm256_and_si256(lo4, m4), _mm256_and_si256(hi2, m30));
      const __m256i s = _mm256_shuffle_epi8(half_scales[h], word_pair_mask(k));
      for (int t = 0; t < T; ++t) {
        const __m256i y = load256(x + t * xs + kQ8KQs + 128 * h + 32 * k);
        isum[t] = _mm256_add_epi32(isum[t], _mm256_madd_epi16(_mm256_maddubs_epi16(q, y), s));
      }
    }
  }
  const __m256 d = _mm256_set1_ps(load_f16(b + offsetof(BlockQ6K, d)));
  for (int t = 0; t < T; ++t) {
    acc[t] = _mm256_fmadd_ps(_mm256_mul_ps(d, dy[t]), _mm256_cvtepi32_ps(isum[t]), acc[t]);
  }
}

// ---- entry points ------------------------------------------------------------------

template <int R, int T>
struct Q4K {
  static constexpr KKernel run = tile_blocks<k4_row_block<false, T>, sizeof(BlockQ4K), R, T>;
};
template <int R, int T>
struct Q5K {
  static constexpr KKernel run = tile_blocks<k4_row_block<true, T>, sizeof(BlockQ5K), R, T>;
};
template <int R, int T>
struct Q6K {
  static constexpr KKernel run = tile_blocks<q6k_row_block<T>, sizeof(BlockQ6K), R, T>;
};

}  // namespace
}  // namespace hearth::kernels::simd

#pragma GCC pop_options

namespace hearth::kernels::simd {

void register_avx2_kquants(Table& t) {
  const auto set = [&t](TensorType type, VecDotFn dot, TileFn tile) {
    Entry& e = entry(t, type);
    e.vec_dot = dot;
    e.tile = tile;
    e.max_rows = kKTileRows;
    e.max_tokens = kKTileTokens;
  };
  set(TensorType::kQ4_K, KShapes<Q4K>::vec_dot, KShapes<Q4K>::tile);
  set(TensorType::kQ5_K, KShapes<Q5K>::vec_dot, KShapes<Q5K>::tile);
  set(TensorType::kQ6_K, KShapes<Q6K>::vec_dot, KShapes<Q6K>::tile);
  entry(t, TensorType::kQ8_K).from_float = from_float_q8_k;
  register_avx2_kquants2(t);
}

}  // namespace hearth::kernels::simd
