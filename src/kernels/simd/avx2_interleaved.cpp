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

#include "kernels/simd/interleaved_tiles256.h"

}  // namespace

InterleavedEntry avx2_interleaved() {
  return Tiles256<V256, Maddubs<V256>>::entry();
}

}  // namespace hearth::kernels::simd

#pragma GCC pop_options
