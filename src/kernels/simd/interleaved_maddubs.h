// The AVX2 integer policy of the interleaved tiles (simd/interleaved_kernels.h): vpmaddubsw
// and vpmaddwd over V256. Include only inside a target region, in an anonymous namespace.
#pragma once

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
  // An activation code of -128, which the Q8 quantizers give only for NaN inputs, would
  // wrap in vpsignb; such outputs are meaningless on every level, but not the same bits.
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
