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

// A pass computes RV registers of rows (RV * kLanes rows from register v0 of the group) for
// T tokens from t0, over all blocks.
template <class V, class P, int RV>
struct Q4_0Tile {
  using I = typename V::I;
  using F = typename V::F;
  using L = interleaved::Q4_0Layout;
  static constexpr int kActBytes = 34;  // a Q8_0 activation block

  template <int T>
  static void pass(const interleaved::TileArgs& a, int v0, int t0) {
    constexpr int kL = V::kLanes;
    const uint8_t* x[T];
    const float* xd[T];
    const int32_t* xs[T];
    for (int t = 0; t < T; ++t) {
      x[t] = a.x + static_cast<size_t>(t0 + t) * a.x_stride + 2;
      xd[t] = a.xd + (t0 + t) * a.n_blocks;
      xs[t] = a.xs + (t0 + t) * a.n_blocks;
    }
    F acc[RV][T];
    for (auto& row : acc)
      for (F& v : row) v = V::fzero();
    const I mask = V::set1_8(0x0F);
    for (int64_t b = 0; b < a.n_blocks; ++b) {
      const uint8_t* blk = a.w + b * L::kBytes;
      I ia[RV][T];
      for (auto& row : ia)
        for (I& v : row) v = V::zero();
      for (int c = 0; c < 4; ++c) {
        I lo[RV], hi[RV];
        for (int rv = 0; rv < RV; ++rv) {
          const I q = V::load(blk + L::kCodes + c * interleaved::kChunkBytes + (v0 + rv) * kL * 4);
          lo[rv] = V::and_(q, mask);
          hi[rv] = V::and_(V::srl16_4(q), mask);
        }
        for (int t = 0; t < T; ++t) {
          const uint8_t* xb = x[t] + b * kActBytes;
          const I al = V::bcast(xb + 4 * c);
          const I ah = V::bcast(xb + 16 + 4 * c);
          for (int rv = 0; rv < RV; ++rv)
            ia[rv][t] = P::acc_u4(P::acc_u4(ia[rv][t], lo[rv], al), hi[rv], ah);
        }
      }
      F dw[RV];
      for (int rv = 0; rv < RV; ++rv) dw[rv] = V::f16_to_f32(blk + L::kScales + (v0 + rv) * kL * 2);
      for (int t = 0; t < T; ++t) {
        const F da = V::bcastf(xd[t][b]);
        const I corr = V::set1(8 * xs[t][b]);
        for (int rv = 0; rv < RV; ++rv) {
          const I isum = V::sub32(P::sum_u4(ia[rv][t]), corr);
          acc[rv][t] = V::fma(V::mul(dw[rv], da), V::cvt(isum), acc[rv][t]);
        }
      }
    }
    for (int t = 0; t < T; ++t)
      for (int rv = 0; rv < RV; ++rv)
        V::store(
            a.y + static_cast<size_t>(t0 + t) * a.y_stride + static_cast<size_t>((v0 + rv) * kL),
            acc[rv][t]);
  }
};

template <class V, class P, int RV>
struct Q8_0Tile {
  using I = typename V::I;
  using F = typename V::F;
  using L = interleaved::Q8_0Layout;
  static constexpr int kActBytes = 34;

