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
  template <class Decode, class Batched, int TMax>
  static void tile(const TileArgs& a) {
    if (a.n_tokens == 1) {
      run_tile<V, Decode, 2, 1>(a);
    } else {
      run_tile<V, Batched, 1, TMax>(a);
    }
  }
  // The 32-element blocks (tiles with RV and NA), the super-blocks (RV), the float types.
  template <template <class, class, int, int> class K>
  static void block32(const TileArgs& a) {
    tile<K<V, P, 2, 1>, K<V, P, 1, 1>, 4>(a);
  }
  template <template <class, class, int> class K>
  static void superblock(const TileArgs& a) {
    tile<K<V, P, 2>, K<V, P, 1>, 2>(a);
  }
  template <class W>
  static void float_pairs(const TileArgs& a) {
    tile<FloatTile<V, W, 2>, FloatTile<V, W, 1>, 6>(a);
  }

  static InterleavedEntry entry() {
    return {block32<Q4_0Tile>,      block32<Q8_0Tile>,        superblock<Q4_KTile>,
            superblock<Q6_KTile>,   block32<Q4_1Tile>,        block32<Q5_0Tile>,
            block32<Q5_1Tile>,      block32<IQ4_NLTile>,      superblock<Q5_KTile>,
            superblock<IQ4_XSTile>, float_pairs<F16Pairs<V>>, float_pairs<BF16Pairs<V>>};
  }
};
