// Weight-matrix products, the hot loop of every forward pass. Model code calls only this
// interface; which implementation runs (scalar reference, SIMD, repacked) is chosen per
// weight type behind it, so fast kernels plug in without touching model code.
#pragma once

#include <cstddef>
#include <cstdint>

#include "base/tensor_type.h"
#include "base/thread_pool.h"

namespace hearth::kernels {

// A 2-D weight as stored in the file: n_rows rows of n_cols elements each, rows
// `row_stride` bytes apart. GGUF shape [n_cols, n_rows].
struct WeightMatrix {
  TensorType type = TensorType::kF32;
  int64_t n_cols = 0;
  int64_t n_rows = 0;
  size_t row_stride = 0;
  const void* data = nullptr;
};

// True when matmul() accepts weights of this type.
bool can_matmul(TensorType type);

// y[t][r] = sum_c w[r][c] * x[t][c]   for t < n_tokens, r < w.n_rows.
// x: [n_tokens][w.n_cols] f32, contiguous.  y: [n_tokens][w.n_rows] f32, contiguous.
// Each y[t][r] is computed in an order that depends only on the weight row and x[t]:
// never on n_tokens, on other tokens, or on the thread count (batch invariance).
void matmul(const WeightMatrix& w, const float* x, int64_t n_tokens, float* y, ThreadPool& pool);

}  // namespace hearth::kernels