  template <int T>
  static void pass(const interleaved::TileArgs& a, int v0, int t0) {
    constexpr int kL = V::kLanes;
    const uint8_t* x[T];
    const float* xd[T];
    const int32_t* xs[T];
    for (int t = 0; t < T; ++t) {
      x[t] = a.x + static_cast<size_t>(t0 + t) * a.x_stride + 2;
      xd[t] = a.xd + (t0 + t) * a.n_blocks;
      xs[t] = a.xs + (t0 + t) * a.n_blocks;
    }
    F acc[RV][T];
    for (auto& row : acc)
      for (F& v : row) v = V::fzero();
    for (int64_t b = 0; b < a.n_blocks; ++b) {
      const uint8_t* blk = a.w + b * L::kBytes;
      I ia[RV][T];
      for (auto& row : ia)
        for (I& v : row) v = V::zero();
      for (int c = 0; c < 8; ++c) {
        typename P::S8 w[RV];
        for (int rv = 0; rv < RV; ++rv)
          w[rv] = P::prep_s8(
              V::load(blk + L::kCodes + c * interleaved::kChunkBytes + (v0 + rv) * kL * 4));
        for (int t = 0; t < T; ++t) {
          const I ax = V::bcast(x[t] + b * kActBytes + 4 * c);
          for (int rv = 0; rv < RV; ++rv) ia[rv][t] = P::acc_s8(ia[rv][t], w[rv], ax);
        }
      }
      F dw[RV];
      for (int rv = 0; rv < RV; ++rv) dw[rv] = V::f16_to_f32(blk + L::kScales + (v0 + rv) * kL * 2);
      for (int t = 0; t < T; ++t) {
        const F da = V::bcastf(xd[t][b]);
        const I corr = V::set1(P::kS8Bias * xs[t][b]);
        for (int rv = 0; rv < RV; ++rv) {
          const I isum = P::kS8Bias != 0 ? V::sub32(ia[rv][t], corr) : ia[rv][t];
          acc[rv][t] = V::fma(V::mul(dw[rv], da), V::cvt(isum), acc[rv][t]);
        }
      }
    }
    for (int t = 0; t < T; ++t)
      for (int rv = 0; rv < RV; ++rv)
        V::store(
            a.y + static_cast<size_t>(t0 + t) * a.y_stride + static_cast<size_t>((v0 + rv) * kL),
            acc[rv][t]);
  }
};

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

  template <int T>
  static void pass(const interleaved::TileArgs& a, int v0, int t0) {
    constexpr int kL = V::kLanes;
    const uint8_t* x[T];
    const float* xd[T];
    const int32_t* xs[T];
    for (int t = 0; t < T; ++t) {
      x[t] = a.x + static_cast<size_t>(t0 + t) * a.x_stride + 4;
      xd[t] = a.xd + (t0 + t) * a.n_blocks;
      xs[t] = a.xs + (t0 + t) * a.n_blocks * interleaved::kQ8KSums;
    }
    F acc[RV][T];
    for (auto& row : acc)
      for (F& v : row) v = V::fzero();
    for (int64_t b = 0; b < a.n_blocks; ++b) {
      const uint8_t* blk = a.w + b * L::kBytes;
      const uint8_t* xb[T];
      for (int t = 0; t < T; ++t) xb[t] = x[t] + b * kActBytes;
      I isum[RV][T];
      for (auto& row : isum)
        for (I& v : row) v = V::zero();
      scaled_sums<T>(blk, xb, v0, isum);
      for (int rv = 0; rv < RV; ++rv) {
        const F dw = V::f16_to_f32(blk + L::kScales + (v0 + rv) * kL * 2);
        const F dm = V::f16_to_f32(blk + L::kMinScales + (v0 + rv) * kL * 2);
        I mn[4];
        for (int k = 0; k < 4; ++k)
          mn[k] = V::u8_to_i16(blk + L::kMins + k * 32 + (v0 + rv) * kL * 2);
        for (int t = 0; t < T; ++t) {
          const int32_t* s = xs[t] + b * interleaved::kQ8KSums;
          I msum = V::zero();
          for (int k = 0; k < 4; ++k) msum = P::madd_acc(msum, mn[k], V::set1(s[k]));
          const F da = V::bcastf(xd[t][b]);
          acc[rv][t] = V::fma(V::mul(dw, da), V::cvt(isum[rv][t]), acc[rv][t]);
          acc[rv][t] = V::fnma(V::mul(dm, da), V::cvt(msum), acc[rv][t]);
        }
      }
    }
    for (int t = 0; t < T; ++t)
      for (int rv = 0; rv < RV; ++rv)
        V::store(
            a.y + static_cast<size_t>(t0 + t) * a.y_stride + static_cast<size_t>((v0 + rv) * kL),
            acc[rv][t]);
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
