// The scalar reference dot products of one weight row with one activation row already in
// the weight type's vec_dot_type (quantization.md §4.3), as plugged into the dispatch
// table (kernel_table.h). Internal to hearth_kernels and its tests; callers use matmul.h.
//
// `x` is a weight row of `n` elements (n a multiple of the block size, data possibly
// unaligned); `y` holds the same n elements converted by the activation quantizer of the
// vec_dot_type (quant_ref.h). Inside a block the products are summed in integers; each
// block's sum is scaled in f32 in the operand order of §4.3 and added to one f32
// accumulator in block order. F32, F16 and BF16 multiply in f32 and sum in double.
#pragma once

#include <cstdint>

namespace hearth::kernels::ref {

float vec_dot_f32(const void* x, const void* y, int64_t n);     // y: F32
float vec_dot_f16(const void* x, const void* y, int64_t n);     // y: F16
float vec_dot_bf16(const void* x, const void* y, int64_t n);    // y: BF16
float vec_dot_q8_0(const void* x, const void* y, int64_t n);    // y: Q8_0
float vec_dot_q4_0(const void* x, const void* y, int64_t n);    // y: Q8_0
float vec_dot_q4_1(const void* x, const void* y, int64_t n);    // y: Q8_1
float vec_dot_q5_0(const void* x, const void* y, int64_t n);    // y: Q8_0
float vec_dot_q5_1(const void* x, const void* y, int64_t n);    // y: Q8_1
float vec_dot_iq4_nl(const void* x, const void* y, int64_t n);  // y: Q8_0
float vec_dot_q2_k(const void* x, const void* y, int64_t n);    // y: Q8_K
float vec_dot_q3_k(const void* x, const void* y, int64_t n);    // y: Q8_K
float vec_dot_q4_k(const void* x, const void* y, int64_t n);    // y: Q8_K
float vec_dot_q5_k(const void* x, const void* y, int64_t n);    // y: Q8_K
float vec_dot_q6_k(const void* x, const void* y, int64_t n);    // y: Q8_K
float vec_dot_iq4_xs(const void* x, const void* y, int64_t n);  // y: Q8_K
float vec_dot_mxfp4(const void* x, const void* y, int64_t n);   // y: Q8_0

}  // namespace hearth::kernels::ref
