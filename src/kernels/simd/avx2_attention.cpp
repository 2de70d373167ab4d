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
  return ops;
}

}  // namespace hearth::kernels::simd
