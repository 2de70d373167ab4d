// AVX2 versions of the attention operations (kernels/attention_ops.h), bit-identical to the
// scalar ones: the same f32 multiply or single-rounding fma per element, f16 widened and
// rounded by F16C (round to nearest even) with NaNs made the canonical quiet NaN as
// f32_to_f16 does. The elements past the last whole vector go through a zero-padded
// 8-lane buffer, so every element takes the same instructions.
#include <immintrin.h>

#include <cstdint>
#include <cstring>

#include "kernels/attention_ops.h"

#pragma GCC push_options
#pragma GCC target("avx2,fma,f16c")

#include "kernels/simd/avx2_util.h"

namespace hearth::kernels::simd {
namespace {

__m256 widen8(const uint16_t* p) {
  return _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p)));
}

void store8(uint16_t* p, __m256 v) {
  _mm_storeu_si128(reinterpret_cast<__m128i*>(p), avx2::f16_round8(v));
}

void f16_scale_avx2(uint16_t* acc, float m, int n) {
  const __m256 vm = _mm256_set1_ps(m);
  int i = 0;
  for (; i + 8 <= n; i += 8) store8(acc + i, _mm256_mul_ps(widen8(acc + i), vm));
  if (i < n) {
    uint16_t a[8] = {0, 0, 0, 0, 0, 0, 0, 0};
    const auto bytes = static_cast<size_t>(n - i) * 2;
    std::memcpy(a, acc + i, bytes);
    store8(a, _mm256_mul_ps(widen8(a), vm));
    std::memcpy(acc + i, a, bytes);
  }
}

void f16_fma_row_avx2(uint16_t* acc, const uint16_t* v, float w, int n) {
  const __m256 vw = _mm256_set1_ps(w);
  int i = 0;
  for (; i + 8 <= n; i += 8) store8(acc + i, _mm256_fmadd_ps(widen8(v + i), vw, widen8(acc + i)));
  if (i < n) {
    uint16_t a[8] = {0, 0, 0, 0, 0, 0, 0, 0};
    uint16_t b[8] = {0, 0, 0, 0, 0, 0, 0, 0};
    const auto bytes = static_cast<size_t>(n - i) * 2;
    std::memcpy(a, acc + i, bytes);
    std::memcpy(b, v + i, bytes);
    store8(a, _mm256_fmadd_ps(widen8(b), vw, widen8(a)));
    std::memcpy(acc + i, a, bytes);
  }
}

void f32_scale_avx2(float* acc, float m, int n) {
  const __m256 vm = _mm256_set1_ps(m);
  int i = 0;
  for (; i + 8 <= n; i += 8) _mm256_storeu_ps(acc + i, _mm256_mul_ps(_mm256_loadu_ps(acc + i), vm));
  for (; i < n; ++i) {
    acc[i] = _mm_cvtss_f32(_mm_mul_ss(_mm_set_ss(acc[i]), _mm256_castps256_ps128(vm)));
  }
}

void f32_fma_row_avx2(float* acc, const float* v, float w, int n) {
  const __m256 vw = _mm256_set1_ps(w);
  int i = 0;
  for (; i + 8 <= n; i += 8) {
    _mm256_storeu_ps(acc + i,
                     _mm256_fmadd_ps(_mm256_loadu_ps(v + i), vw, _mm256_loadu_ps(acc + i)));
  }
  for (; i < n; ++i) {
    const __m128 r = _mm_fmadd_ss(_mm_set_ss(v[i]), _mm256_castps256_ps128(vw), _mm_set_ss(acc[i]));
    acc[i] = _mm_cvtss_f32(r);
  }
}

// Up to kHeads heads' f32 images of 8 accumulator columns stay in registers across the rows:
// each step rounds to f16 and back (the value f16_fma_row would store and reload; a NaN's
// payload is not kept canonical here, which attention_ops.h leaves unpinned).
constexpr int kHeads = 8;

__m256 round_f16(__m256 x) {
  return _mm256_cvtph_ps(_mm256_cvtps_ph(x, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC));
}

template <int H>
void accumulate_columns(const F16Accumulate& a, int h0, int c) {
  __m256 acc[H];
  for (int h = 0; h < H; ++h) acc[h] = widen8(a.acc + static_cast<size_t>(h0 + h) * a.dim + c);
  for (int j = 0; j < a.n_rows; ++j) {
    const __m256 v = widen8(reinterpret_cast<const uint16_t*>(a.v[j] + 2 * c));
    const size_t row =
        static_cast<size_t>(j) * static_cast<size_t>(a.n_heads) + static_cast<size_t>(h0);
    for (int h = 0; h < H; ++h) {
      if (a.rescale[row + h] != 0)
        acc[h] = round_f16(_mm256_mul_ps(acc[h], _mm256_set1_ps(a.factor[row + h])));
      acc[h] = round_f16(_mm256_fmadd_ps(v, _mm256_set1_ps(a.weight[row + h]), acc[h]));
    }
  }
  for (int h = 0; h < H; ++h) store8(a.acc + static_cast<size_t>(h0 + h) * a.dim + c, acc[h]);
}

template <int H>
void accumulate_heads(const F16Accumulate& a, int h0) {
  int c = 0;
  for (; c + 8 <= a.dim; c += 8) accumulate_columns<H>(a, h0, c);
  // The last columns (dim not a multiple of 8) by the row operations.
  for (int j = 0; c < a.dim && j < a.n_rows; ++j) {
    for (int h = h0; h < h0 + H; ++h) {
      const size_t jh =
          static_cast<size_t>(j) * static_cast<size_t>(a.n_heads) + static_cast<size_t>(h);
      uint16_t* acc = a.acc + static_cast<size_t>(h) * a.dim + c;
      if (a.rescale[jh] != 0) f16_scale_avx2(acc, a.factor[jh], a.dim - c);
      f16_fma_row_avx2(acc, reinterpret_cast<const uint16_t*>(a.v[j] + 2 * c), a.weight[jh],
                       a.dim - c);
    }
  }
}

void f16_accumulate_avx2(const F16Accumulate& a) {
  for (int h0 = 0; h0 < a.n_heads; h0 += kHeads) {
    switch (a.n_heads - h0 < kHeads ? a.n_heads - h0 : kHeads) {
      case 8:
        accumulate_heads<8>(a, h0);
        break;
      case 7:
        accumulate_heads<7>(a, h0);
        break;
      case 6:
        accumulate_heads<6>(a, h0);
        break;
      case 5:
        accumulate_heads<5>(a, h0);
        break;
      case 4:
        accumulate_heads<4>(a, h0);
        break;
      case 3:
        accumulate_heads<3>(a, h0);
        break;
      case 2:
        accumulate_heads<2>(a, h0);
        break;
      default:
        accumulate_heads<1>(a, h0);
        break;
    }
  }
}

}  // namespace
}  // namespace hearth::kernels::simd

#pragma GCC pop_options

namespace hearth::kernels::simd {

AttentionOps avx2_attention_ops() {
  AttentionOps ops;
  ops.f16_scale = f16_scale_avx2;
  ops.f16_fma_row = f16_fma_row_avx2;
  ops.f32_scale = f32_scale_avx2;
  ops.f32_fma_row = f32_fma_row_avx2;
  ops.f16_accumulate = f16_accumulate_avx2;
  return ops;
}

}  // namespace hearth::kernels::simd
