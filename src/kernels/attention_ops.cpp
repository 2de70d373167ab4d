// The scalar attention operations and the per-level dispatch.
#include "kernels/attention_ops.h"

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstring>

namespace hearth::kernels {
namespace {

// Rows are read and written through memcpy: a V row may sit at any byte offset of the
// cache.
float load_f16(const f16_bits* p) {
  f16_bits h = 0;
  std::memcpy(&h, p, sizeof h);
  return f16_to_f32(h);
}

void store_f16(f16_bits* p, float f) {
  const f16_bits h = f32_to_f16(f);
  std::memcpy(p, &h, sizeof h);
}

void scalar_f16_scale(f16_bits* acc, float m, int n) {
  for (int i = 0; i < n; ++i) store_f16(acc + i, load_f16(acc + i) * m);
}

void scalar_f16_fma_row(f16_bits* acc, const f16_bits* v, float w, int n) {
  for (int i = 0; i < n; ++i) store_f16(acc + i, std::fma(load_f16(v + i), w, load_f16(acc + i)));
}

void scalar_f32_scale(float* acc, float m, int n) {
  for (int i = 0; i < n; ++i) acc[i] *= m;
}

void scalar_f32_fma_row(float* acc, const float* v, float w, int n) {
  for (int i = 0; i < n; ++i) acc[i] = std::fma(v[i], w, acc[i]);
}

void scalar_f16_accumulate(const F16Accumulate& a) {
  for (int j = 0; j < a.n_rows; ++j) {
    const auto* v = reinterpret_cast<const f16_bits*>(a.v[j]);
    for (int h = 0; h < a.n_heads; ++h) {
      f16_bits* acc = a.acc + static_cast<size_t>(h) * static_cast<size_t>(a.dim);
      const size_t jh =
          static_cast<size_t>(j) * static_cast<size_t>(a.n_heads) + static_cast<size_t>(h);
      if (a.rescale[jh] != 0) scalar_f16_scale(acc, a.factor[jh], a.dim);
      scalar_f16_fma_row(acc, v, a.weight[jh], a.dim);
    }
  }
}

void scalar_attend_tile(const AttentionTile& t) {
  constexpr int kT = kAttentionTileKeys;
  float s[kT];
  for (int i = 0; i < t.n_q; ++i) {
    const int skip = t.n_skip != nullptr ? t.n_skip[i] : 0;
    const int n = t.n_valid[i] - skip;
    if (n <= 0) continue;
    const float* q = t.q + static_cast<size_t>(i) * static_cast<size_t>(t.d_k);
    for (int k = 0; k < n; ++k) {
      float x = 0.0f;
      for (int d = 0; d < t.d_k; ++d) x = std::fma(q[d], t.k_t[d * kT + skip + k], x);
      s[k] = x * t.scale;
    }
    float* acc = t.acc + static_cast<size_t>(i) * static_cast<size_t>(t.d_v);
    const float ms = attention_tile_rescale(s, n, t.m[i], t.sum[i]);
    if (ms != 1.0f) scalar_f32_scale(acc, ms, t.d_v);
    for (int k = 0; k < n; ++k)
      s[k] = t.m[i] == -INFINITY ? 0.0f : attention_tile_exp(s[k] - t.m[i]);
    attention_tile_add_weights(s, n, t.sum[i]);
    for (int k = 0; k < n; ++k) scalar_f32_fma_row(acc, t.v + (skip + k) * t.d_v, s[k], t.d_v);
  }
}

void scalar_widen_f16(const uint8_t* src, float* dst, int n) {
  for (int i = 0; i < n; ++i) dst[i] = load_f16(reinterpret_cast<const f16_bits*>(src) + i);
}

AttentionOps scalar_ops() {
  AttentionOps ops;
  ops.f16_scale = scalar_f16_scale;
  ops.f16_fma_row = scalar_f16_fma_row;
  ops.f32_scale = scalar_f32_scale;
  ops.f32_fma_row = scalar_f32_fma_row;
  ops.f16_accumulate = scalar_f16_accumulate;
  ops.attend_tile = scalar_attend_tile;
  ops.widen_f16 = scalar_widen_f16;
  return ops;
}

const AttentionOps& active_ops() {
  static const AttentionOps& ops = attention_ops(active_cpu_level());
  return ops;
}

}  // namespace

const AttentionOps& attention_ops(CpuLevel level) {
  static const AttentionOps scalar = scalar_ops();
  static const AttentionOps avx2 = simd::avx2_attention_ops();
  // No AVX-512 attention kernels: that level runs the AVX2 ones.
  return level == CpuLevel::kScalar ? scalar : avx2;
}

void f16_scale(f16_bits* acc, float m, int n) {
  active_ops().f16_scale(acc, m, n);
}

void f16_fma_row(f16_bits* acc, const f16_bits* v, float w, int n) {
  active_ops().f16_fma_row(acc, v, w, n);
}

void f32_scale(float* acc, float m, int n) {
  active_ops().f32_scale(acc, m, n);
}

void f32_fma_row(float* acc, const float* v, float w, int n) {
  active_ops().f32_fma_row(acc, v, w, n);
}

void f16_accumulate(const F16Accumulate& a) {
  active_ops().f16_accumulate(a);
}

void attend_tile(const AttentionTile& t) {
  active_ops().attend_tile(t);
}

void widen_f16(const uint8_t* src, float* dst, int n) {
  active_ops().widen_f16(src, dst, n);
}

float attention_tile_exp(float x) {
  if (std::isnan(x)) return x;
  if (x <= -86.0f) return 0.0f;
  x = std::min(x, 88.0f);
  const float n = std::nearbyint(x * 1.44269504088896341f);
  float r = std::fma(n, -0.693359375f, x);
  r = std::fma(n, 2.12194440e-4f, r);
  float p = 1.9875691500e-4f;
  p = std::fma(p, r, 1.3981999507e-3f);
  p = std::fma(p, r, 8.3334519073e-3f);
  p = std::fma(p, r, 4.1665795894e-2f);
  p = std::fma(p, r, 1.6666665459e-1f);
  p = std::fma(p, r, 5.0000001201e-1f);
  const float y = std::fma(p, r * r, r) + 1.0f;
  // y * 2^n by the exponent field: y is in [0.7, 1.5) and n in [-124, 127], so it stays normal.
  return std::bit_cast<float>(std::bit_cast<int32_t>(y) + (static_cast<int32_t>(n) << 23));
}

float attention_tile_rescale(const float* s, int n, float& m, float& sum) {
  float mx = -INFINITY;
  for (int k = 0; k < n; ++k) mx = s[k] > mx ? s[k] : mx;
  if (!(mx > m)) return 1.0f;
  const float ms = attention_tile_exp(m - mx);
  sum *= ms;
  m = mx;
  return ms;
}

void attention_tile_add_weights(const float* p, int n, float& sum) {
  for (int k = 0; k < n; ++k) sum += p[k];
}

}  // namespace hearth::kernels
