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

struct AttentionOps {
  // acc[i] = f16(f32(acc[i]) * m)
  void (*f16_scale)(f16_bits* acc, float m, int n) = nullptr;
  // acc[i] = f16(fma(f32(v[i]), w, f32(acc[i])))
  void (*f16_fma_row)(f16_bits* acc, const f16_bits* v, float w, int n) = nullptr;
  // acc[i] = acc[i] * m
  void (*f32_scale)(float* acc, float m, int n) = nullptr;
  // acc[i] = fma(v[i], w, acc[i])
  void (*f32_fma_row)(float* acc, const float* v, float w, int n) = nullptr;
};

// The operations of one level (levels above detected_cpu_level() must not be called).
const AttentionOps& attention_ops(CpuLevel level);

// The operations of active_cpu_level().
void f16_scale(f16_bits* acc, float m, int n);
void f16_fma_row(f16_bits* acc, const f16_bits* v, float w, int n);
void f32_scale(float* acc, float m, int n);
void f32_fma_row(float* acc, const float* v, float w, int n);

namespace simd {
// Defined in simd/avx2_attention.cpp.
AttentionOps avx2_attention_ops();
}  // namespace simd

}  // namespace hearth::kernels
