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

#include "kernels/simd/interleaved_v512.h"

#include "kernels/simd/interleaved_vnni.h"

#include "kernels/simd/interleaved_kernels.h"

#include "kernels/simd/interleaved_v256.h"

#include "kernels/simd/interleaved_tiles256.h"

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

template <class W>
void tile_float(const interleaved::TileArgs& a) {
  run_tile<V512, FloatTile<V512, W, 1>, 1, 8>(a);
}

// The AVX-VNNI tiles' logic with the EVEX forms (simd/interleaved_tiles256.h).
struct V256Evex : V256 {
  static I dpbusd(I acc, I u, I s) { return _mm256_dpbusd_epi32(acc, u, s); }
  static I dpwssd(I acc, I a, I b) { return _mm256_dpwssd_epi32(acc, a, b); }
};

}  // namespace

InterleavedEntry avx512vl_vnni256_interleaved() {
  return Tiles256<V256Evex, Vnni<V256Evex>>::entry();
}

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
          tile_iq4_xs,
          tile_float<F16Pairs<V512>>,
          tile_float<BF16Pairs<V512>>};
}

}  // namespace hearth::kernels::simd

#pragma GCC pop_options
#pragma GCC diagnostic pop
