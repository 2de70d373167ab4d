// The tiles of the interleaved layouts (interleaved_format.h), written once over a vector
// width and an integer policy, and instantiated per level:
//   V  the vector width: kLanes int32/f32 lanes, i.e. rows of a group per register (8 for
//      256-bit, 16 for 512-bit), with plain loads, broadcasts and f32 arithmetic;
//   P  how 4 u8 x s8 products reach an int32 lane: vpmaddubsw + vpmaddwd (AVX2) or
//      vpdpbusd (VNNI), and the matching ways to apply a sub-block scale.
// Each register holds one row per lane, so an output is one lane of one accumulator: the
// integer block sums are exact whatever the instructions, and the f32 steps (one mul, one
// FMA per block) are those of the scalar tiles (interleaved_ref.cpp), bit for bit.
//
// Include only inside a target region, after V and P are defined, in an anonymous namespace.
// Requires: kernels/interleaved_format.h, kernels/block_formats.h and <type_traits>.
#pragma once

// The activation rows of a pass's T tokens: codes (from `code_offset` into each row), the
// blocks' scales and code sums.
template <int T>
struct PassTokens {
  const uint8_t* x[T];
  const float* xd[T];
  const int32_t* xs[T];
  const float* xm[T];
  PassTokens(const interleaved::TileArgs& a, int t0, int code_offset, int sums_per_block) {
    for (int t = 0; t < T; ++t) {
      x[t] = a.x + static_cast<size_t>(t0 + t) * a.x_stride + code_offset;
      xd[t] = a.xd + (t0 + t) * a.n_blocks;
      xs[t] = a.xs + (t0 + t) * a.n_blocks * sums_per_block;
      xm[t] = a.xm + (t0 + t) * a.n_blocks;
    }
  }
};

template <class V, int RV, int T>
void zero_all(typename V::F (&acc)[RV][T]) {
  for (auto& row : acc)
    for (auto& v : row) v = V::fzero();
}

template <class V, int RV, int T>
void zero_all(typename V::I (&acc)[RV][T]) {
  for (auto& row : acc)
    for (auto& v : row) v = V::zero();
}

// The block's one FMA per output: acc += (d_w * d_x) * float(sum - bias * code sum), where
// sum is the pass accumulator's int32 lanes (P::sum_u4 of it for 4-bit codes).
template <class P, bool kU4, class I>
I pass_sum(I v) {
  if constexpr (kU4) {
    return P::sum_u4(v);
  } else {
    return v;
  }
}

template <class V, class P, bool kU4, int RV, int T>
void add_block(typename V::F (&acc)[RV][T], const typename V::I (&ia)[RV][T], const uint8_t* scales,
               int v0, const PassTokens<T>& tk, int64_t b, int bias) {
  typename V::F dw[RV];
  for (int rv = 0; rv < RV; ++rv) dw[rv] = V::f16_to_f32(scales + (v0 + rv) * V::kLanes * 2);
  for (int t = 0; t < T; ++t) {
    const typename V::F da = V::bcastf(tk.xd[t][b]);
    const typename V::I corr = V::set1(bias * tk.xs[t][b]);
    for (int rv = 0; rv < RV; ++rv) {
      const typename V::I lanes = pass_sum<P, kU4>(ia[rv][t]);
      const typename V::I isum = bias != 0 ? V::sub32(lanes, corr) : lanes;
      acc[rv][t] = V::fma(V::mul(dw[rv], da), V::cvt(isum), acc[rv][t]);
    }
  }
}

// ia[0] += ia[1] + ... : the partial accumulators of a block, added exactly (16-bit pairs for
// the 4-bit codes of the vpmaddubsw policy, whose block total stays below saturation; int32
// lanes otherwise).
template <class P, bool kInt32 = false, class I, int NA, int RV, int T>
void fold_parts(I (&ia)[NA][RV][T]) {
  for (int k = 1; k < NA; ++k)
    for (int rv = 0; rv < RV; ++rv)
      for (int t = 0; t < T; ++t)
        ia[0][rv][t] = P::template add_parts<kInt32>(ia[0][rv][t], ia[k][rv][t]);
}

