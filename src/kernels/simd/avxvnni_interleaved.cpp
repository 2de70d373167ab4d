// The AVX-VNNI tiles of the interleaved layouts: 256-bit registers and the VEX forms of
// vpdpbusd / vpdpwssd, for CPUs with AVX-VNNI but no AVX-512 (simd/interleaved_tiles256.h).
#include <immintrin.h>

#include <cstdint>
#include <cstring>
#include <type_traits>

#include "kernels/block_formats.h"
#include "kernels/interleaved_format.h"

#pragma GCC push_options
#pragma GCC target("avx2,fma,f16c,avxvnni")

namespace hearth::kernels::simd {
namespace {

#include "kernels/simd/interleaved_v256.h"

#include "kernels/simd/interleaved_vnni.h"

#include "kernels/simd/interleaved_kernels.h"

#include "kernels/simd/interleaved_tiles256.h"

struct V256AvxVnni : V256 {
  static I dpbusd(I acc, I u, I s) { return _mm256_dpbusd_avx_epi32(acc, u, s); }
  static I dpwssd(I acc, I a, I b) { return _mm256_dpwssd_avx_epi32(acc, a, b); }
};

}  // namespace

InterleavedEntry avxvnni_interleaved() {
  return Tiles256<V256AvxVnni, Vnni<V256AvxVnni>>::entry();
}

}  // namespace hearth::kernels::simd

#pragma GCC pop_options
