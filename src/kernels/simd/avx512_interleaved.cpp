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

// The 32-element blocks: one token (decode) splits each block's vpdpbusd chain over 4
// accumulators; several tokens already give as many independent chains. Both give the same
// bits.
template <template <class, class, int, int> class K>
void block32(const interleaved::TileArgs& a) {
  if (a.n_tokens == 1) {
    run_tile<V512, K<V512, P, 1, 4>, 1, 1>(a);
  } else {
    run_tile<V512, K<V512, P, 1, 1>, 1, 8>(a);
  }
}

template <template <class, class, int> class K>
void superblock(const interleaved::TileArgs& a) {
  run_tile<V512, K<V512, P, 1>, 1, 6>(a);
}

template <class W>
void float_pairs(const interleaved::TileArgs& a) {
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
  return {block32<Q4_0Tile>,      block32<Q8_0Tile>,           superblock<Q4_KTile>,
          superblock<Q6_KTile>,   block32<Q4_1Tile>,           block32<Q5_0Tile>,
          block32<Q5_1Tile>,      block32<IQ4_NLTile>,         superblock<Q5_KTile>,
          superblock<IQ4_XSTile>, float_pairs<F16Pairs<V512>>, float_pairs<BF16Pairs<V512>>};
}

}  // namespace hearth::kernels::simd

#pragma GCC pop_options
#pragma GCC diagnostic pop
