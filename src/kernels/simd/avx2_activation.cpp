// AVX2 activations (kernels/activation.h).
#include <immintrin.h>

#include <cstdint>
#include <cstring>

#include "kernels/activation.h"

#pragma GCC push_options
#pragma GCC target("avx2,fma,f16c")

namespace hearth::kernels::simd {
namespace {

// e^x for 8 lanes: x = k ln2 + r with |r| <= ln2/2 (ln2 split in two parts so that r is
// exact), e^r by its degree-6 Taylor polynomial (relative error ~1e-7), and 2^k put into
// the exponent bits. Inputs are clamped to [-87, 88], where 2^k stays a normal float; the
// callers only form 1 + e^x, for which the clamp changes nothing visible.
__m256 exp_lanes(__m256 x) {
  x = _mm256_min_ps(_mm256_max_ps(x, _mm256_set1_ps(-87.0f)), _mm256_set1_ps(88.0f));
  const __m256 k = _mm256_round_ps(_mm256_mul_ps(x, _mm256_set1_ps(1.44269504088896341f)),
                                   _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
  __m256 r = _mm256_fnmadd_ps(k, _mm256_set1_ps(0.693145751953125f), x);
  r = _mm256_fnmadd_ps(k, _mm256_set1_ps(1.428606765330187045e-06f), r);
  __m256 p = _mm256_set1_ps(1.0f / 720.0f);
  p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(1.0f / 120.0f));
  p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(1.0f / 24.0f));
  p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(1.0f / 6.0f));
  p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(0.5f));
  p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(1.0f));
  p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(1.0f));
  const __m256i bits =
      _mm256_slli_epi32(_mm256_add_epi32(_mm256_cvtps_epi32(k), _mm256_set1_epi32(127)), 23);
  return _mm256_mul_ps(p, _mm256_castsi256_ps(bits));
}

__m256 swiglu_lanes(__m256 g, __m256 u) {
  const __m256 e = exp_lanes(_mm256_sub_ps(_mm256_setzero_ps(), g));
  const __m256 silu = _mm256_div_ps(g, _mm256_add_ps(_mm256_set1_ps(1.0f), e));
  return _mm256_mul_ps(silu, u);
}

}  // namespace

void swiglu_avx2(const float* gate, const float* up, float* out, int64_t n) {
  int64_t i = 0;
  for (; i + 8 <= n; i += 8) {
    _mm256_storeu_ps(out + i, swiglu_lanes(_mm256_loadu_ps(gate + i), _mm256_loadu_ps(up + i)));
  }
  if (i == n) return;
  // The last partial vector goes through the same lanes, padded with zeros.
  float g[8] = {0}, u[8] = {0}, o[8];
  const size_t rest = static_cast<size_t>(n - i) * sizeof(float);
  std::memcpy(g, gate + i, rest);
  std::memcpy(u, up + i, rest);
  _mm256_storeu_ps(o, swiglu_lanes(_mm256_loadu_ps(g), _mm256_loadu_ps(u)));
  std::memcpy(out + i, o, rest);
}

}  // namespace hearth::kernels::simd

#pragma GCC pop_options