// y of the pass's rows and tokens: each lane is one output, so a register is a plain store.
template <class V, int RV, int T>
void store_pass(const interleaved::TileArgs& a, int v0, int t0, const typename V::F (&acc)[RV][T]) {
  for (int t = 0; t < T; ++t)
    for (int rv = 0; rv < RV; ++rv)
      V::store(a.y + static_cast<size_t>(t0 + t) * a.y_stride +
                   static_cast<size_t>((v0 + rv) * V::kLanes),
               acc[rv][t]);
}

// A pass computes RV registers of rows (RV * kLanes rows from register v0 of the group) for
// T tokens from t0, over all blocks.
// NA: independent integer accumulators per output within a block (chunks go round-robin),
// so that one token's vpdpbusd chain is not one long dependency; their sum is the same
// exact integer whatever NA is.
template <class V, class P, int RV, int NA = 1>
struct Q4_0Tile {
  using I = typename V::I;
  using F = typename V::F;
  using L = interleaved::Q4_0Layout;
  static constexpr int kActBytes = 34;  // a Q8_0 activation block

  template <int T>
  static void pass(const interleaved::TileArgs& a, int v0, int t0) {
    constexpr int kL = V::kLanes;
    const PassTokens<T> tk(a, t0, 2, 1);
    F acc[RV][T];
    zero_all<V>(acc);
    const I mask = V::set1_8(0x0F);
    for (int64_t b = 0; b < a.n_blocks; ++b) {
      const uint8_t* blk = a.w + b * L::kBytes;
      I ia[NA][RV][T];
      for (auto& part : ia) zero_all<V>(part);
      for (int c = 0; c < 4; ++c) {
        I lo[RV], hi[RV];
        for (int rv = 0; rv < RV; ++rv) {
          const I q = V::load(blk + L::kCodes + c * interleaved::kChunkBytes + (v0 + rv) * kL * 4);
          lo[rv] = V::and_(q, mask);
          hi[rv] = V::and_(V::srl16_4(q), mask);
        }
        for (int t = 0; t < T; ++t) {
          const uint8_t* xb = tk.x[t] + b * kActBytes;
          const I al = V::bcast(xb + 4 * c);
          const I ah = V::bcast(xb + 16 + 4 * c);
          for (int rv = 0; rv < RV; ++rv) {
            I& part = ia[c % NA][rv][t];
            part = P::acc_u4(P::acc_u4(part, lo[rv], al), hi[rv], ah);
          }
        }
      }
      fold_parts<P>(ia);
      add_block<V, P, true>(acc, ia[0], blk + L::kScales, v0, tk, b, 8);
    }
    store_pass<V>(a, v0, t0, acc);
  }
};

// A pass over super-blocks with Q8_K activations: K::scaled_sums forms each output's exact
// integer sum of the block, K::add_block applies the block's FMAs, register by register.
template <class V, class K, int RV, int T>
void superblock_pass(const interleaved::TileArgs& a, int v0, int t0) {
  const PassTokens<T> tk(a, t0, 4, interleaved::kQ8KSums);
  typename V::F acc[RV][T];
  zero_all<V>(acc);
  for (int64_t b = 0; b < a.n_blocks; ++b) {
    const uint8_t* blk = a.w + b * K::L::kBytes;
    const uint8_t* xb[T];
    for (int t = 0; t < T; ++t) xb[t] = tk.x[t] + b * K::kActBytes;
    typename V::I isum[RV][T];
    zero_all<V>(isum);
    K::template scaled_sums<T>(blk, xb, v0, isum);
    for (int rv = 0; rv < RV; ++rv)
      K::template add_block<T>(blk, xb, tk, b, v0, rv, isum[rv], acc[rv]);
  }
  store_pass<V>(a, v0, t0, acc);
}

// Q4_K, and with kFifthBit Q5_K, whose codes take a fifth bit from the qh chunks (bit 2k for
// the low nibbles of pair k, 2k + 1 for the high ones). 5-bit codes would overflow
// vpmaddubsw's 16-bit pairs over a sub-block, so Q5_K scales each register into int32 lanes
// at once, as Q6_K does; Q4_K's pairs stay 16-bit until the sub-block ends.
template <class V, class P, int RV, bool kFifthBit = false>
struct K4Tile {
  using I = typename V::I;
  using F = typename V::F;
  using L = std::conditional_t<kFifthBit, interleaved::Q5_KLayout, interleaved::Q4_KLayout>;
  static constexpr int kActBytes = 292;  // a Q8_K activation block: f32 d, 256 codes, bsums

