#include "kernels/matmul.h"

#include <algorithm>
#include <cassert>
#include <cstdint>
#include <limits>
#include <vector>

#include "kernels/kernel_table.h"
#include "kernels/quant.h"

namespace hearth::kernels {
namespace {

// Weight rows visited together when several tokens share them: each row is then reused
// across the tokens while still in cache.
constexpr int64_t kRowTile = 4;

// Token rows converted to a weight type's vec_dot_type, `stride` bytes apart.
struct ConvertedRows {
  const uint8_t* data = nullptr;
  size_t stride = 0;
};

// One matmul call as the workers see it; passed by a single pointer so that the closures
// handed to the pool stay small enough not to allocate.
struct Job {
  const WeightMatrix& w;
  const float* x;
  int64_t n_tokens;
  float* y;
  const VecDotKernels& k;
  ConvertedRows xq;
};

// Converts the rows of tokens [begin, end) into xq, each on its own (so a token's bytes
// never depend on the rest of the batch).
void convert_rows(const Job& job, uint8_t* out, int64_t begin, int64_t end) {
  for (int64_t t = begin; t < end; ++t) {
    job.k.from_float(job.x + t * job.w.n_cols, out + static_cast<size_t>(t) * job.xq.stride,
                     job.w.n_cols);
  }
}

// Fills job.xq: the caller's rows in place for F32 activations, else `buffer` (reused
// across calls) converted in parallel over tokens when there are several.
void convert_activations(Job& job, ThreadPool& pool, std::vector<uint8_t>& buffer) {
  const int64_t n_cols = job.w.n_cols;
  if (job.k.vec_dot_type == TensorType::kF32) {
    job.xq = {reinterpret_cast<const uint8_t*>(job.x), static_cast<size_t>(n_cols) * sizeof(float)};
    return;
  }
  const size_t stride = row_bytes(traits_of(job.k.vec_dot_type), static_cast<uint64_t>(n_cols));
  if (buffer.size() < stride * static_cast<size_t>(job.n_tokens)) {
    buffer.resize(stride * static_cast<size_t>(job.n_tokens));
  }
  uint8_t* out = buffer.data();
  job.xq = {out, stride};
  if (job.n_tokens == 1) {
    convert_rows(job, out, 0, 1);
    return;
  }
  const Job* p = &job;
  pool.parallel_for(job.n_tokens, [p, out](int64_t begin, int64_t end, int /*thread_index*/) {
    convert_rows(*p, out, begin, end);
  });
}

// Rows [begin, end) of y for every token.
void matmul_rows(const Job& job, int64_t begin, int64_t end) {
  const WeightMatrix& w = job.w;
  const int64_t tile = job.n_tokens > 1 ? kRowTile : 1;
  const auto* base = static_cast<const uint8_t*>(w.data);
  for (int64_t r0 = begin; r0 < end; r0 += tile) {
    const int64_t n_tile = std::min(tile, end - r0);
    for (int64_t t = 0; t < job.n_tokens; ++t) {
      const uint8_t* xt = job.xq.data + static_cast<size_t>(t) * job.xq.stride;
      float* yt = job.y + t * w.n_rows;
      for (int64_t r = r0; r < r0 + n_tile; ++r) {
        yt[r] = job.k.vec_dot(base + static_cast<size_t>(r) * w.row_stride, xt, w.n_cols);
      }
    }
  }
}

// MatmulPrecision::kF32: each weight row dequantized once into a per-thread buffer, then
// dotted with every token's f32 row, summing in f64.
void matmul_f32_rows(const WeightMatrix& w, const float* x, int64_t n_tokens, float* y,
                     int64_t begin, int64_t end) {
  thread_local std::vector<float> row;
  row.resize(static_cast<size_t>(w.n_cols));
  const auto* base = static_cast<const uint8_t*>(w.data);
  for (int64_t r = begin; r < end; ++r) {
    dequantize_row(w.type, base + static_cast<size_t>(r) * w.row_stride, row.data(), w.n_cols);
    for (int64_t t = 0; t < n_tokens; ++t) {
      const float* xt = x + t * w.n_cols;
      double sum = 0.0;
      for (int64_t c = 0; c < w.n_cols; ++c)
        sum += static_cast<double>(row[static_cast<size_t>(c)]) * xt[c];
      y[t * w.n_rows + r] = static_cast<float>(sum);
    }
  }
}

VecDotKernels vec_dot_kernels(const TypeKernels& weight, const TypeKernels& (*table)(TensorType)) {
  return {weight.vec_dot_type, table(weight.vec_dot_type).from_float, weight.vec_dot};
}

}  // namespace

void matmul_vec_dot(const WeightMatrix& w, const float* x, int64_t n_tokens, float* y,
                    ThreadPool& pool, const VecDotKernels& k) {
  assert(k.from_float != nullptr && k.vec_dot != nullptr);
  if (k.from_float == nullptr || k.vec_dot == nullptr) return;
  // Kept per calling thread across calls: decode calls matmul hundreds of times per token.
  thread_local std::vector<uint8_t> buffer;
  Job job{w, x, n_tokens, y, k, {}};
  convert_activations(job, pool, buffer);
  const Job* p = &job;
  pool.parallel_for(w.n_rows, [p](int64_t begin, int64_t end, int /*thread_index*/) {
    matmul_rows(*p, begin, end);
  });
}

void matmul_reference(const WeightMatrix& w, const float* x, int64_t n_tokens, float* y,
                      ThreadPool& pool) {
  matmul_vec_dot(w, x, n_tokens, y, pool,
                 vec_dot_kernels(reference_kernels(w.type), reference_kernels));
}

void matmul_active(const WeightMatrix& w, const float* x, int64_t n_tokens, float* y,
                   ThreadPool& pool) {
  matmul_vec_dot(w, x, n_tokens, y, pool, vec_dot_kernels(active_kernels(w.type), active_kernels));
}

size_t converted_row_bytes(TensorType row_type, int64_t n) {
  return row_bytes(traits_of(active_kernels(row_type).vec_dot_type), static_cast<uint64_t>(n));
}

void convert_for_dot(TensorType row_type, const float* x, void* converted, int64_t n) {
  const QuantizeRowFn fn = active_kernels(active_kernels(row_type).vec_dot_type).from_float;
  assert(fn != nullptr && "convert_for_dot: unsupported row type, check can_matmul()");
  if (fn != nullptr) fn(x, converted, n);
}

float dot_converted(TensorType row_type, const void* row, const void* converted, int64_t n) {
  const VecDotFn fn = active_kernels(row_type).vec_dot;
  assert(fn != nullptr && "dot_converted: unsupported row type, check can_matmul()");
  return fn != nullptr ? fn(row, converted, n) : std::numeric_limits<float>::quiet_NaN();
}

bool can_matmul(TensorType type) {
  return active_kernels(type).matmul != nullptr;
}

void matmul(const WeightMatrix& w, const float* x, int64_t n_tokens, float* y, ThreadPool& pool,
            MatmulPrecision precision) {
  if (n_tokens <= 0 || w.n_rows <= 0) return;
  assert(w.n_cols % traits_of(w.type).block_size == 0);
  if (precision == MatmulPrecision::kF32 && can_dequantize(w.type)) {
    pool.parallel_for(w.n_rows, [&](int64_t begin, int64_t end, int /*thread_index*/) {
      matmul_f32_rows(w, x, n_tokens, y, begin, end);
    });
    return;
  }
  const MatmulFn fn = active_kernels(w.type).matmul;
  assert(fn != nullptr && "matmul: unsupported weight type, check can_matmul()");
  if (fn == nullptr) {
    std::fill(y, y + n_tokens * w.n_rows, std::numeric_limits<float>::quiet_NaN());
    return;
  }
  fn(w, x, n_tokens, y, pool);
}

}  // namespace hearth::kernels
