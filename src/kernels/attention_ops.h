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

// Keys per tile of the tiled attention (attend_tile).
inline constexpr int kAttentionTileKeys = 16;

// One tile of up to kAttentionTileKeys consecutive key positions for n_q queries: the
// online soft-max of flash attention in f32, as the reference's tiled CPU path computes
// prompts. Per query, with n = n_valid[i] (the tile's first n keys are visible to it):
//   s[k]  = scale * (sum over d in order of fma(q[d], k_t[d][k], .))      k < n
//   mx    = max s[k]; if mx > m: ms = e(m - mx); acc *= ms; sum *= ms; m = mx
//   p[k]  = e(s[k] - m); sum += p[k]; acc = fma(p[k], v[k], acc)          k in order
// with e = attention_tile_exp (p = 0 while m is still -inf).
// A query's result depends only on its own keys and on where tiles start, never on the
// other queries of the call.
struct AttentionTile {
  const float* q = nullptr;  // [n_q][d_k]
  int n_q = 0;
  const int* n_valid = nullptr;  // [n_q] visible keys, 0..kAttentionTileKeys
  // [n_q] or null: of those, the first n_skip[i] are hidden too (a sliding window's start):
  // the query then runs the steps above on keys [n_skip, n_valid) as if the tile began there.
  const int* n_skip = nullptr;
  const float* k_t = nullptr;  // [d_k][kAttentionTileKeys] the keys, transposed
  const float* v = nullptr;    // [kAttentionTileKeys][d_v]
  int d_k = 0;
  int d_v = 0;
  float scale = 1.0f;
  float* m = nullptr;    // [n_q] running maxima (-inf before the first key)
  float* sum = nullptr;  // [n_q] running sums
  float* acc = nullptr;  // [n_q][d_v] accumulators
};

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
  // See AttentionTile.
  void (*attend_tile)(const AttentionTile& t) = nullptr;
  // dst[i] = f32(src[i]) for n f16 values at any alignment (exact; a NaN stays a NaN).
  void (*widen_f16)(const uint8_t* src, float* dst, int n) = nullptr;
};

// The operations of one level (levels above detected_cpu_level() must not be called).
const AttentionOps& attention_ops(CpuLevel level);

// The operations of active_cpu_level().
void f16_scale(f16_bits* acc, float m, int n);
void f16_fma_row(f16_bits* acc, const f16_bits* v, float w, int n);
void f32_scale(float* acc, float m, int n);
void f32_fma_row(float* acc, const float* v, float w, int n);
void f16_accumulate(const F16Accumulate& a);
void attend_tile(const AttentionTile& t);
void widen_f16(const uint8_t* src, float* dst, int n);

// e^x as attend_tile computes it (not the C library's exp): range reduction by ln 2 and a
// degree-5 polynomial in explicit FMAs (Cephes' expf coefficients), so the scalar and SIMD
// versions give the same bits, within about 2 ulp of e^x; 0 for x <= -86, NaN for NaN.
float attention_tile_exp(float x);

// The soft-max steps of attend_tile for one query, shared by every level. rescale: the
// maximum of s[0..n) against the running m (updating m and sum); returns the factor the
// accumulator must first be multiplied by (exactly 1 when the maximum did not grow).
// add_weights: sum += p[k] for k < n in order.
float attention_tile_rescale(const float* s, int n, float& m, float& sum);
void attention_tile_add_weights(const float* p, int n, float& sum);

namespace simd {
// Defined in simd/avx2_attention.cpp.
AttentionOps avx2_attention_ops();
}  // namespace simd

}  // namespace hearth::kernels
