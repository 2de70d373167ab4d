// Per-type dispatch: one small table of function pointers per TensorType. The public entry
// points (quant.h, matmul.h) only look a type up here, so a faster implementation of one
// operation for one type (a SIMD dot product, a repacked GEMM) replaces a single pointer in
// active_kernels() without touching callers. reference_kernels() stays the portable scalar
// implementation that every faster path is tested against.
//
// How a product W·x is computed (quantization.md §4.1, the reference engine's arithmetic):
// each token's f32 activation row is converted ONCE by `from_float` of the weight type's
// `vec_dot_type` (F32 → copy, F16/BF16 → rounding, Q8_0/Q8_1/Q8_K → 8-bit blocks), then
// every output is `vec_dot(weight row, converted row)`.
//
// What a faster replacement must preserve:
// - `vec_dot` (SIMD): the same activation format, produced by the reference `from_float`
//   bit for bit; the integer part of each block (the sums of code products, the
//   sub-block scales applied in integers, the bsums min terms) exactly as the reference;
//   the f32 scaling and summation order may differ (lanes, FMA) but must depend only on
//   n, never on the batch, the row's position or the thread count.
// - `matmul` (a tiled or repacked GEMM): the same per-output value for every token as a
//   single-token call would give (batch invariance, matmul.h); tiles may share loads but
//   not reassociate one output's sum differently for different batch sizes.
// - `from_float` is part of the numeric contract with the reference and is replaced only
//   by a bit-identical implementation.
// Any f32 reordering is visible end to end: an output that moves by one ulp can move the
// next layer's 8-bit activation across a rounding boundary, so logits agree with the
// reference engine more closely the closer a kernel's f32 schedule is to its own.
#pragma once

#include <cstdint>

#include "base/tensor_type.h"
#include "base/thread_pool.h"
#include "kernels/cpu_level.h"
#include "kernels/matmul.h"
#include "kernels/simd/simd_table.h"

namespace hearth::kernels {

// Converts n elements (a multiple of the block size) starting on a block boundary.
using DequantizeRowFn = void (*)(const void* src, float* dst, int64_t n);
using QuantizeRowFn = void (*)(const float* src, void* dst, int64_t n);
// One weight row `x` of n elements dotted with one activation row `y` already converted
// to the weight type's vec_dot_type.
using VecDotFn = float (*)(const void* x, const void* y, int64_t n);
// The whole of matmul() for one weight type (see matmul.h for the contract).
using MatmulFn = void (*)(const WeightMatrix& w, const float* x, int64_t n_tokens, float* y,
                          ThreadPool& pool);

struct TypeKernels {
  DequantizeRowFn dequantize_row = nullptr;  // null: type not readable
  QuantizeRowFn quantize_row = nullptr;      // null: no encoder (weights, KV cache rows)
  // As an activation format: the reference's conversion of an f32 activation row
  // (quantization.md §4.2). Set for F32, F16, BF16, Q8_0, Q8_1 and Q8_K only. For Q8_0 it
  // differs from quantize_row (ties to even, 127/amax instead of the encoder's roundf, 1/d).
  QuantizeRowFn from_float = nullptr;
  // As a weight format: the activation format its dot product takes, and the dot product.
  TensorType vec_dot_type = TensorType::kF32;
  VecDotFn vec_dot = nullptr;  // null: no dot product for this weight type
  MatmulFn matmul = nullptr;   // null: no matmul for this weight type
  // A SIMD dot-product tile (simd/simd_table.h) or null; its outputs equal `vec_dot`'s.
  simd::TileFn tile = nullptr;
  int tile_rows = 1;
  int tile_tokens = 1;
};

// The portable scalar implementation of `type` (all-null for unhandled types).
const TypeKernels& reference_kernels(TensorType type);
// The kernels of one instruction-set level (the reference's where the level has none).
// Levels above detected_cpu_level() must not be called.
const TypeKernels& level_kernels(CpuLevel level, TensorType type);
// The implementation the public API uses for `type`: level_kernels(active_cpu_level()).
const TypeKernels& active_kernels(TensorType type);

// What the generic matmul driver needs of one weight type.
struct VecDotKernels {
  TensorType vec_dot_type = TensorType::kF32;
  QuantizeRowFn from_float = nullptr;  // from_float of vec_dot_type
  VecDotFn vec_dot = nullptr;          // vec_dot of the weight type
  simd::TileFn tile = nullptr;         // optional tile of the weight type
  int tile_rows = 1;
  int tile_tokens = 1;
};

// The generic matmul driver, shared by every weight type: each token's activations are
// converted with `from_float` into a buffer reused across calls (per calling thread),
// then the rows are split over the pool and y[t][r] = vec_dot(row r, converted x[t]),
// computed by tiles of rows x tokens where the type has a tile kernel.
void matmul_vec_dot(const WeightMatrix& w, const float* x, int64_t n_tokens, float* y,
                    ThreadPool& pool, const VecDotKernels& k);
// matmul_vec_dot with the reference from_float and vec_dot of w.type.
void matmul_reference(const WeightMatrix& w, const float* x, int64_t n_tokens, float* y,
                      ThreadPool& pool);
// matmul_vec_dot with the active from_float and vec_dot of w.type, so that a faster
// vec_dot alone speeds up the generic driver.
void matmul_active(const WeightMatrix& w, const float* x, int64_t n_tokens, float* y,
                   ThreadPool& pool);
// matmul_vec_dot with the kernels of one level (tests and benchmarks compare levels).
void matmul_level(CpuLevel level, const WeightMatrix& w, const float* x, int64_t n_tokens, float* y,
                  ThreadPool& pool);

}  // namespace hearth::kernels
