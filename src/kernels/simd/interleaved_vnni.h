// The VNNI integer policy of the interleaved tiles (simd/interleaved_kernels.h), over any
// vector width V that has dpbusd and dpwssd: AVX-512 VNNI at 512 bits, AVX-VNNI (and
// AVX-512 VL VNNI) at 256. Include only inside a target region, in an anonymous namespace.
#pragma once

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
