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

// Scores of up to 4 queries x the 16 keys of a tile: lanes are keys, and each lane's sum runs
// over d in order by single-rounding FMAs, as the scalar tile's.
template <int Q>
void tile_scores(const AttentionTile& t, int i0, float (*s)[kAttentionTileKeys]) {
  constexpr int kT = kAttentionTileKeys;
  __m256 a[Q][2];
  for (int i = 0; i < Q; ++i) a[i][0] = a[i][1] = _mm256_setzero_ps();
  const float* q = t.q + static_cast<size_t>(i0) * static_cast<size_t>(t.d_k);
  for (int d = 0; d < t.d_k; ++d) {
    const __m256 k0 = _mm256_loadu_ps(t.k_t + d * kT);
    const __m256 k1 = _mm256_loadu_ps(t.k_t + d * kT + 8);
    for (int i = 0; i < Q; ++i) {
      const __m256 qd = _mm256_broadcast_ss(q + i * t.d_k + d);
      a[i][0] = _mm256_fmadd_ps(qd, k0, a[i][0]);
      a[i][1] = _mm256_fmadd_ps(qd, k1, a[i][1]);
    }
  }
  const __m256 scale = _mm256_set1_ps(t.scale);
  for (int i = 0; i < Q; ++i) {
    _mm256_storeu_ps(s[i], _mm256_mul_ps(a[i][0], scale));
    _mm256_storeu_ps(s[i] + 8, _mm256_mul_ps(a[i][1], scale));
  }
}

// attention_tile_exp on 8 lanes: the same operations in the same order.
__m256 tile_exp8(__m256 x) {
  const __m256 nan = _mm256_cmp_ps(x, x, _CMP_UNORD_Q);
  const __m256 low = _mm256_cmp_ps(x, _mm256_set1_ps(-86.0f), _CMP_LE_OQ);
  const __m256 in = x;
  x = _mm256_min_ps(x, _mm256_set1_ps(88.0f));
  const __m256 n = _mm256_round_ps(_mm256_mul_ps(x, _mm256_set1_ps(1.44269504088896341f)),
                                   _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
  __m256 r = _mm256_fmadd_ps(n, _mm256_set1_ps(-0.693359375f), x);
  r = _mm256_fmadd_ps(n, _mm256_set1_ps(2.12194440e-4f), r);
  __m256 p = _mm256_set1_ps(1.9875691500e-4f);
  p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(1.3981999507e-3f));
  p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(8.3334519073e-3f));
  p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(4.1665795894e-2f));
  p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(1.6666665459e-1f));
  p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(5.0000001201e-1f));
  const __m256 y = _mm256_add_ps(_mm256_fmadd_ps(p, _mm256_mul_ps(r, r), r), _mm256_set1_ps(1.0f));
  const __m256i e = _mm256_slli_epi32(_mm256_cvtps_epi32(n), 23);
  __m256 out = _mm256_castsi256_ps(_mm256_add_epi32(_mm256_castps_si256(y), e));
  out = _mm256_andnot_ps(low, out);
  return _mm256_blendv_ps(out, in, nan);
}

// acc = fma(p[k], v[k], acc) for k < n in order: C registers of 8 columns at a time, so that
// C chains of FMAs run side by side (each element's chain is the same whatever C is).
template <int C>
void accumulate_columns_f32(float* acc, const float* v, const float* p, int n, int d_v, int c) {
  __m256 a[C];
  for (int i = 0; i < C; ++i) a[i] = _mm256_loadu_ps(acc + c + 8 * i);
  for (int k = 0; k < n; ++k) {
    const __m256 w = _mm256_set1_ps(p[k]);
    for (int i = 0; i < C; ++i)
      a[i] = _mm256_fmadd_ps(w, _mm256_loadu_ps(v + k * d_v + c + 8 * i), a[i]);
  }
  for (int i = 0; i < C; ++i) _mm256_storeu_ps(acc + c + 8 * i, a[i]);
}

void tile_accumulate(float* acc, const float* v, const float* p, int n, int d_v) {
  int c = 0;
  for (; c + 64 <= d_v; c += 64) accumulate_columns_f32<8>(acc, v, p, n, d_v, c);
  for (; c + 8 <= d_v; c += 8) accumulate_columns_f32<1>(acc, v, p, n, d_v, c);
  for (; c < d_v; ++c) {
    for (int k = 0; k < n; ++k) {
      acc[c] = _mm_cvtss_f32(
          _mm_fmadd_ss(_mm_set_ss(p[k]), _mm_set_ss(v[k * d_v + c]), _mm_set_ss(acc[c])));
    }
  }
}

void attend_tile_avx2(const AttentionTile& t) {
  float s[4][kAttentionTileKeys];
  for (int i0 = 0; i0 < t.n_q; i0 += 4) {
    const int nq = t.n_q - i0 < 4 ? t.n_q - i0 : 4;
    switch (nq) {
      case 4:
        tile_scores<4>(t, i0, s);
        break;
      case 3:
        tile_scores<3>(t, i0, s);
        break;
      case 2:
        tile_scores<2>(t, i0, s);
        break;
      default:
        tile_scores<1>(t, i0, s);
        break;
    }
    for (int j = 0; j < nq; ++j) {
      const int i = i0 + j;
      // Keys [skip, n_valid) are the query's: the steps run on them as if the tile began at
      // skip (the exponentials of the others are computed and left unused).
      const int skip = t.n_skip != nullptr ? t.n_skip[i] : 0;
      const int n = t.n_valid[i] - skip;
      if (n <= 0) continue;
      float* acc = t.acc + static_cast<size_t>(i) * static_cast<size_t>(t.d_v);
      const float ms = attention_tile_rescale(s[j] + skip, n, t.m[i], t.sum[i]);
      if (ms != 1.0f) f32_scale_avx2(acc, ms, t.d_v);
      const __m256 m = _mm256_set1_ps(t.m[i]);
      const bool none = t.m[i] == -__builtin_inff();
      for (int h = 0; h < kAttentionTileKeys; h += 8) {
        const __m256 p = tile_exp8(_mm256_sub_ps(_mm256_loadu_ps(s[j] + h), m));
        _mm256_storeu_ps(s[j] + h, none ? _mm256_setzero_ps() : p);
      }
      attention_tile_add_weights(s[j] + skip, n, t.sum[i]);
      tile_accumulate(acc, t.v + static_cast<size_t>(skip) * static_cast<size_t>(t.d_v),
                      s[j] + skip, n, t.d_v);
    }
  }
}

void widen_f16_avx2(const uint8_t* src, float* dst, int n) {
  int i = 0;
  for (; i + 8 <= n; i += 8)
    _mm256_storeu_ps(dst + i, widen8(reinterpret_cast<const uint16_t*>(src) + i));
  for (; i < n; ++i) {
    uint16_t h = 0;
    std::memcpy(&h, src + 2 * i, 2);
    dst[i] = _cvtsh_ss(h);
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
  ops.attend_tile = attend_tile_avx2;
  ops.widen_f16 = widen_f16_avx2;
  return ops;
}

}  // namespace hearth::kernels::simd