  // Chunk c of pair k's codes for one register of rows (`row` its byte offset in a chunk).
  static void codes(const uint8_t* blk, int k, int c, int row, I& lo, I& hi) {
    const I mask = V::set1_8(0x0F);
    const I q = V::load(blk + L::kCodes + (k * 8 + c) * interleaved::kChunkBytes + row);
    lo = V::and_(q, mask);
    hi = V::and_(V::srl16_4(q), mask);
    if constexpr (kFifthBit) {
      const I bit4 = V::set1_8(0x10);
      const I h = V::srl16(V::load(blk + L::kHighBits + c * interleaved::kChunkBytes + row), 2 * k);
      lo = V::or_(lo, V::and_(V::sll16_4(h), bit4));
      hi = V::or_(hi, V::and_(V::sll16_3(h), bit4));
    }
  }

  // One register of codes times the activations into a sub-block accumulator.
  static I accumulate(I acc, I code, I x, I scale) {
    if constexpr (kFifthBit) {
      return P::acc_u6(acc, code, x, scale);
    } else {
      return P::acc_u4(acc, code, x);
    }
  }

  // A finished sub-block accumulator as scale * (codes . x) in int32 lanes.
  static I scaled(I acc, I scale) {
    if constexpr (kFifthBit) {
      return P::sub_u6(acc, scale);
    } else {
      return P::scaled_sum_u4(acc, scale);
    }
  }

  // sum_j sc_j * (codes_j . x_j) of one super-block for RV x T outputs, into isum.
  template <int T>
  static void scaled_sums(const uint8_t* blk, const uint8_t* const* xb, int v0, I (&isum)[RV][T]) {
    constexpr int kL = V::kLanes;
    for (int k = 0; k < 4; ++k) {
      I s_lo[RV], s_hi[RV];
      for (int rv = 0; rv < RV; ++rv) {
        s_lo[rv] = P::scale(V::u8_to_i32(blk + L::kSubScales + (2 * k) * 16 + (v0 + rv) * kL));
        s_hi[rv] = P::scale(V::u8_to_i32(blk + L::kSubScales + (2 * k + 1) * 16 + (v0 + rv) * kL));
      }
      I alo[RV][T], ahi[RV][T];
      zero_all<V>(alo);
      zero_all<V>(ahi);
      for (int c = 0; c < 8; ++c) {
        I lo[RV], hi[RV];
        for (int rv = 0; rv < RV; ++rv) codes(blk, k, c, (v0 + rv) * kL * 4, lo[rv], hi[rv]);
        for (int t = 0; t < T; ++t) {
          const I al = V::bcast(xb[t] + 64 * k + 4 * c);
          const I ah = V::bcast(xb[t] + 64 * k + 32 + 4 * c);
          for (int rv = 0; rv < RV; ++rv) {
            alo[rv][t] = accumulate(alo[rv][t], lo[rv], al, s_lo[rv]);
            ahi[rv][t] = accumulate(ahi[rv][t], hi[rv], ah, s_hi[rv]);
          }
        }
      }
      for (int rv = 0; rv < RV; ++rv) {
        for (int t = 0; t < T; ++t) {
          isum[rv][t] = V::add32(isum[rv][t], scaled(alo[rv][t], s_lo[rv]));
          isum[rv][t] = V::add32(isum[rv][t], scaled(ahi[rv][t], s_hi[rv]));
        }
      }
    }
  }

  // The block's FMAs for one register of rows: d * isum, then the mins' term.
  template <int T>
  static void add_block(const uint8_t* blk, const uint8_t* const* /*xb*/, const PassTokens<T>& tk,
                        int64_t b, int v0, int rv, const I (&isum)[T], F (&acc)[T]) {
    constexpr int kL = V::kLanes;
    const F dw = V::f16_to_f32(blk + L::kScales + (v0 + rv) * kL * 2);
    const F dm = V::f16_to_f32(blk + L::kMinScales + (v0 + rv) * kL * 2);
    I mn[4];
    for (int k = 0; k < 4; ++k) mn[k] = V::u8_to_i16(blk + L::kMins + k * 32 + (v0 + rv) * kL * 2);
    for (int t = 0; t < T; ++t) {
      const int32_t* s = tk.xs[t] + b * interleaved::kQ8KSums;
      I msum = V::zero();
      for (int k = 0; k < 4; ++k) msum = P::madd_acc(msum, mn[k], V::set1(s[k]));
      const F da = V::bcastf(tk.xd[t][b]);
      acc[t] = V::fma(V::mul(dw, da), V::cvt(isum[t]), acc[t]);
      acc[t] = V::fnma(V::mul(dm, da), V::cvt(msum), acc[t]);
    }
  }

