// Weight-matrix products, the hot loop of every forward pass. Model code calls only this
// interface; which implementation runs (scalar reference, SIMD, repacked) is chosen per
// weight type behind it, so fast kernels plug in without touching model code.
#pragma once

#include <cstddef>
#include <cstdint>

#include "base/tensor_type.h"
#include "base/thread_pool.h"

namespace hearth::kernels {

// How a weight matrix's bytes are arranged.
enum class WeightLayout {
  kRows,           // as stored in the file: row after row, `row_stride` bytes apart
  kInterleaved16,  // repacked at load: groups of 16 rows interleaved block by block
                   // (interleaved.h); only matmul() and the functions there read it
};

// A 2-D weight: n_rows rows of n_cols elements each. GGUF shape [n_cols, n_rows].
// row_stride is the bytes of one row in the file's layout, whatever `layout` is.
struct WeightMatrix {
  TensorType type = TensorType::kF32;
  int64_t n_cols = 0;
  int64_t n_rows = 0;
  size_t row_stride = 0;
  const void* data = nullptr;
  WeightLayout layout = WeightLayout::kRows;
};

// True when matmul() accepts weights of this type.
bool can_matmul(TensorType type);

// How products are computed.
enum class MatmulPrecision {
  // The reference engine's arithmetic (below): activations in each weight type's dot format.
  kReference,
  // Weights dequantized to f32, activations kept in f32, sums in f64: no rounding beyond
  // the stored weights themselves. Slower; for checking model code against float64 math.
  kF32,
};

// y[t][r] = sum_c w[r][c] * x[t][c]   for t < n_tokens, r < w.n_rows.
// x: [n_tokens][w.n_cols] f32, contiguous.  y: [n_tokens][w.n_rows] f32, contiguous.
// Computed with the reference engine's arithmetic (quantization.md §4.1): x[t] is first
// converted to the weight type's activation format (f16/bf16 rounding for F16/BF16
// weights, 8-bit Q8_0/Q8_1/Q8_K blocks for quantized ones), then dotted per block in
// integers. Each y[t][r] depends only on the weight row and x[t]: never on n_tokens, on
// other tokens, or on the thread count (batch invariance).
// With MatmulPrecision::kF32 the activations are used as they are (see MatmulPrecision).
void matmul(const WeightMatrix& w, const float* x, int64_t n_tokens, float* y, ThreadPool& pool,
            MatmulPrecision precision = MatmulPrecision::kReference);

// Dot products in the same arithmetic as matmul() for rows that are not a weight matrix
// (attention's q·k over cached K rows): `x` is converted once to the activation format of
// `row_type` (quantization.md §2: f16 for F16 rows, Q8_0 for Q8_0 rows, ...), then dotted
// with any number of rows of that type. Each row type that matmul() accepts is supported.
size_t converted_row_bytes(TensorType row_type, int64_t n);
void convert_for_dot(TensorType row_type, const float* x, void* converted, int64_t n);
// sum_c row[c] * x[c] for a row of `row_type` (n elements, any alignment) and `converted`
// from convert_for_dot(row_type, x, ...).
float dot_converted(TensorType row_type, const void* row, const void* converted, int64_t n);
// dot_converted of n_rows rows (`row_stride` bytes apart) against n_conv converted vectors
// (`conv_stride` bytes apart), by the row type's tile where it has one; each output has
// dot_converted's bits. y: [n_conv][n_rows].
void dot_converted_rows(TensorType row_type, const void* rows, size_t row_stride, int64_t n_rows,
                        const void* converted, size_t conv_stride, int64_t n_conv, int64_t n,
                        float* y);

}  // namespace hearth::kernels
