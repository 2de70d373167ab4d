// Weights repacked at load for the many-row path (prefill chunks, the decode rows of many
// slots): groups of 16 consecutive rows whose blocks are interleaved, so that one vector
// register holds 4 codes of each of 8 (AVX2) or 16 (AVX-512) rows and one integer
// instruction advances that many outputs at once (interleaved_format.h has the bytes).
//
// The arithmetic of every output, at every level and for any number of tokens:
//   for each block b, in order:
//     isum = the exact integer sum of the block's code products (the K-quants and IQ4_XS:
//            each sub-block's sum times its scale, added in integers; code offsets such as
//            Q5_0's 16 or Q6_K's 32 times the activations' code sums folded in)
//     acc  = fma(d_w * d_x, float(isum), acc)
//     Q4_K/Q5_K also: acc = fma(-(dmin_w * d_x), float(msum), acc), msum = sum of min * code
//     sums; Q4_1/Q5_1 also: acc = fma(m_w, s_x, acc), s_x the Q8_1 block's rounded sum
// F16 and BF16 have no blocks of codes: per column pair, in order,
//     acc = fma(w_odd, x_odd, acc), then acc = fma(w_even, x_even, acc)
// with x rounded to the weight type (vdpbf16ps's order and rounding).
// GEMV (one token) and GEMM run the same sequence per output, so a token's result does not
// depend on the batch it is in (matmul.h), and the AVX2, AVX-512 and scalar kernels give the
// same bits. It is not the reference engine's f32 order (that keeps 8 partial lanes per
// output), so logits differ from the row layout's by rounding only.
#pragma once

#include <cstddef>
#include <cstdint>

#include "base/tensor_type.h"
#include "base/thread_pool.h"
#include "kernels/cpu_level.h"
#include "kernels/matmul.h"

namespace hearth::kernels {

inline constexpr int kInterleaveRows = 16;

// True when `type` has an interleaved layout: Q4_0, Q4_1, Q5_0, Q5_1, Q8_0, IQ4_NL, Q4_K,
// Q5_K, Q6_K, IQ4_XS, F16 and BF16.
bool has_interleaved_layout(TensorType type);
// True when w (in the file's row layout) can be repacked: a type with a layout, rows a
// multiple of 16, and a CPU level with kernels for it (AVX2 or above; Q5_K: AVX-512).
bool can_interleave(const WeightMatrix& w);
// Bytes of w once repacked.
size_t interleaved_bytes(const WeightMatrix& w);
// Repacks w (row layout) into `dst` (interleaved_bytes(w) bytes, any alignment) and
// returns the view of the result.
WeightMatrix interleave(const WeightMatrix& w, void* dst);
// Row r of an interleaved matrix back in the file's block format (row_stride bytes).
void extract_row(const WeightMatrix& w, int64_t r, void* dst);

// matmul() on an interleaved matrix with the kernels of one level (the scalar level runs
// the portable reference of the same arithmetic). matmul() calls it with the active level.
// On the AVX-512 level, BF16 weights use vdpbf16ps where the CPU has AVX-512 BF16, else two
// FMAs per column pair; both give the same bits on normal numbers.
void matmul_interleaved(CpuLevel level, const WeightMatrix& w, const float* x, int64_t n_tokens,
                        float* y, ThreadPool& pool);

}  // namespace hearth::kernels