  template <int T>
  static void pass(const interleaved::TileArgs& a, int v0, int t0) {
    superblock_pass<V, K4Tile, RV, T>(a, v0, t0);
  }
};

template <class V, class P, int RV>
using Q4_KTile = K4Tile<V, P, RV, false>;
template <class V, class P, int RV>
using Q5_KTile = K4Tile<V, P, RV, true>;

template <class V, class P, int RV>
struct Q6_KTile {
  using I = typename V::I;
  using F = typename V::F;
  using L = interleaved::Q6_KLayout;
  static constexpr int kActBytes = 292;  // a Q8_K activation block: f32 d, 256 codes, bsums

  // The codes of group g (0..3) of one chunk: 4 bits from a nibble of qla or qlb, 2 from qh.
  static I codes(const uint8_t* chunk, int g) {
    const I ql = V::load(chunk + (g % 2) * interleaved::kChunkBytes);
    const I qh = V::load(chunk + 2 * interleaved::kChunkBytes);
    const I lo = V::and_(g < 2 ? ql : V::srl16_4(ql), V::set1_8(0x0F));
    const I hi2 = g == 0 ? V::sll16_4(qh) : g == 1 ? V::sll16_2(qh) : g == 2 ? qh : V::srl16_2(qh);
    return V::or_(lo, V::and_(hi2, V::set1_8(0x30)));
  }

  // sum_j sc_j * (codes_j . x_j) of one super-block, into isum.
  template <int T>
  static void scaled_sums(const uint8_t* blk, const uint8_t* const* xb, int v0, I (&isum)[RV][T]) {
    constexpr int kL = V::kLanes;
    for (int j = 0; j < 16; ++j) {
      const int h = j / 8, g = (j % 8) / 2, c0 = (j % 2) * 4;
      I scale[RV];
      for (int rv = 0; rv < RV; ++rv) {
        const I pair = V::i8_to_i16(blk + L::kSubScales + (j / 2) * 32 + (v0 + rv) * kL * 2);
        scale[rv] =
            j % 2 == 0 ? P::template u6_scale<false>(pair) : P::template u6_scale<true>(pair);
      }
      I a[RV][T];
      zero_all<V>(a);
      for (int c = c0; c < c0 + 4; ++c) {
        I code[RV];
        for (int rv = 0; rv < RV; ++rv)
          code[rv] = codes(blk + L::kCodes + h * L::kHalfBytes + c * 3 * interleaved::kChunkBytes +
                               (v0 + rv) * kL * 4,
                           g);
        for (int t = 0; t < T; ++t) {
          const I ax = V::bcast(xb[t] + 128 * h + 32 * g + 4 * c);
          for (int rv = 0; rv < RV; ++rv) a[rv][t] = P::acc_u6(a[rv][t], code[rv], ax, scale[rv]);
        }
      }
      for (int rv = 0; rv < RV; ++rv)
        for (int t = 0; t < T; ++t)
          isum[rv][t] = V::add32(isum[rv][t], P::sub_u6(a[rv][t], scale[rv]));
    }
  }

  // The block's FMA for one register of rows, the codes' offset taken off isum first:
  // 32 * sum_j sc_j * bsum_j, from the block's 16-element sums.
  template <int T>
  static void add_block(const uint8_t* blk, const uint8_t* const* xb, const PassTokens<T>& tk,
                        int64_t b, int v0, int rv, const I (&isum)[T], F (&acc)[T]) {
    constexpr int kL = V::kLanes;
    const F dw = V::f16_to_f32(blk + L::kScales + (v0 + rv) * kL * 2);
    for (int t = 0; t < T; ++t) {
      I bias = V::zero();
      for (int p = 0; p < 8; ++p)
        bias = P::madd_acc(bias, V::i8_to_i16(blk + L::kSubScales + p * 32 + (v0 + rv) * kL * 2),
                           V::bcast(xb[t] + 256 + 4 * p));
      const I total = V::sub32(isum[t], V::sll32_5(bias));
      const F da = V::bcastf(tk.xd[t][b]);
      acc[t] = V::fma(V::mul(dw, da), V::cvt(total), acc[t]);
    }
  }

