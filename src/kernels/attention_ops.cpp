// The scalar attention operations and the per-level dispatch.
#include "kernels/attention_ops.h"

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

AttentionOps scalar_ops() {
  AttentionOps ops;
  ops.f16_scale = scalar_f16_scale;
  ops.f16_fma_row = scalar_f16_fma_row;
  ops.f32_scale = scalar_f32_scale;
  ops.f32_fma_row = scalar_f32_fma_row;
  ops.f16_accumulate = scalar_f16_accumulate;
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

}  // namespace hearth::kernels
