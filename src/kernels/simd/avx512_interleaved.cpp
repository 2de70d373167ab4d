// The AVX-512 VNNI tiles of the interleaved layouts: 512-bit registers (all 16 rows of a
// group each) and vpdpbusd / vpdpwssd for the integer sums, the same logic as the AVX2 tiles
// (simd/interleaved_kernels.h) at twice the width.
#include <immintrin.h>

#include <cstdint>
#include <cstring>
#include <type_traits>

#include "kernels/block_formats.h"
#include "kernels/interleaved_format.h"

// GCC 12's AVX-512 intrinsics start their results from deliberately undefined registers
// (_mm512_undefined_*), which -Wuninitialized reports once they are inlined here.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wuninitialized"
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#pragma GCC push_options
#pragma GCC target("avx512f,avx512bw,avx512vl,avx512dq,avx512vnni,avx2,fma,f16c")

namespace hearth::kernels::simd {
namespace {

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
  static F fzero() { return _mm512_setzero_ps(); }
  static F bcastf(float v) { return _mm512_set1_ps(v); }
  static F cvt(I v) { return _mm512_cvtepi32_ps(v); }
  static F mul(F a, F b) { return _mm512_mul_ps(a, b); }
  static F fma(F a, F b, F c) { return _mm512_fmadd_ps(a, b, c); }
  static F fnma(F a, F b, F c) { return _mm512_fnmadd_ps(a, b, c); }
  static void store(float* y, F v) { _mm512_storeu_ps(y, v); }
};

// vpdpbusd: 4 u8 x s8 products into each int32 lane, exact. Sub-block scales multiply the
// int32 sums (vpmulld); the min terms use vpdpwssd on 16-bit pairs.
template <class V>
struct Vnni {
  using I = typename V::I;
  static I acc_u4(I acc, I u, I s) { return V::dpbusd(acc, u, s); }
  static I acc_u5x2(I acc, I u1, I s1, I u2, I s2) {
    return V::dpbusd(V::dpbusd(acc, u1, s1), u2, s2);
  }
  template <bool kInt32>
  static I add_parts(I a, I b) {
    return V::add32(a, b);
  }
  static I sum_u4(I acc) { return acc; }
  static I scale(I sc) { return sc; }
  static I scaled_sum_u4(I acc, I scale) { return V::mullo32(acc, scale); }
  static I madd_acc(I acc, I a, I b) { return V::dpwssd(acc, a, b); }
  // 6-bit codes: int32 sums per sub-block, then times the signed scale (vpmulld).
  template <bool kHigh>
  static I u6_scale(I pair) {  // pair: (sc_2p, sc_2p+1) as 16-bit halves of each lane
    return kHigh ? V::sra32_16(pair) : V::sra32_16(V::sll32_16(pair));
  }
  static I acc_u6(I acc, I u, I s, I /*scale*/) { return V::dpbusd(acc, u, s); }
  static I sub_u6(I acc, I scale) { return V::mullo32(acc, scale); }
  // Codes stored + 128 are multiplied as unsigned; 128 * sum(x) is taken off per block.
  using S8 = I;
  static constexpr int kS8Bias = 128;
  static S8 prep_s8(I biased) { return biased; }
  static I acc_s8(I acc, S8 w, I x) { return V::dpbusd(acc, w, x); }
  // The scale multiplies the sub-block's int32 sum afterwards (sub_u6).
  static I acc_s8_scaled(I acc, S8 w, I x, I /*scale*/) { return V::dpbusd(acc, w, x); }
};

#include "kernels/simd/interleaved_kernels.h"

using P = Vnni<V512>;

// One token (decode) splits each block's vpdpbusd chain over 4 accumulators; several tokens
// already give as many independent chains. Both give the same bits.
void tile_q4_0(const interleaved::TileArgs& a) {
  if (a.n_tokens == 1) {
    run_tile<V512, Q4_0Tile<V512, P, 1, 4>, 1, 1>(a);
  } else {
    run_tile<V512, Q4_0Tile<V512, P, 1>, 1, 8>(a);
  }
}
void tile_q8_0(const interleaved::TileArgs& a) {
  if (a.n_tokens == 1) {
    run_tile<V512, Q8_0Tile<V512, P, 1, 4>, 1, 1>(a);
  } else {
    run_tile<V512, Q8_0Tile<V512, P, 1>, 1, 8>(a);
  }
}
void tile_q6_k(const interleaved::TileArgs& a) {
  run_tile<V512, Q6_KTile<V512, P, 1>, 1, 6>(a);
}
void tile_q4_k(const interleaved::TileArgs& a) {
  run_tile<V512, Q4_KTile<V512, P, 1>, 1, 6>(a);
}

template <class L, int kBias, bool kFifthBit, bool kMin>
void tile_unsigned(const interleaved::TileArgs& a) {
  if (a.n_tokens == 1) {
    run_tile<V512, UnsignedTile<V512, P, L, kBias, kFifthBit, kMin, 1, 4>, 1, 1>(a);
  } else {
    run_tile<V512, UnsignedTile<V512, P, L, kBias, kFifthBit, kMin, 1>, 1, 8>(a);
  }
}
void tile_iq4_nl(const interleaved::TileArgs& a) {
  if (a.n_tokens == 1) {
    run_tile<V512, IQ4_NLTile<V512, P, 1, 4>, 1, 1>(a);
  } else {
    run_tile<V512, IQ4_NLTile<V512, P, 1>, 1, 8>(a);
  }
}
void tile_q5_k(const interleaved::TileArgs& a) {
  run_tile<V512, Q5_KTile<V512, P, 1>, 1, 6>(a);
}
void tile_iq4_xs(const interleaved::TileArgs& a) {
  run_tile<V512, IQ4_XSTile<V512, P, 1>, 1, 6>(a);
}

}  // namespace

InterleavedEntry avx512_interleaved() {
  using namespace interleaved;
  return {tile_q4_0,
          tile_q8_0,
          tile_q4_k,
          tile_q6_k,
          tile_unsigned<Q4_1Layout, 0, false, true>,
          tile_unsigned<Q5_0Layout, 16, true, false>,
          tile_unsigned<Q5_1Layout, 0, true, true>,
          tile_iq4_nl,
          tile_q5_k,
          tile_iq4_xs};
}

}  // namespace hearth::kernels::simd

#pragma GCC pop_options
#pragma GCC diagnostic pop
