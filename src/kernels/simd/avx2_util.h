// Small helpers shared by the AVX2 and AVX-512 kernel sources. Include it only inside a
// target region of AVX2 or above (after `#pragma GCC target(...)`). The helpers have internal
// linkage, so each file's copies are compiled for its own level and never shared with
// baseline code or with a lower level.
#pragma once

#include <immintrin.h>

#include <cstddef>
#include <cstdint>
#include <cstring>

namespace hearth::kernels::simd::avx2 {
namespace {

inline __m256i load256(const uint8_t* p) {
  return _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p));
}

inline __m128i load128(const uint8_t* p) {
  return _mm_loadu_si128(reinterpret_cast<const __m128i*>(p));
}

inline uint16_t load_u16(const uint8_t* p) {
  uint16_t h = 0;
  std::memcpy(&h, p, sizeof(h));
  return h;
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

// The 32 nibbles of a block as bytes 0..15: byte j of qs gives element j (low nibble, low
// 128-bit lane) and element j + 16 (high nibble, high lane). The 16 bytes are broadcast to
// both lanes by the load and the high lane shifted by 4.
inline __m256i unpack_nibbles(const uint8_t* qs) {
  const __m256i both = _mm256_broadcastsi128_si256(load128(qs));
  const __m256i shifted = _mm256_srlv_epi32(both, _mm256_setr_epi32(0, 0, 0, 0, 4, 4, 4, 4));
  return _mm256_and_si256(shifted, _mm256_set1_epi8(0x0F));
}

// The eight 6-bit scales (bytes 0..7) and mins (bytes 8..15) of a Q4_K/Q5_K block.
inline __m128i k4_scales_mins(const uint8_t* p) {
  const uint32_t w0 = load_u32(p), w1 = load_u32(p + 4), w2 = load_u32(p + 8);
  const uint32_t m6 = 0x3F3F3F3F, m4 = 0x0F0F0F0F, m2 = 0x03030303;
  const uint32_t sc_lo = w0 & m6;
  const uint32_t mn_lo = w1 & m6;
  const uint32_t sc_hi = (w2 & m4) | (((w0 >> 6) & m2) << 4);
  const uint32_t mn_hi = ((w2 >> 4) & m4) | (((w1 >> 6) & m2) << 4);
  return _mm_set_epi32(static_cast<int>(mn_hi), static_cast<int>(mn_lo), static_cast<int>(sc_hi),
                       static_cast<int>(sc_lo));
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

}  // namespace
}  // namespace hearth::kernels::simd::avx2
