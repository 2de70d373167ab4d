#include "kernels/matmul.h"

#include <algorithm>
#include <cassert>
#include <cstdint>
#include <limits>
#include <vector>

#include "kernels/interleaved.h"
#include "kernels/kernel_table.h"
#include "kernels/quant.h"

namespace hearth::kernels {
namespace {

// Tokens whose converted activations are swept by one row tile before moving on: 64 rows
// of Q8_0 activations for a 2048-wide matrix (~140 KB) stay in L2 while every weight row of
// a thread's range is streamed past them once.
constexpr int64_t kTokenBlock = 64;

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

// Rows [r0, r0 + n_rows) x tokens [t0, t0 + n_tok) of y, one vec_dot per output.
void dot_outputs(const Job& job, int64_t r0, int64_t n_rows, int64_t t0, int64_t n_tok) {
  const WeightMatrix& w = job.w;
  const auto* base = static_cast<const uint8_t*>(w.data);
  for (int64_t t = t0; t < t0 + n_tok; ++t) {
    const uint8_t* xt = job.xq.data + static_cast<size_t>(t) * job.xq.stride;
    float* yt = job.y + t * w.n_rows;
    for (int64_t r = r0; r < r0 + n_rows; ++r) {
      yt[r] = job.k.vec_dot(base + static_cast<size_t>(r) * w.row_stride, xt, w.n_cols);
    }
  }
}

// The same outputs by the type's tile kernel, in tiles of at most tile_rows x tile_tokens.
void tile_outputs(const Job& job, int64_t r0, int64_t n_rows, int64_t t0, int64_t n_tok) {
  const WeightMatrix& w = job.w;
  simd::TileArgs a;
  a.w_stride = w.row_stride;
  a.x_stride = job.xq.stride;
  a.n = w.n_cols;
  a.y_stride = static_cast<size_t>(w.n_rows);
  const auto* base = static_cast<const uint8_t*>(w.data);
  for (int64_t t = t0; t < t0 + n_tok; t += job.k.tile_tokens) {
    a.n_tokens = static_cast<int>(std::min<int64_t>(job.k.tile_tokens, t0 + n_tok - t));
    a.x = job.xq.data + static_cast<size_t>(t) * job.xq.stride;
    for (int64_t r = r0; r < r0 + n_rows; r += job.k.tile_rows) {
      a.n_rows = static_cast<int>(std::min<int64_t>(job.k.tile_rows, r0 + n_rows - r));
      a.w = base + static_cast<size_t>(r) * w.row_stride;
      a.y = job.y + t * w.n_rows + r;
      job.k.tile(a);
    }
  }
}

// Rows [begin, end) of y for every token, token block by token block; within a block
// each weight row tile meets every token of the block while it is in cache.
void matmul_rows(const Job& job, int64_t begin, int64_t end) {
  // Row tiles small enough that one weight tile stays in L1 across a token block.
  const int64_t rows_per_pass = job.k.tile != nullptr ? job.k.tile_rows : 4;
  for (int64_t t0 = 0; t0 < job.n_tokens; t0 += kTokenBlock) {
    const int64_t n_tok = std::min(kTokenBlock, job.n_tokens - t0);
    for (int64_t r0 = begin; r0 < end; r0 += rows_per_pass) {
      const int64_t n_rows = std::min(rows_per_pass, end - r0);
      if (job.k.tile != nullptr) {
        tile_outputs(job, r0, n_rows, t0, n_tok);
      } else {
        dot_outputs(job, r0, n_rows, t0, n_tok);
      }
    }
  }
}

// MatmulPrecision::kF32: each weight row dequantized once into a per-thread buffer, then
// dotted with every token's f32 row, summing in f64.
void matmul_f32_rows(const WeightMatrix& w, const float* x, int64_t n_tokens, float* y,
                     int64_t begin, int64_t end) {
  thread_local std::vector<float> row;
  thread_local std::vector<uint8_t> packed;  // an interleaved row back in the file's layout
  row.resize(static_cast<size_t>(w.n_cols));
  packed.resize(w.row_stride);
  const auto* base = static_cast<const uint8_t*>(w.data);
  for (int64_t r = begin; r < end; ++r) {
    const void* src = base + static_cast<size_t>(r) * w.row_stride;
    if (w.layout == WeightLayout::kInterleaved16) {
      extract_row(w, r, packed.data());
      src = packed.data();
    }
    dequantize_row(w.type, src, row.data(), w.n_cols);
    for (int64_t t = 0; t < n_tokens; ++t) {
      const float* xt = x + t * w.n_cols;
      double sum = 0.0;
      for (int64_t c = 0; c < w.n_cols; ++c)
        sum += static_cast<double>(row[static_cast<size_t>(c)]) * xt[c];
      y[t * w.n_rows + r] = static_cast<float>(sum);
    }
  }
}

VecDotKernels vec_dot_kernels(const TypeKernels& weight, const TypeKernels& activation) {
  return {weight.vec_dot_type, activation.from_float, weight.vec_dot,
          weight.tile,         weight.tile_rows,      weight.tile_tokens};
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
  // Split in whole row tiles (the split never changes a value: each output is computed by
  // one thread, whole).
  const int64_t unit = k.tile != nullptr ? k.tile_rows : 1;
  const int64_t n_units = (w.n_rows + unit - 1) / unit;
  pool.parallel_for(n_units, [p, unit](int64_t begin, int64_t end, int /*thread_index*/) {
    matmul_rows(*p, begin * unit, std::min(end * unit, p->w.n_rows));
  });
}

void matmul_reference(const WeightMatrix& w, const float* x, int64_t n_tokens, float* y,
                      ThreadPool& pool) {
  const TypeKernels& k = reference_kernels(w.type);
  matmul_vec_dot(w, x, n_tokens, y, pool, vec_dot_kernels(k, reference_kernels(k.vec_dot_type)));
}

void matmul_active(const WeightMatrix& w, const float* x, int64_t n_tokens, float* y,
                   ThreadPool& pool) {
  const TypeKernels& k = active_kernels(w.type);
  matmul_vec_dot(w, x, n_tokens, y, pool, vec_dot_kernels(k, active_kernels(k.vec_dot_type)));
}

void matmul_level(CpuLevel level, const WeightMatrix& w, const float* x, int64_t n_tokens, float* y,
                  ThreadPool& pool) {
  if (w.layout == WeightLayout::kInterleaved16) {
    matmul_interleaved(level, w, x, n_tokens, y, pool);
    return;
  }
  const TypeKernels& k = level_kernels(level, w.type);
  matmul_vec_dot(w, x, n_tokens, y, pool, vec_dot_kernels(k, level_kernels(level, k.vec_dot_type)));
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

void dot_converted_rows(TensorType row_type, const void* rows, size_t row_stride, int64_t n_rows,
                        const void* converted, size_t conv_stride, int64_t n_conv, int64_t n,
                        float* y) {
  const TypeKernels& k = active_kernels(row_type);
  const auto* w = static_cast<const uint8_t*>(rows);
  const auto* x = static_cast<const uint8_t*>(converted);
  if (k.tile == nullptr) {
    for (int64_t t = 0; t < n_conv; ++t)
      for (int64_t r = 0; r < n_rows; ++r)
        y[t * n_rows + r] = k.vec_dot(w + static_cast<size_t>(r) * row_stride,
                                      x + static_cast<size_t>(t) * conv_stride, n);
    return;
  }
  simd::TileArgs a;
  a.w_stride = row_stride;
  a.x_stride = conv_stride;
  a.n = n;
  a.y_stride = static_cast<size_t>(n_rows);
  for (int64_t t = 0; t < n_conv; t += k.tile_tokens) {
    a.n_tokens = static_cast<int>(std::min<int64_t>(k.tile_tokens, n_conv - t));
    a.x = x + static_cast<size_t>(t) * conv_stride;
    for (int64_t r = 0; r < n_rows; r += k.tile_rows) {
      a.n_rows = static_cast<int>(std::min<int64_t>(k.tile_rows, n_rows - r));
      a.w = w + static_cast<size_t>(r) * row_stride;
      a.y = y + t * n_rows + r;
      k.tile(a);
    }
  }
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
  if (w.layout == WeightLayout::kInterleaved16) {
    matmul_interleaved(active_cpu_level(), w, x, n_tokens, y, pool);
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
