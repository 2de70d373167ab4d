// AVX2 dot-product tiles of Q2_K, Q3_K and IQ4_XS against Q8_K activations, built like
// those of avx2_kquants.cpp (see there): exact int32 sums per super-block, the offsets and
// min terms from the activation's bsums, one FMA per block and term into each output's
// __m256 accumulator, one fixed horizontal sum. Q2_K and Q3_K codes are used unsigned
// (0..3, 0..7); IQ4_XS values are signed, so they go through the sign trick of §4.4
// (|v| times q8 with v's sign; |v| <= 127 keeps the int16 pair sums below saturation).
#include <immintrin.h>

#include <cstddef>
#include <cstdint>
#include <cstring>

#include "kernels/block_formats.h"
#include "kernels/simd/simd_table.h"

#pragma GCC push_options
#pragma GCC target("avx2,fma,f16c")

#include "kernels/simd/avx2_kquant_tile.h"
#include "kernels/simd/avx2_util.h"

namespace hearth::kernels::simd {
namespace {

using namespace avx2;  // NOLINT(google-build-using-namespace): the file's own toolbox

// Sixteen int16 scales (both halves: 0..7 in `lo`, 8..15 in `hi`) as the two per-half
// broadcasts word_pair_mask selects from.
struct HalfScales {
  __m256i lo;
  __m256i hi;
};

inline HalfScales half_scales(__m256i sc16) {
  return {_mm256_permute2x128_si256(sc16, sc16, 0x00), _mm256_permute2x128_si256(sc16, sc16, 0x11)};
}

// ---- Q2_K --------------------------------------------------------------------------

// One Q2_K super-block of one row against T tokens into acc[0..T).
template <int T>
inline __attribute__((always_inline)) void q2k_row_block(const uint8_t* b, const uint8_t* x,
                                                         size_t xs, const __m256* dy,
                                                         const __m256i* bsums, __m256* acc) {
  const __m256i m3 = _mm256_set1_epi8(3);
  const __m128i m4 = _mm_set1_epi8(0x0F);
  const __m128i sm = load128(b + offsetof(BlockQ2K, scales));
  const HalfScales hs = half_scales(_mm256_cvtepu8_epi16(_mm_and_si128(sm, m4)));
  const __m256i mins = _mm256_cvtepu8_epi16(_mm_and_si128(_mm_srli_epi16(sm, 4), m4));
  const __m256 neg_dmin = _mm256_set1_ps(-load_f16(b + offsetof(BlockQ2K, dmin)));
  for (int t = 0; t < T; ++t) {  // acc += (-(dmin*dy)) * sum(min * bsums)
    const __m256 m = _mm256_cvtepi32_ps(_mm256_madd_epi16(mins, bsums[t]));
    acc[t] = _mm256_fmadd_ps(_mm256_mul_ps(neg_dmin, dy[t]), m, acc[t]);
  }
  __m256i isum[T];
  for (int t = 0; t < T; ++t) isum[t] = _mm256_setzero_si256();
#pragma GCC unroll 8
  for (int h = 0; h < 2; ++h) {  // 128 codes
    const __m256i q2 = load256(b + offsetof(BlockQ2K, qs) + 32 * h);
#pragma GCC unroll 8
    for (int j = 0; j < 4; ++j) {  // 32 codes: bit pair j, sub-blocks 8h + 2j and 8h + 2j + 1
      const __m256i u = _mm256_and_si256(_mm256_srli_epi16(q2, 2 * j), m3);
      const __m256i s = _mm256_shuffle_epi8(h == 0 ? hs.lo : hs.hi, word_pair_mask(j));
      for (int t = 0; t < T; ++t) {
        const __m256i y = load256(x + t * xs + kQ8KQs + 128 * h + 32 * j);
        isum[t] = _mm256_add_epi32(isum[t], _mm256_madd_epi16(_mm256_maddubs_epi16(u, y), s));
      }
    }
  }
  const __m256 d = _mm256_set1_ps(load_f16(b + offsetof(BlockQ2K, d)));
  for (int t = 0; t < T; ++t) {
    acc[t] = _mm256_fmadd_ps(_mm256_mul_ps(d, dy[t]), _mm256_cvtepi32_ps(isum[t]), acc[t]);
  }
}

// ---- Q3_K --------------------------------------------------------------------------

// The sixteen signed 6-bit scales (-32..31) of a Q3_K block as bytes.
inline __m128i q3k_scales(const uint8_t* p) {
  const uint32_t w0 = load_u32(p), w1 = load_u32(p + 4), w2 = load_u32(p + 8);
  const uint32_t m4 = 0x0F0F0F0F, m2 = 0x03030303;
  const uint32_t s0 = (w0 & m4) | ((w2 & m2) << 4);
  const uint32_t s1 = (w1 & m4) | (((w2 >> 2) & m2) << 4);
  const uint32_t s2 = ((w0 >> 4) & m4) | (((w2 >> 4) & m2) << 4);
  const uint32_t s3 = ((w1 >> 4) & m4) | (((w2 >> 6) & m2) << 4);
  const __m128i biased = _mm_set_epi32(static_cast<int>(s3), static_cast<int>(s2),
                                       static_cast<int>(s1), static_cast<int>(s0));
  return _mm_sub_epi8(biased, _mm_set1_epi8(32));
}

// One Q3_K super-block of one row against T tokens into acc[0..T). The codes are used
// unsigned (lo2 + 4 * hbit, 0..7); the reference's -4 comes back as -4 * sum(scale * bsums).
template <int T>
inline __attribute__((always_inline)) void q3k_row_block(const uint8_t* b, const uint8_t* x,
                                                         size_t xs, const __m256* dy,
                                                         const __m256i* bsums, __m256* acc) {
  const __m256i m3 = _mm256_set1_epi8(3);
  const __m256i m4 = _mm256_set1_epi8(4);
  const __m256i sc = _mm256_cvtepi8_epi16(q3k_scales(b + offsetof(BlockQ3K, scales)));
  const HalfScales hs = half_scales(sc);
  __m256i isum[T];
  for (int t = 0; t < T; ++t) {
    isum[t] = _mm256_sub_epi32(_mm256_setzero_si256(),
                               _mm256_slli_epi32(_mm256_madd_epi16(sc, bsums[t]), 2));
  }
  __m256i hmask = load256(b + offsetof(BlockQ3K, hmask));
#pragma GCC unroll 8
  for (int h = 0; h < 2; ++h) {  // 128 codes
    const __m256i q2 = load256(b + offsetof(BlockQ3K, qs) + 32 * h);
#pragma GCC unroll 8
    for (int j = 0; j < 4; ++j) {  // 32 codes; their high bit is bit 4h + j of hmask[l]
      const __m256i lo2 = _mm256_and_si256(_mm256_srli_epi16(q2, 2 * j), m3);
      const __m256i u = _mm256_or_si256(lo2, _mm256_and_si256(_mm256_slli_epi16(hmask, 2), m4));
      hmask = _mm256_srli_epi16(hmask, 1);
      const __m256i s = _mm256_shuffle_epi8(h == 0 ? hs.lo : hs.hi, word_pair_mask(j));
      for (int t = 0; t < T; ++t) {
        const __m256i y = load256(x + t * xs + kQ8KQs + 128 * h + 32 * j);
        isum[t] = _mm256_add_epi32(isum[t], _mm256_madd_epi16(_mm256_maddubs_epi16(u, y), s));
      }
    }
  }
  const __m256 d = _mm256_set1_ps(load_f16(b + offsetof(BlockQ3K, d)));
  for (int t = 0; t < T; ++t) {
    acc[t] = _mm256_fmadd_ps(_mm256_mul_ps(d, dy[t]), _mm256_cvtepi32_ps(isum[t]), acc[t]);
  }
}

// ---- IQ4_XS ------------------------------------------------------------------------

// The eight sub-block scales ls - 32 as int16, in both halves.
inline __m256i iq4xs_scales(const uint8_t* block) {
  uint16_t high = 0;
  std::memcpy(&high, block + offsetof(BlockIq4Xs, scales_h), sizeof(high));
  const uint32_t low = load_u32(block + offsetof(BlockIq4Xs, scales_l));
  const __m256i nib =
      _mm256_and_si256(_mm256_srlv_epi32(_mm256_set1_epi32(static_cast<int>(low)),
                                         _mm256_setr_epi32(0, 4, 8, 12, 16, 20, 24, 28)),
                       _mm256_set1_epi32(0x0F));
  const __m256i hi2 = _mm256_and_si256(
      _mm256_srlv_epi32(_mm256_set1_epi32(high), _mm256_setr_epi32(0, 2, 4, 6, 8, 10, 12, 14)),
      _mm256_set1_epi32(3));
  const __m256i ls =
      _mm256_sub_epi32(_mm256_or_si256(nib, _mm256_slli_epi32(hi2, 4)), _mm256_set1_epi32(32));
  // packs: [0..3 0..3 | 4..7 4..7]; the 64-bit permute makes [0..7 | 0..7].
  return _mm256_permute4x64_epi64(_mm256_packs_epi32(ls, ls), 0x88);
}

// One IQ4_XS super-block of one row against T tokens into acc[0..T).
template <int T>
inline __attribute__((always_inline)) void iq4xs_row_block(const uint8_t* b, const uint8_t* x,
                                                           size_t xs, const __m256* dy,
                                                           const __m256i* /*bsums*/, __m256* acc) {
  const __m256i m4 = _mm256_set1_epi8(0x0F);
  const __m256i values =
      _mm256_broadcastsi128_si256(load128(reinterpret_cast<const uint8_t*>(kIq4nlValues)));
  const __m256i scales = iq4xs_scales(b);
  __m256i isum[T];
  for (int t = 0; t < T; ++t) isum[t] = _mm256_setzero_si256();
#pragma GCC unroll 8
  for (int sb = 0; sb < 8; ++sb) {  // 32 codes: low nibbles of 16 bytes, then high nibbles
    const __m128i q = load128(b + offsetof(BlockIq4Xs, qs) + 16 * sb);
    const __m256i u = _mm256_and_si256(_mm256_set_m128i(_mm_srli_epi16(q, 4), q), m4);
    const __m256i v = _mm256_shuffle_epi8(values, u);
    const __m256i av = _mm256_sign_epi8(v, v);
    const __m256i s = _mm256_shuffle_epi8(scales, word_mask(sb));
    for (int t = 0; t < T; ++t) {
      const __m256i y = load256(x + t * xs + kQ8KQs + 32 * sb);
      const __m256i p = _mm256_maddubs_epi16(av, _mm256_sign_epi8(y, v));
      isum[t] = _mm256_add_epi32(isum[t], _mm256_madd_epi16(p, s));
    }
  }
  const __m256 d = _mm256_set1_ps(load_f16(b + offsetof(BlockIq4Xs, d)));
  for (int t = 0; t < T; ++t) {
    acc[t] = _mm256_fmadd_ps(_mm256_mul_ps(d, dy[t]), _mm256_cvtepi32_ps(isum[t]), acc[t]);
  }
}

// ---- entry points ------------------------------------------------------------------

template <int R, int T>
struct Q2K {
  static constexpr KKernel run = tile_blocks<q2k_row_block<T>, sizeof(BlockQ2K), R, T>;
};
template <int R, int T>
struct Q3K {
  static constexpr KKernel run = tile_blocks<q3k_row_block<T>, sizeof(BlockQ3K), R, T>;
};
template <int R, int T>
struct Iq4Xs {
  static constexpr KKernel run = tile_blocks<iq4xs_row_block<T>, sizeof(BlockIq4Xs), R, T>;
};

}  // namespace
}  // namespace hearth::kernels::simd

#pragma GCC pop_options

namespace hearth::kernels::simd {

// Declared in avx2_kquants.cpp, which calls it from register_avx2_kquants.
void register_avx2_kquants2(Table& t);

void register_avx2_kquants2(Table& t) {
  const auto set = [&t](TensorType type, VecDotFn dot, TileFn tile) {
    Entry& e = entry(t, type);
    e.vec_dot = dot;
    e.tile = tile;
    e.max_rows = kKTileRows;
    e.max_tokens = kKTileTokens;
  };
  set(TensorType::kQ2_K, KShapes<Q2K>::vec_dot, KShapes<Q2K>::tile);
  set(TensorType::kQ3_K, KShapes<Q3K>::vec_dot, KShapes<Q3K>::tile);
  set(TensorType::kIQ4_XS, KShapes<Iq4Xs>::vec_dot, KShapes<Iq4Xs>::tile);
}

}  // namespace hearth::kernels::simd