  template <int T>
  static void pass(const interleaved::TileArgs& a, int v0, int t0) {
    superblock_pass<V, Q6_KTile, RV, T>(a, v0, t0);
  }
};

// The min term of Q4_1 and Q5_1 blocks: acc = fma(m_w, s, acc), s the Q8_1 activation
// block's sum (the scalar tiles' second FMA).
template <class V, int RV, int T>
void add_min(typename V::F (&acc)[RV][T], const uint8_t* mins, int v0, const PassTokens<T>& tk,
             int64_t b) {
  for (int rv = 0; rv < RV; ++rv) {
    const typename V::F mw = V::f16_to_f32(mins + (v0 + rv) * V::kLanes * 2);
    for (int t = 0; t < T; ++t) {
      acc[rv][t] = V::fma(mw, V::bcastf(tk.xm[t][b]), acc[rv][t]);
    }
  }
}

// Q4_1, Q5_0 and Q5_1: unsigned 4- or 5-bit codes of 32-element blocks against Q8_1 (with a
// min) or Q8_0 activations, summed in int32 lanes; the code offset (kBias * code sum) comes off per
// block, and Q4_1/Q5_1 add their min FMA. The fifth bits of chunk c sit in byte c of each
// row's 4 qh bytes: a byte shuffle spreads it over the lane, a bit test per byte picks bit
// e (low codes) or 4 + e (high codes) for element e.
template <class V, class P, class L, int kBias, bool kFifthBit, bool kMin, int RV, int NA = 1>
struct UnsignedTile {
  using I = typename V::I;
  using F = typename V::F;
  static constexpr int kActBytes = kMin ? 36 : 34;  // a Q8_1 or Q8_0 activation block

  static void codes(const uint8_t* blk, int c, int row, const I& high, I& lo, I& hi) {
    const I q = V::load(blk + L::kCodes + c * interleaved::kChunkBytes + row * 4);
    lo = V::and_(q, V::set1_8(0x0F));
    hi = V::and_(V::srl16_4(q), V::set1_8(0x0F));
    if constexpr (kFifthBit) {
      const I bits = V::shuffle8(high, V::lane_byte(c));
      lo = V::or_(lo, V::bit4_where(bits, V::set1(0x08040201)));
      hi = V::or_(hi, V::bit4_where(bits, V::set1(static_cast<int32_t>(0x80402010u))));
    }
  }

  template <int T>
  static void pass(const interleaved::TileArgs& a, int v0, int t0) {
    constexpr int kL = V::kLanes;
    const PassTokens<T> tk(a, t0, kActBytes - 32, 1);
    F acc[RV][T];
    zero_all<V>(acc);
    for (int64_t b = 0; b < a.n_blocks; ++b) {
      const uint8_t* blk = a.w + b * L::kBytes;
      I high[RV];
      for (int rv = 0; rv < RV; ++rv) {
        if constexpr (kFifthBit) {
          high[rv] = V::load(blk + L::kHighBits + (v0 + rv) * kL * 4);
        } else {
          high[rv] = V::zero();
        }
      }
      I ia[NA][RV][T];
      for (auto& part : ia) zero_all<V>(part);
      for (int c = 0; c < 4; ++c) {
        I lo[RV], hi[RV];
        for (int rv = 0; rv < RV; ++rv) codes(blk, c, (v0 + rv) * kL, high[rv], lo[rv], hi[rv]);
        for (int t = 0; t < T; ++t) {
          const uint8_t* xb = tk.x[t] + b * kActBytes;
          const I al = V::bcast(xb + 4 * c);
          const I ah = V::bcast(xb + 16 + 4 * c);
          for (int rv = 0; rv < RV; ++rv) {
            I& part = ia[c % NA][rv][t];
            part = P::acc_u5x2(part, lo[rv], al, hi[rv], ah);
          }
        }
      }
      fold_parts<P, true>(ia);
      add_block<V, P, false>(acc, ia[0], blk + L::kScales, v0, tk, b, kBias);
      if constexpr (kMin) add_min<V>(acc, blk + L::kMinScales, v0, tk, b);
    }
    store_pass<V>(a, v0, t0, acc);
  }
};

