// The BF16 tile of CPUs with AVX-512 BF16: one vdpbf16ps per column pair, 16 rows by 2
// columns, instead of widening the weights and two FMAs. vdpbf16ps adds the odd column's
// product, then the even one's, each rounded to nearest even: the arithmetic of the other
// BF16 tiles (simd/interleaved_kernels.h, FloatTile), bit for bit on normal numbers. It
// treats denormal inputs as zero and flushes denormal results, which the FMA tiles do not.
#include <immintrin.h>

#include <cstdint>
#include <cstring>
#include <type_traits>

#include "kernels/block_formats.h"
#include "kernels/interleaved_format.h"

#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wuninitialized"
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#pragma GCC push_options
#pragma GCC target("avx512f,avx512bw,avx512vl,avx512dq,avx512vnni,avx512bf16,avx2,fma,f16c")

namespace hearth::kernels::simd {
namespace {

#include "kernels/simd/interleaved_v512.h"

#include "kernels/simd/interleaved_vnni.h"

#include "kernels/simd/interleaved_kernels.h"

// The weights stay as stored (row r's columns 2p and 2p + 1 in lane r); the activations are
// the token's BF16 row, a pair broadcast to every lane.
struct Bf16DotPairs {
  using Pair = __m512i;
  static Pair load(const uint8_t* pair, int row) { return V512::load(pair + 4 * row); }
  static __m512 madd(__m512 acc, Pair w, const float* /*x*/, const uint8_t* x_bf16) {
    return _mm512_dpbf16_ps(acc, reinterpret_cast<__m512bh>(w),
                            reinterpret_cast<__m512bh>(V512::bcast(x_bf16)));
  }
};

void tile_bf16(const interleaved::TileArgs& a) {
  run_tile<V512, FloatTile<V512, Bf16DotPairs, 1>, 1, 8>(a);
}

}  // namespace

interleaved::TileFn avx512bf16_tile_bf16() {
  return tile_bf16;
}

}  // namespace hearth::kernels::simd

#pragma GCC pop_options
#pragma GCC diagnostic pop
