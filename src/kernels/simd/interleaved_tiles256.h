// The tile set of the 256-bit levels, over an integer policy P: vpmaddubsw + vpmaddwd on
// AVX2 (simd/avx2_interleaved.cpp), vpdpbusd on CPUs with AVX-VNNI but no AVX-512
// (simd/avxvnni_interleaved.cpp; the AVX-512 file builds the same tiles with the EVEX forms,
// so that CPUs without AVX-VNNI test them too). Register blocking assumes the 16 registers
// of VEX code. Include after interleaved_v256.h, the policy's header and
// interleaved_kernels.h.
#pragma once

template <class V, class P>
struct Tiles256 {
  using TileArgs = interleaved::TileArgs;

  // One token reads both halves of a group in one pass; several take one half at a time.
  template <template <class, class, int> class K, int TMax>
  static void tile(const TileArgs& a) {
    if (a.n_tokens == 1) {
      run_tile<V, K<V, P, 2>, 2, 1>(a);
    } else {
      run_tile<V, K<V, P, 1>, 1, TMax>(a);
    }
  }

  template <class L, int kBias, bool kFifthBit, bool kMin>
  static void tile_unsigned(const TileArgs& a) {
    if (a.n_tokens == 1) {
      run_tile<V, UnsignedTile<V, P, L, kBias, kFifthBit, kMin, 2>, 2, 1>(a);
    } else {
      run_tile<V, UnsignedTile<V, P, L, kBias, kFifthBit, kMin, 1>, 1, 4>(a);
    }
  }

  template <class W>
  static void tile_float(const TileArgs& a) {
    if (a.n_tokens == 1) {
      run_tile<V, FloatTile<V, W, 2>, 2, 1>(a);
    } else {
      run_tile<V, FloatTile<V, W, 1>, 1, 6>(a);
    }
  }

  template <class V2, class P2, int RV>
  using Q4_0 = Q4_0Tile<V2, P2, RV>;
  template <class V2, class P2, int RV>
  using Q8_0 = Q8_0Tile<V2, P2, RV>;
  template <class V2, class P2, int RV>
  using IQ4_NL = IQ4_NLTile<V2, P2, RV>;

  static InterleavedEntry entry() {
    using namespace interleaved;
    return {tile<Q4_0, 4>,
            tile<Q8_0, 4>,
            tile<Q4_KTile, 2>,
            tile<Q6_KTile, 2>,
            tile_unsigned<Q4_1Layout, 0, false, true>,
            tile_unsigned<Q5_0Layout, 16, true, false>,
            tile_unsigned<Q5_1Layout, 0, true, true>,
            tile<IQ4_NL, 4>,
            tile<Q5_KTile, 2>,
            tile<IQ4_XSTile, 2>,
            tile_float<F16Pairs<V>>,
            tile_float<BF16Pairs<V>>};
  }
};