template <class V, class P, int RV, int NA = 1>
using Q4_1Tile = UnsignedTile<V, P, interleaved::Q4_1Layout, 0, false, true, RV, NA>;
template <class V, class P, int RV, int NA = 1>
using Q5_0Tile = UnsignedTile<V, P, interleaved::Q5_0Layout, 16, true, false, RV, NA>;
template <class V, class P, int RV, int NA = 1>
using Q5_1Tile = UnsignedTile<V, P, interleaved::Q5_1Layout, 0, true, true, RV, NA>;

// The IQ4 code book as a byte shuffle table, biased by 128 like Q8_0's stored codes, so
// that P::prep_s8 turns a looked-up register into signed weights as it does Q8_0's.
template <class V>
typename V::I iq4_table() {
  alignas(16) uint8_t biased[16];
  for (int i = 0; i < 16; ++i) biased[i] = static_cast<uint8_t>(kIq4nlValues[i] + 128);
  return V::bcast16(biased);
}

// Where Q8_0 and IQ4_NL blocks get their signed weights: step s (of kSteps) gives kPerStep
// registers of rows (prepared by P::prep_s8 from codes biased by 128), each multiplying the
// activation bytes at x_offset(s, k). Q8_0 loads chunk s; IQ4_NL looks up both nibbles of
// chunk s in the code book.
template <class V, class P>
struct Q8_0Weights {
  static constexpr int kSteps = 8;
  static constexpr int kPerStep = 1;
  using L = interleaved::Q8_0Layout;
  static int x_offset(int s, int /*k*/) { return 4 * s; }
  void load(const uint8_t* blk, int s, int row, typename P::S8 (&w)[kPerStep]) const {
    w[0] = P::prep_s8(V::load(blk + L::kCodes + s * interleaved::kChunkBytes + row));
  }
};

template <class V, class P>
struct IQ4_NLWeights {
  static constexpr int kSteps = 4;
  static constexpr int kPerStep = 2;
  using L = interleaved::IQ4_NLLayout;
  typename V::I table = iq4_table<V>();
  static int x_offset(int s, int k) { return 16 * k + 4 * s; }
  void load(const uint8_t* blk, int s, int row, typename P::S8 (&w)[kPerStep]) const {
    const typename V::I mask = V::set1_8(0x0F);
    const typename V::I q = V::load(blk + L::kCodes + s * interleaved::kChunkBytes + row);
    w[0] = P::prep_s8(V::shuffle8(table, V::and_(q, mask)));
    w[1] = P::prep_s8(V::shuffle8(table, V::and_(V::srl16_4(q), mask)));
  }
};

// Q8_0 and IQ4_NL: signed weights (Weights) of 32-element blocks against Q8_0 activations,
// summed in int32 lanes, then the block FMA (the VNNI policy's weights stay biased by 128,
// so its 128 * code sum comes off first).
template <class V, class P, template <class, class> class Weights, int RV, int NA = 1>
struct SignedTile {
  using I = typename V::I;
  using F = typename V::F;
  using W = Weights<V, P>;
  using L = typename W::L;
  static constexpr int kActBytes = 34;  // a Q8_0 activation block

  template <int T>
  static void pass(const interleaved::TileArgs& a, int v0, int t0) {
    constexpr int kL = V::kLanes;
    const PassTokens<T> tk(a, t0, 2, 1);
    const W weights{};
    F acc[RV][T];
    zero_all<V>(acc);
    for (int64_t b = 0; b < a.n_blocks; ++b) {
      const uint8_t* blk = a.w + b * L::kBytes;
      I ia[NA][RV][T];
      for (auto& part : ia) zero_all<V>(part);
      for (int s = 0; s < W::kSteps; ++s) {
        typename P::S8 w[RV][W::kPerStep];
        for (int rv = 0; rv < RV; ++rv) weights.load(blk, s, (v0 + rv) * kL * 4, w[rv]);
        for (int t = 0; t < T; ++t) {
          for (int k = 0; k < W::kPerStep; ++k) {
            const I ax = V::bcast(tk.x[t] + b * kActBytes + W::x_offset(s, k));
            for (int rv = 0; rv < RV; ++rv)
              ia[s % NA][rv][t] = P::acc_s8(ia[s % NA][rv][t], w[rv][k], ax);
          }
        }
      }
      fold_parts<P, true>(ia);
      add_block<V, P, false>(acc, ia[0], blk + L::kScales, v0, tk, b, P::kS8Bias);
    }
    store_pass<V>(a, v0, t0, acc);
  }
};

