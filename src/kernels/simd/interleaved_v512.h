// The 512-bit vector width of the interleaved tiles (simd/interleaved_kernels.h), shared by
// the AVX-512 files. Include only inside a target
// region with AVX-512 F/BW/VL/DQ and VNNI, in an anonymous namespace; needs <immintrin.h>,
// <cstdint> and <cstring>.
#pragma once

struct V512 {
  using I = __m512i;
  using F = __m512;
  static constexpr int kLanes = 16;
  static I load(const uint8_t* p) { return _mm512_loadu_si512(p); }
  static I bcast(const uint8_t* p) {
    int32_t v = 0;
    std::memcpy(&v, p, sizeof(v));
    return _mm512_set1_epi32(v);
  }
  static I set1(int32_t v) { return _mm512_set1_epi32(v); }
  static I set1_8(int v) { return _mm512_set1_epi8(static_cast<char>(v)); }
  static I zero() { return _mm512_setzero_si512(); }
  static I and_(I a, I b) { return _mm512_and_si512(a, b); }
  static I srl16_4(I a) { return _mm512_srli_epi16(a, 4); }
  static I srl16_2(I a) { return _mm512_srli_epi16(a, 2); }
  static I sll16_2(I a) { return _mm512_slli_epi16(a, 2); }
  static I sll16_4(I a) { return _mm512_slli_epi16(a, 4); }
  static I sll16_3(I a) { return _mm512_slli_epi16(a, 3); }
  static I srl16(I a, int n) { return _mm512_srl_epi16(a, _mm_cvtsi32_si128(n)); }
  static I sll32_7(I a) { return _mm512_slli_epi32(a, 7); }
  static I shuffle8(I table, I idx) { return _mm512_shuffle_epi8(table, idx); }
  // Byte c of every int32 lane, repeated over the lane's 4 bytes (a shuffle8 index).
  static I lane_byte(int c) {
    const int32_t b = 0x01010101 * c;
    return _mm512_broadcast_i32x4(
        _mm_setr_epi32(b, b + 0x04040404, b + 0x08080808, b + 0x0C0C0C0C));
  }
  // 0x10 in each byte whose bits under m's byte are set (m has one bit per byte), else 0.
  static I bit4_where(I v, I m) {
    return _mm512_maskz_mov_epi8(_mm512_test_epi8_mask(v, m), set1_8(0x10));
  }
  static I bcast16(const uint8_t* p) {
    return _mm512_broadcast_i32x4(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p)));
  }
  static I sll32_5(I a) { return _mm512_slli_epi32(a, 5); }
  static I sll32_16(I a) { return _mm512_slli_epi32(a, 16); }
  static I sra32_16(I a) { return _mm512_srai_epi32(a, 16); }
  static I or_(I a, I b) { return _mm512_or_si512(a, b); }
  static I add32(I a, I b) { return _mm512_add_epi32(a, b); }
  static I sub32(I a, I b) { return _mm512_sub_epi32(a, b); }
  static I mullo32(I a, I b) { return _mm512_mullo_epi32(a, b); }
  static I dpbusd(I acc, I u, I s) { return _mm512_dpbusd_epi32(acc, u, s); }
  static I dpwssd(I acc, I a, I b) { return _mm512_dpwssd_epi32(acc, a, b); }
  // 16 bytes -> 16 int32 lanes; 32 bytes -> 32 int16 (16 lanes of pairs).
  static I u8_to_i32(const uint8_t* p) {
    return _mm512_cvtepu8_epi32(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p)));
  }
  static I u8_to_i16(const uint8_t* p) {
    return _mm512_cvtepu8_epi16(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(p)));
  }
  static I i8_to_i16(const uint8_t* p) {
    return _mm512_cvtepi8_epi16(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(p)));
  }
  static F f16_to_f32(const uint8_t* p) {
    return _mm512_cvtph_ps(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(p)));
  }
  static F as_float(I v) { return _mm512_castsi512_ps(v); }
  static F fzero() { return _mm512_setzero_ps(); }
  static F bcastf(float v) { return _mm512_set1_ps(v); }
  static F cvt(I v) { return _mm512_cvtepi32_ps(v); }
  static F mul(F a, F b) { return _mm512_mul_ps(a, b); }
  static F fma(F a, F b, F c) { return _mm512_fmadd_ps(a, b, c); }
  static F fnma(F a, F b, F c) { return _mm512_fnmadd_ps(a, b, c); }
  static void store(float* y, F v) { _mm512_storeu_ps(y, v); }
};
