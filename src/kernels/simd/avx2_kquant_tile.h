// The tile driver shared by the AVX2 K-quant kernels (avx2_kquants.cpp, avx2_kquants2.cpp):
// R rows x T tokens of 256-element super-blocks against Q8_K activations. Include it only
// inside an AVX2 target region, after avx2_util.h.
#pragma once

#include <immintrin.h>

#include <cstddef>
#include <cstdint>

#include "kernels/block_formats.h"
#include "kernels/simd/avx2_util.h"
#include "kernels/simd/simd_table.h"

namespace hearth::kernels::simd::avx2 {

// The largest tile: one weight row by four tokens, so that each unpacked weight block serves
// four tokens (two-row tiles measured no faster: the rows' registers spill). Decoding runs
// the 1x1 tile, which is vec_dot.
inline constexpr int kKTileRows = 1;
inline constexpr int kKTileTokens = 4;

inline constexpr size_t kQ8KSize = sizeof(BlockQ8K);
inline constexpr size_t kQ8KQs = offsetof(BlockQ8K, qs);
inline constexpr size_t kQ8KBsums = offsetof(BlockQ8K, bsums);

// The super-blocks of R rows x T tokens, one row after the other within each block; the
// tokens' scales and bsums are read once per block. kRowBlock(w, x, xs, dy, bsums, acc[T])
// adds one row's block to its T accumulators.
template <auto kRowBlock, size_t kBlockBytes, int R, int T>
void tile_blocks(const uint8_t* w, size_t ws, const uint8_t* x, size_t xs, int64_t n, float* y,
                 size_t ys) {
  __m256 acc[R][T];
  for (int r = 0; r < R; ++r) {
    for (int t = 0; t < T; ++t) acc[r][t] = _mm256_setzero_ps();
  }
  for (int64_t i = 0; i < n / kQKK; ++i) {
    const uint8_t* xb = x + i * kQ8KSize;
    __m256 dy[T];
    __m256i bsums[T];
    for (int t = 0; t < T; ++t) {
      dy[t] = _mm256_set1_ps(load_f32(xb + t * xs));
      bsums[t] = load256(xb + t * xs + kQ8KBsums);
    }
    for (int r = 0; r < R; ++r) kRowBlock(w + r * ws + i * kBlockBytes, xb, xs, dy, bsums, acc[r]);
  }
  store_outputs<R, T>(acc, y, ys);
}

using KKernel = void (*)(const uint8_t* w, size_t ws, const uint8_t* x, size_t xs, int64_t n,
                         float* y, size_t ys);

// The tile and vec_dot entry points of one format K (K<R, T>::run is its kernel).
template <template <int, int> class K>
struct KShapes {
  static constexpr KKernel kTable[kKTileRows][kKTileTokens] = {
      {K<1, 1>::run, K<1, 2>::run, K<1, 3>::run, K<1, 4>::run},
  };
  static void tile(const TileArgs& a) {
    kTable[a.n_rows - 1][a.n_tokens - 1](a.w, a.w_stride, a.x, a.x_stride, a.n, a.y, a.y_stride);
  }
  static float vec_dot(const void* x, const void* y, int64_t n) {
    float out = 0.0f;
    K<1, 1>::run(static_cast<const uint8_t*>(x), 0, static_cast<const uint8_t*>(y), 0, n, &out, 0);
    return out;
  }
};

}  // namespace hearth::kernels::simd::avx2