template <class V, class P, int RV, int NA = 1>
using Q8_0Tile = SignedTile<V, P, Q8_0Weights, RV, NA>;
template <class V, class P, int RV, int NA = 1>
using IQ4_NLTile = SignedTile<V, P, IQ4_NLWeights, RV, NA>;

// IQ4_XS: per 32-element sub-block, code-book values times the activations, scaled by the
// signed sub-block scale into int32 lanes. The VNNI policy multiplies the biased values, so
// its 128 * sum_j sc_j * s_j comes off per block (s_j the activations' sub-block sums).
template <class V, class P, int RV>
struct IQ4_XSTile {
  using I = typename V::I;
  using F = typename V::F;
  using L = interleaved::IQ4_XSLayout;
  static constexpr int kActBytes = 292;  // a Q8_K activation block

  template <int T>
  static void scaled_sums(const uint8_t* blk, const uint8_t* const* xb, int v0, I (&isum)[RV][T]) {
    constexpr int kL = V::kLanes;
    const I table = iq4_table<V>();
    const I mask = V::set1_8(0x0F);
    for (int j = 0; j < 8; ++j) {
      I scale[RV];
      for (int rv = 0; rv < RV; ++rv) {
        const I pair = V::i8_to_i16(blk + L::kSubScales + (j / 2) * 32 + (v0 + rv) * kL * 2);
        scale[rv] =
            j % 2 == 0 ? P::template u6_scale<false>(pair) : P::template u6_scale<true>(pair);
      }
      I sub[RV][T];
      zero_all<V>(sub);
      for (int c = 0; c < 4; ++c) {
        typename P::S8 lo[RV], hi[RV];
        for (int rv = 0; rv < RV; ++rv) {
          const I q = V::load(blk + L::kCodes + (4 * j + c) * interleaved::kChunkBytes +
                              (v0 + rv) * kL * 4);
          lo[rv] = P::prep_s8(V::shuffle8(table, V::and_(q, mask)));
          hi[rv] = P::prep_s8(V::shuffle8(table, V::and_(V::srl16_4(q), mask)));
        }
        for (int t = 0; t < T; ++t) {
          const I al = V::bcast(xb[t] + 32 * j + 4 * c);
          const I ah = V::bcast(xb[t] + 32 * j + 16 + 4 * c);
          for (int rv = 0; rv < RV; ++rv) {
            sub[rv][t] = P::acc_s8_scaled(sub[rv][t], lo[rv], al, scale[rv]);
            sub[rv][t] = P::acc_s8_scaled(sub[rv][t], hi[rv], ah, scale[rv]);
          }
        }
      }
      for (int rv = 0; rv < RV; ++rv)
        for (int t = 0; t < T; ++t)
          isum[rv][t] = V::add32(isum[rv][t], P::sub_u6(sub[rv][t], scale[rv]));
    }
  }

  template <int T>
  static void add_block(const uint8_t* blk, const uint8_t* const* /*xb*/, const PassTokens<T>& tk,
                        int64_t b, int v0, int rv, const I (&isum)[T], F (&acc)[T]) {
    constexpr int kL = V::kLanes;
    const F dw = V::f16_to_f32(blk + L::kScales + (v0 + rv) * kL * 2);
    for (int t = 0; t < T; ++t) {
      I total = isum[t];
      if constexpr (P::kS8Bias != 0) {
        const int32_t* s = tk.xs[t] + b * interleaved::kQ8KSums;
        I bias = V::zero();
        for (int k = 0; k < 4; ++k)
          bias = P::madd_acc(bias, V::i8_to_i16(blk + L::kSubScales + k * 32 + (v0 + rv) * kL * 2),
                             V::set1(s[k]));
        static_assert(P::kS8Bias == 128, "the shift below multiplies by the bias");
        total = V::sub32(total, V::sll32_7(bias));
      }
      acc[t] = V::fma(V::mul(dw, V::bcastf(tk.xd[t][b])), V::cvt(total), acc[t]);
    }
  }

  template <int T>
  static void pass(const interleaved::TileArgs& a, int v0, int t0) {
    superblock_pass<V, IQ4_XSTile, RV, T>(a, v0, t0);
  }
};

