// The element-wise inner operations of the engine's attention (engine/forward.cpp): the
// running V accumulator of an online soft-max, rescaled when the maximum score grows and
// given one weighted V row per position.
//
// Arithmetic (the reference's CPU flash attention): the f16 accumulator is widened to f32,
// multiplied (scale) or fused-multiply-added (fma_row, one rounding) in f32, and rounded
// back to f16 to nearest even; the f32 accumulator uses a single-rounding fma. Every level
// gives the same bits as the scalar one (a NaN's sign and payload are not pinned: an f16
// NaN is always the canonical quiet NaN 0x7E00 with some sign).
#pragma once

#include <cstdint>

#include "base/half.h"
#include "kernels/cpu_level.h"

namespace hearth::kernels {

// The f16 accumulators of several heads advanced over several V rows at once (the same
// per-element sequence as f16_scale and f16_fma_row called position by position):
//   for j < n_rows, for h < n_heads:
//     if rescale[j][h]: acc[h][i] = f16(f32(acc[h][i]) * factor[j][h])
//     acc[h][i] = f16(fma(f32(v[j][i]), weight[j][h], f32(acc[h][i])))
struct F16Accumulate {
  f16_bits* acc = nullptr;  // [n_heads][dim]
  int n_heads = 0;
  int dim = 0;
  const uint8_t* const* v = nullptr;  // [n_rows] V rows of dim f16 values (any alignment)
  int n_rows = 0;
  const uint8_t* rescale = nullptr;  // [n_rows][n_heads] 0 or 1
  const float* factor = nullptr;     // [n_rows][n_heads]
  const float* weight = nullptr;     // [n_rows][n_heads]
};

struct AttentionOps {
  // acc[i] = f16(f32(acc[i]) * m)
  void (*f16_scale)(f16_bits* acc, float m, int n) = nullptr;
  // acc[i] = f16(fma(f32(v[i]), w, f32(acc[i])))
  void (*f16_fma_row)(f16_bits* acc, const f16_bits* v, float w, int n) = nullptr;
  // acc[i] = acc[i] * m
  void (*f32_scale)(float* acc, float m, int n) = nullptr;
  // acc[i] = fma(v[i], w, acc[i])
  void (*f32_fma_row)(float* acc, const float* v, float w, int n) = nullptr;
  // See F16Accumulate.
  void (*f16_accumulate)(const F16Accumulate& a) = nullptr;
};

// The operations of one level (levels above detected_cpu_level() must not be called).
const AttentionOps& attention_ops(CpuLevel level);

// The operations of active_cpu_level().
void f16_scale(f16_bits* acc, float m, int n);
void f16_fma_row(f16_bits* acc, const f16_bits* v, float w, int n);
void f32_scale(float* acc, float m, int n);
void f32_fma_row(float* acc, const float* v, float w, int n);
void f16_accumulate(const F16Accumulate& a);

namespace simd {
// Defined in simd/avx2_attention.cpp.
AttentionOps avx2_attention_ops();
}  // namespace simd

}  // namespace hearth::kernels
