// The AVX2 tiles of the interleaved layouts: 256-bit registers (8 rows of a group each) and
// vpmaddubsw + vpmaddwd for the integer sums (simd/interleaved_kernels.h has the logic).
#include <immintrin.h>

#include <cstdint>
#include <cstring>
#include <type_traits>

#include "kernels/block_formats.h"
#include "kernels/interleaved_format.h"

#pragma GCC push_options
#pragma GCC target("avx2,fma,f16c")

namespace hearth::kernels::simd {
namespace {

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

// vpmaddubsw + vpmaddwd. 4-bit codes accumulate as 16-bit pairs: a block's 8 registers of
// codes give at most 8 * 2 * 15 * 128 = 30720 per pair, below the saturation point.
template <class V>
struct Maddubs {
  using I = typename V::I;
  static I acc_u4(I acc, I u, I s) { return V::add16(acc, V::maddubs(u, s)); }
  // Two registers of 4- or 5-bit codes into int32 lanes: each pair stays below 2 * 31 * 128.
  static I acc_u5x2(I acc, I u1, I s1, I u2, I s2) {
    return V::add32(acc, V::madd(V::add16(V::maddubs(u1, s1), V::maddubs(u2, s2)), V::set1_16(1)));
  }
  // Partial accumulators of one block: 16-bit pairs (4-bit codes) or int32 lanes (S8).
  template <bool kInt32>
  static I add_parts(I a, I b) {
    return kInt32 ? V::add32(a, b) : V::add16(a, b);
  }
  static I sum_u4(I acc) { return V::madd(acc, V::set1_16(1)); }
  // A sub-block scale per lane as the 16-bit pair (sc, sc) that vpmaddwd multiplies by.
  static I scale(I sc) { return V::or_(sc, V::sll32_16(sc)); }
  static I scaled_sum_u4(I acc, I scale) { return V::madd(acc, scale); }
  static I madd_acc(I acc, I a, I b) { return V::add32(acc, V::madd(a, b)); }
  // 6-bit codes: a pair of products reaches 2 * 63 * 128, so each register is scaled at once
  // (vpmaddwd by the signed sub-block scale as the 16-bit pair (sc, sc)) into int32 lanes.
  template <bool kHigh>
  static I u6_scale(I pair) {  // pair: (sc_2p, sc_2p+1) as 16-bit halves of each lane
    return kHigh ? V::or_(V::srl32_16(pair),
                          V::and_(pair, V::set1(static_cast<int32_t>(0xFFFF0000u))))
                 : V::or_(V::and_(pair, V::set1(0xFFFF)), V::sll32_16(pair));
  }
  static I acc_u6(I acc, I u, I s, I scale) {
    return V::add32(acc, V::madd(V::maddubs(u, s), scale));
  }
  static I sub_u6(I acc, I /*scale*/) { return acc; }
  // Signed codes (stored + 128): |w| times x with w's sign, each pair at most 2 * 128 * 127.
  struct S8 {
    I abs_w;
    I w;
  };
  static constexpr int kS8Bias = 0;  // the sums come out unbiased
  static S8 prep_s8(I biased) {
    const I w = V::xor_(biased, V::set1_8(0x80));
    return {V::abs8(w), w};
  }
  static I acc_s8(I acc, const S8& w, I x) {
    return V::add32(acc, V::madd(V::maddubs(w.abs_w, V::sign8(x, w.w)), V::set1_16(1)));
  }
  // The same products times a sub-block scale given as the 16-bit pair (sc, sc).
  static I acc_s8_scaled(I acc, const S8& w, I x, I scale) {
    return V::add32(acc, V::madd(V::maddubs(w.abs_w, V::sign8(x, w.w)), scale));
  }
};

#include "kernels/simd/interleaved_kernels.h"

using P = Maddubs<V256>;

// One token (decode) reads both halves of a group in one pass, so each 64-byte line of
// codes is used whole; several tokens take one half at a time to keep more tokens' sums in
// the 16 registers. Both give the same bits.
void tile_q4_0(const interleaved::TileArgs& a) {
  if (a.n_tokens == 1) {
    run_tile<V256, Q4_0Tile<V256, P, 2>, 2, 1>(a);
  } else {
    run_tile<V256, Q4_0Tile<V256, P, 1>, 1, 4>(a);
  }
}
void tile_q8_0(const interleaved::TileArgs& a) {
  if (a.n_tokens == 1) {
    run_tile<V256, Q8_0Tile<V256, P, 2>, 2, 1>(a);
  } else {
    run_tile<V256, Q8_0Tile<V256, P, 1>, 1, 4>(a);
  }
}
void tile_q6_k(const interleaved::TileArgs& a) {
  if (a.n_tokens == 1) {
    run_tile<V256, Q6_KTile<V256, P, 2>, 2, 1>(a);
  } else {
    run_tile<V256, Q6_KTile<V256, P, 1>, 1, 2>(a);
  }
}
void tile_q4_k(const interleaved::TileArgs& a) {
  if (a.n_tokens == 1) {
    run_tile<V256, Q4_KTile<V256, P, 2>, 2, 1>(a);
  } else {
    run_tile<V256, Q4_KTile<V256, P, 1>, 1, 2>(a);
  }
}

template <class L, int kBias, bool kFifthBit, bool kMin>
void tile_unsigned(const interleaved::TileArgs& a) {
  if (a.n_tokens == 1) {
    run_tile<V256, UnsignedTile<V256, P, L, kBias, kFifthBit, kMin, 2>, 2, 1>(a);
  } else {
    run_tile<V256, UnsignedTile<V256, P, L, kBias, kFifthBit, kMin, 1>, 1, 4>(a);
  }
}
void tile_iq4_nl(const interleaved::TileArgs& a) {
  if (a.n_tokens == 1) {
    run_tile<V256, IQ4_NLTile<V256, P, 2>, 2, 1>(a);
  } else {
    run_tile<V256, IQ4_NLTile<V256, P, 1>, 1, 4>(a);
  }
}
void tile_q5_k(const interleaved::TileArgs& a) {
  if (a.n_tokens == 1) {
    run_tile<V256, Q5_KTile<V256, P, 2>, 2, 1>(a);
  } else {
    run_tile<V256, Q5_KTile<V256, P, 1>, 1, 2>(a);
  }
}
void tile_iq4_xs(const interleaved::TileArgs& a) {
  if (a.n_tokens == 1) {
    run_tile<V256, IQ4_XSTile<V256, P, 2>, 2, 1>(a);
  } else {
    run_tile<V256, IQ4_XSTile<V256, P, 1>, 1, 2>(a);
  }
}

template <class W>
void tile_float(const interleaved::TileArgs& a) {
  if (a.n_tokens == 1) {
    run_tile<V256, FloatTile<V256, W, 2>, 2, 1>(a);
  } else {
    run_tile<V256, FloatTile<V256, W, 1>, 1, 6>(a);
  }
}

}  // namespace

InterleavedEntry avx2_interleaved() {
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
          tile_iq4_xs,
          tile_float<F16Pairs<V256>>,
          tile_float<BF16Pairs<V256>>};
}

}  // namespace hearth::kernels::simd

#pragma GCC pop_options
