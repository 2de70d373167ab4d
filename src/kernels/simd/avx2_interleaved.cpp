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

#include "kernels/simd/interleaved_v256.h"

#include "kernels/simd/interleaved_maddubs.h"

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
