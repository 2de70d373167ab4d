// Small helpers shared by the AVX2 kernel sources. Include it only inside an AVX2 target
// region (after `#pragma GCC target("avx2,fma,f16c")`): these inline functions are
// compiled for AVX2 and must never be instantiated in baseline code.
#pragma once

#include <immintrin.h>

#include <cstddef>
#include <cstdint>
#include <cstring>

namespace hearth::kernels::simd::avx2 {

inline __m256i load256(const uint8_t* p) {
  return _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p));
}

inline __m128i load128(const uint8_t* p) {
  return _mm_loadu_si128(reinterpret_cast<const __m128i*>(p));
}

inline float load_f16(const uint8_t* p) {
  uint16_t h = 0;
  std::memcpy(&h, p, sizeof(h));
  return _cvtsh_ss(h);
}

inline float load_f32(const uint8_t* p) {
  float f = 0.0f;
  std::memcpy(&f, p, sizeof(f));
  return f;
}

inline uint32_t load_u32(const uint8_t* p) {
  uint32_t v = 0;
  std::memcpy(&v, p, sizeof(v));
  return v;
}

// Lanes 0+4, 1+5, 2+6, 3+7, then (0+2) + (1+3): the one reduction order of every output.
inline float hsum8(__m256 v) {
  __m128 s = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
  s = _mm_add_ps(s, _mm_movehl_ps(s, s));
  s = _mm_add_ss(s, _mm_movehdup_ps(s));
  return _mm_cvtss_f32(s);
}

// Selects 16-bit element k of each 128-bit half into all eight of its slots.
inline __m256i word_mask(int k) {
  return _mm256_set1_epi16(static_cast<short>(0x0100 + 0x0202 * k));
}

// Selects 16-bit element 2k into the low half's slots and 2k + 1 into the high half's: the
// scales of the two 16-element sub-blocks of a 32-byte run of codes.
inline __m256i word_pair_mask(int k) {
  return _mm256_set_m128i(_mm_set1_epi16(static_cast<short>(0x0302 + 0x0404 * k)),
                          _mm_set1_epi16(static_cast<short>(0x0100 + 0x0404 * k)));
}

// Eight f32 to f16, round to nearest even; NaN becomes the canonical quiet NaN with its
// sign, as the reference's conversion gives (the hardware would keep the payload's top bits).
inline __m128i f16_round8(__m256 v) {
  const __m128i h = _mm256_cvtps_ph(v, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
  const __m256i nan = _mm256_castps_si256(_mm256_cmp_ps(v, v, _CMP_UNORD_Q));
  const __m256i sign =
      _mm256_and_si256(_mm256_srli_epi32(_mm256_castps_si256(v), 16), _mm256_set1_epi32(0x8000));
  const __m256i canon = _mm256_or_si256(sign, _mm256_set1_epi32(0x7E00));
  const __m128i canon16 =
      _mm_packus_epi32(_mm256_castsi256_si128(canon), _mm256_extracti128_si256(canon, 1));
  const __m128i nan16 =
      _mm_packs_epi32(_mm256_castsi256_si128(nan), _mm256_extracti128_si256(nan, 1));
  return _mm_blendv_epi8(h, canon16, nan16);
}

// y[t * y_stride + r] = the lane sum of acc[r][t]: a tile's outputs.
template <int R, int T>
inline void store_outputs(const __m256 (&acc)[R][T], float* y, size_t y_stride) {
  for (int t = 0; t < T; ++t) {
    for (int r = 0; r < R; ++r) {
      y[static_cast<size_t>(t) * y_stride + static_cast<size_t>(r)] = hsum8(acc[r][t]);
    }
  }
}

}  // namespace hearth::kernels::simd::avx2