// F16 and BF16 weights: per column pair, in order, acc = fma(w_odd, x_odd, acc) then
// acc = fma(w_even, x_even, acc), x the activations rounded to the weight type. W widens a
// pair's weights for RV registers of rows (W::load) and applies the two FMAs (W::madd), or
// one vdpbf16ps, which rounds exactly so on normal numbers.
template <class V, class W, int RV>
struct FloatTile {
  using F = typename V::F;
  using L = interleaved::F16Layout;

  template <int T>
  static void pass(const interleaved::TileArgs& a, int v0, int t0) {
    constexpr int kL = V::kLanes;
    const size_t row_elements = static_cast<size_t>(a.n_blocks) * L::kElements;
    const float* xf[T];
    const uint8_t* xn[T];
    for (int t = 0; t < T; ++t) {
      xf[t] = a.xf + static_cast<size_t>(t0 + t) * row_elements;
      xn[t] = a.x + static_cast<size_t>(t0 + t) * a.x_stride;
    }
    F acc[RV][T];
    zero_all<V>(acc);
    for (int64_t b = 0; b < a.n_blocks; ++b) {
      const uint8_t* blk = a.w + b * L::kBytes;
      for (int p = 0; p < L::kElements / 2; ++p) {
        typename W::Pair w[RV];
        for (int rv = 0; rv < RV; ++rv) w[rv] = W::load(blk + p * L::kPairBytes, (v0 + rv) * kL);
        const int64_t e = b * L::kElements + 2 * p;
        for (int t = 0; t < T; ++t)
          for (int rv = 0; rv < RV; ++rv)
            acc[rv][t] = W::madd(acc[rv][t], w[rv], xf[t] + e, xn[t] + 2 * e);
      }
    }
    store_pass<V>(a, v0, t0, acc);
  }
};

// A column pair's weights widened to f32, odd and even column.
template <class V>
struct WidePair {
  typename V::F odd;
  typename V::F even;
};

template <class V>
typename V::F fma_pair(typename V::F acc, const WidePair<V>& w, const float* x) {
  return V::fma(w.even, V::bcastf(x[0]), V::fma(w.odd, V::bcastf(x[1]), acc));
}

template <class V>
struct F16Pairs {
  using Pair = WidePair<V>;
  static Pair load(const uint8_t* pair, int row) {
    return {V::f16_to_f32(pair + 2 * row), V::f16_to_f32(pair + 32 + 2 * row)};
  }
  static typename V::F madd(typename V::F acc, const Pair& w, const float* x, const uint8_t*) {
    return fma_pair<V>(acc, w, x);
  }
};

// BF16 widens by bit position: the high half of a lane is the odd column's f32 already.
template <class V>
struct BF16Pairs {
  using Pair = WidePair<V>;
  static Pair load(const uint8_t* pair, int row) {
    const typename V::I raw = V::load(pair + 4 * row);
    return {V::as_float(V::and_(raw, V::set1(static_cast<int32_t>(0xFFFF0000u)))),
            V::as_float(V::sll32_16(raw))};
  }
  static typename V::F madd(typename V::F acc, const Pair& w, const float* x, const uint8_t*) {
    return fma_pair<V>(acc, w, x);
  }
};

// Passes of K::pass<T> for T = n (1 <= n <= N).
template <class K, int N>
void pass_of(int n, const interleaved::TileArgs& a, int v0, int t0) {
  if constexpr (N > 1) {
    if (n < N) {
      pass_of<K, N - 1>(n, a, v0, t0);
      return;
    }
  }
  K::template pass<N>(a, v0, t0);
}

// A whole tile: the group's registers of rows RV at a time, tokens at most TMax at a time.
// The tokens are shared out evenly over the fewest passes (26 tokens by 8: 6, 6, 7, 7), so no
// pass is left with a token or two whose few accumulator chains would wait on FMA latency.
// Each token's arithmetic is the same whatever pass it falls in.
template <class V, class K, int RV, int TMax>
void run_tile(const interleaved::TileArgs& a) {
  constexpr int kVecs = interleaved::kRows / V::kLanes;
  const int n_passes = (a.n_tokens + TMax - 1) / TMax;
  for (int v0 = 0; v0 < kVecs; v0 += RV) {
    int t = 0;
    for (int i = 0; i < n_passes; ++i) {
      const int n = (a.n_tokens - t) / (n_passes - i);  // the later passes take the smaller shares
      if (n == TMax) {
        K::template pass<TMax>(a, v0, t);
      } else {
        pass_of<K, TMax>(n, a, v0, t);
      }
      t += n;
    }
  }
}
