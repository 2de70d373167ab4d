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
// Requires: kernels/interleaved_format.h.
#pragma once

// The activation rows of a pass's T tokens: codes (from `code_offset` into each row), the
// blocks' scales and code sums.
template <int T>
struct PassTokens {
  const uint8_t* x[T];
  const float* xd[T];
  const int32_t* xs[T];
  PassTokens(const interleaved::TileArgs& a, int t0, int code_offset, int sums_per_block) {
    for (int t = 0; t < T; ++t) {
      x[t] = a.x + static_cast<size_t>(t0 + t) * a.x_stride + code_offset;
      xd[t] = a.xd + (t0 + t) * a.n_blocks;
      xs[t] = a.xs + (t0 + t) * a.n_blocks * sums_per_block;
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

template <class V, class P, int RV, int NA = 1>
struct Q8_0Tile {
  using I = typename V::I;
  using F = typename V::F;
  using L = interleaved::Q8_0Layout;
  static constexpr int kActBytes = 34;

  template <int T>
  static void pass(const interleaved::TileArgs& a, int v0, int t0) {
    constexpr int kL = V::kLanes;
    const PassTokens<T> tk(a, t0, 2, 1);
    F acc[RV][T];
    zero_all<V>(acc);
    for (int64_t b = 0; b < a.n_blocks; ++b) {
      const uint8_t* blk = a.w + b * L::kBytes;
      I ia[NA][RV][T];
      for (auto& part : ia) zero_all<V>(part);
      for (int c = 0; c < 8; ++c) {
        typename P::S8 w[RV];
        for (int rv = 0; rv < RV; ++rv)
          w[rv] = P::prep_s8(
              V::load(blk + L::kCodes + c * interleaved::kChunkBytes + (v0 + rv) * kL * 4));
        for (int t = 0; t < T; ++t) {
          const I ax = V::bcast(tk.x[t] + b * kActBytes + 4 * c);
          for (int rv = 0; rv < RV; ++rv)
            ia[c % NA][rv][t] = P::acc_s8(ia[c % NA][rv][t], w[rv], ax);
        }
      }
      fold_parts<P, true>(ia);
      add_block<V, P, false>(acc, ia[0], blk + L::kScales, v0, tk, b, P::kS8Bias);
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

template <class V, class P, int RV>
struct Q4_KTile {
  using I = typename V::I;
  using F = typename V::F;
  using L = interleaved::Q4_KLayout;
  static constexpr int kActBytes = 292;  // a Q8_K activation block: f32 d, 256 codes, bsums

  // sum_j sc_j * (codes_j . x_j) of one super-block for RV x T outputs, into isum.
  template <int T>
  static void scaled_sums(const uint8_t* blk, const uint8_t* const* xb, int v0, I (&isum)[RV][T]) {
    constexpr int kL = V::kLanes;
    const I mask = V::set1_8(0x0F);
    for (int k = 0; k < 4; ++k) {
      I alo[RV][T], ahi[RV][T];
      for (int rv = 0; rv < RV; ++rv)
        for (int t = 0; t < T; ++t) alo[rv][t] = ahi[rv][t] = V::zero();
      for (int c = 0; c < 8; ++c) {
        I lo[RV], hi[RV];
        for (int rv = 0; rv < RV; ++rv) {
          const I q = V::load(blk + L::kCodes + (k * 8 + c) * interleaved::kChunkBytes +
                              (v0 + rv) * kL * 4);
          lo[rv] = V::and_(q, mask);
          hi[rv] = V::and_(V::srl16_4(q), mask);
        }
        for (int t = 0; t < T; ++t) {
          const I al = V::bcast(xb[t] + 64 * k + 4 * c);
          const I ah = V::bcast(xb[t] + 64 * k + 32 + 4 * c);
          for (int rv = 0; rv < RV; ++rv) {
            alo[rv][t] = P::acc_u4(alo[rv][t], lo[rv], al);
            ahi[rv][t] = P::acc_u4(ahi[rv][t], hi[rv], ah);
          }
        }
      }
      for (int rv = 0; rv < RV; ++rv) {
        const I s_lo = P::scale(V::u8_to_i32(blk + L::kSubScales + (2 * k) * 16 + (v0 + rv) * kL));
        const I s_hi =
            P::scale(V::u8_to_i32(blk + L::kSubScales + (2 * k + 1) * 16 + (v0 + rv) * kL));
        for (int t = 0; t < T; ++t) {
          isum[rv][t] = V::add32(isum[rv][t], P::scaled_sum_u4(alo[rv][t], s_lo));
          isum[rv][t] = V::add32(isum[rv][t], P::scaled_sum_u4(ahi[rv][t], s_hi));
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
    superblock_pass<V, Q4_KTile, RV, T>(a, v0, t0);
  }
};

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

// A whole tile: the group's registers of rows RV at a time, tokens TMax at a time.
template <class V, class K, int RV, int TMax>
void run_tile(const interleaved::TileArgs& a) {
  constexpr int kVecs = interleaved::kRows / V::kLanes;
  for (int v0 = 0; v0 < kVecs; v0 += RV) {
    int t = 0;
    for (; t + TMax <= a.n_tokens; t += TMax) K::template pass<TMax>(a, v0, t);
    if (t < a.n_tokens) pass_of<K, TMax>(a.n_tokens - t, a, v0, t);
  }
}
