// The 256-bit vector width of the interleaved tiles (simd/interleaved_kernels.h), shared by
// the AVX2 and AVX-VNNI files (and the AVX-512 file's 256-bit VNNI tiles). Include only inside
// a target region with AVX2, FMA and F16C, in an anonymous namespace; needs <immintrin.h>,
// <cstdint> and <cstring>.
#pragma once

struct V256 {
  using I = __m256i;
  using F = __m256;
  static constexpr int kLanes = 8;
  static I load(const uint8_t* p) {
    return _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p));
  }
  static I bcast(const uint8_t* p) {
    int32_t v = 0;
    std::memcpy(&v, p, sizeof(v));
    return _mm256_set1_epi32(v);
  }
  static I set1(int32_t v) { return _mm256_set1_epi32(v); }
  static I set1_8(int v) { return _mm256_set1_epi8(static_cast<char>(v)); }
  static I set1_16(int v) { return _mm256_set1_epi16(static_cast<short>(v)); }
  static I zero() { return _mm256_setzero_si256(); }
  static I and_(I a, I b) { return _mm256_and_si256(a, b); }
  static I or_(I a, I b) { return _mm256_or_si256(a, b); }
  static I xor_(I a, I b) { return _mm256_xor_si256(a, b); }
  static I srl16_4(I a) { return _mm256_srli_epi16(a, 4); }
  static I srl16_2(I a) { return _mm256_srli_epi16(a, 2); }
  static I sll16_2(I a) { return _mm256_slli_epi16(a, 2); }
  static I sll16_4(I a) { return _mm256_slli_epi16(a, 4); }
  static I sll16_3(I a) { return _mm256_slli_epi16(a, 3); }
  static I srl16(I a, int n) { return _mm256_srl_epi16(a, _mm_cvtsi32_si128(n)); }
  static I sll32_7(I a) { return _mm256_slli_epi32(a, 7); }
  static I shuffle8(I table, I idx) { return _mm256_shuffle_epi8(table, idx); }
  // Byte c of every int32 lane, repeated over the lane's 4 bytes (a shuffle8 index).
  static I lane_byte(int c) {
    const int32_t b = 0x01010101 * c;
    return _mm256_setr_epi32(b, b + 0x04040404, b + 0x08080808, b + 0x0C0C0C0C, b, b + 0x04040404,
                             b + 0x08080808, b + 0x0C0C0C0C);
  }
  // 0x10 in each byte whose bits under m's byte are set (m has one bit per byte), else 0.
  static I bit4_where(I v, I m) {
    return _mm256_and_si256(_mm256_cmpeq_epi8(_mm256_and_si256(v, m), m), set1_8(0x10));
  }
  static I bcast16(const uint8_t* p) {
    return _mm256_broadcastsi128_si256(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p)));
  }
  static I sll32_5(I a) { return _mm256_slli_epi32(a, 5); }
  static I srl32_16(I a) { return _mm256_srli_epi32(a, 16); }
  static I sll32_16(I a) { return _mm256_slli_epi32(a, 16); }
  static I add16(I a, I b) { return _mm256_add_epi16(a, b); }
  static I add32(I a, I b) { return _mm256_add_epi32(a, b); }
  static I sub32(I a, I b) { return _mm256_sub_epi32(a, b); }
  static I mullo32(I a, I b) { return _mm256_mullo_epi32(a, b); }
  static I sra32_16(I a) { return _mm256_srai_epi32(a, 16); }
  static I maddubs(I u, I s) { return _mm256_maddubs_epi16(u, s); }
  static I madd(I a, I b) { return _mm256_madd_epi16(a, b); }
  static I sign8(I a, I b) { return _mm256_sign_epi8(a, b); }
  static I abs8(I a) { return _mm256_abs_epi8(a); }
  // 8 bytes -> 8 int32 lanes; 16 bytes -> 16 int16 (8 lanes of pairs).
  static I u8_to_i32(const uint8_t* p) {
    return _mm256_cvtepu8_epi32(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(p)));
  }
  static I u8_to_i16(const uint8_t* p) {
    return _mm256_cvtepu8_epi16(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p)));
  }
  static I i8_to_i16(const uint8_t* p) {
    return _mm256_cvtepi8_epi16(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p)));
  }
  static F f16_to_f32(const uint8_t* p) {
    return _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p)));
  }
  static F as_float(I v) { return _mm256_castsi256_ps(v); }
  static F fzero() { return _mm256_setzero_ps(); }
  static F bcastf(float v) { return _mm256_set1_ps(v); }
  static F cvt(I v) { return _mm256_cvtepi32_ps(v); }
  static F mul(F a, F b) { return _mm256_mul_ps(a, b); }
  static F fma(F a, F b, F c) { return _mm256_fmadd_ps(a, b, c); }
  static F fnma(F a, F b, F c) { return _mm256_fnmadd_ps(a, b, c); }
  static void store(float* y, F v) { _mm256_storeu_ps(y, v); }
};
