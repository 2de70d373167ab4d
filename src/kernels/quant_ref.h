// The scalar reference conversions of each type, as plugged into the dispatch table
// (kernel_table.h). Internal to hearth_kernels and its tests; callers use quant.h and
// matmul.h. Every function handles `n` elements, a multiple of the type's block size.
#pragma once

#include <cstdint>

namespace hearth::kernels::ref {

// Bit-exact with quantization.md §3 (and llama.cpp's dequantize_row_*).
void dequantize_row_f32(const void* src, float* dst, int64_t n);
void dequantize_row_f16(const void* src, float* dst, int64_t n);
void dequantize_row_bf16(const void* src, float* dst, int64_t n);
void dequantize_row_q8_0(const void* src, float* dst, int64_t n);
void dequantize_row_q4_0(const void* src, float* dst, int64_t n);
void dequantize_row_q4_1(const void* src, float* dst, int64_t n);
void dequantize_row_q5_0(const void* src, float* dst, int64_t n);
void dequantize_row_q5_1(const void* src, float* dst, int64_t n);
void dequantize_row_q2_k(const void* src, float* dst, int64_t n);
void dequantize_row_q3_k(const void* src, float* dst, int64_t n);
void dequantize_row_q4_k(const void* src, float* dst, int64_t n);
void dequantize_row_q5_k(const void* src, float* dst, int64_t n);
void dequantize_row_q6_k(const void* src, float* dst, int64_t n);
void dequantize_row_iq4_nl(const void* src, float* dst, int64_t n);
void dequantize_row_iq4_xs(const void* src, float* dst, int64_t n);
void dequantize_row_mxfp4(const void* src, float* dst, int64_t n);

// Bit-exact with quantization.md §3.9 (llama.cpp's quantize_row_*_ref).
void quantize_row_f32(const float* src, void* dst, int64_t n);
void quantize_row_f16(const float* src, void* dst, int64_t n);
void quantize_row_bf16(const float* src, void* dst, int64_t n);
void quantize_row_q8_0(const float* src, void* dst, int64_t n);
void quantize_row_q4_0(const float* src, void* dst, int64_t n);
void quantize_row_q4_1(const float* src, void* dst, int64_t n);
void quantize_row_q5_0(const float* src, void* dst, int64_t n);
void quantize_row_q5_1(const float* src, void* dst, int64_t n);
// MXFP4: e = floor(log2 amax) - 2 + 127, each value the nearest code (first on ties).
void quantize_row_mxfp4(const float* src, void* dst, int64_t n);

// Valid encoders of Hearth's own design (least-squares fits of the block scales); their
// bytes differ from llama.cpp's iterative search, their error is of the same order.
void quantize_row_q2_k(const float* src, void* dst, int64_t n);
void quantize_row_q3_k(const float* src, void* dst, int64_t n);
void quantize_row_q4_k(const float* src, void* dst, int64_t n);
void quantize_row_q5_k(const float* src, void* dst, int64_t n);
void quantize_row_q6_k(const float* src, void* dst, int64_t n);
void quantize_row_iq4_nl(const float* src, void* dst, int64_t n);
void quantize_row_iq4_xs(const float* src, void* dst, int64_t n);

// Activation quantizers (quantization.md §4.2): how the reference converts an f32
// activation row to a weight type's vec_dot_type before the dot products, bit-exact with
// its x86 AVX/AVX2 build. F32, F16 and BF16 activations use quantize_row_f32/f16/bf16.
// Q8_0: id = 127/amax, round half to even (the scalar build's 1/d and roundf differ).
void quantize_act_row_q8_0(const float* src, void* dst, int64_t n);
// Q8_1: as Q8_0, plus s = f16(d * sum(qs)) with d before its f16 rounding.
void quantize_act_row_q8_1(const float* src, void* dst, int64_t n);
// Q8_K: scale from the signed extreme (-127/max), f32 d = 1/iscale, per-16 sums in bsums.
void quantize_act_row_q8_k(const float* src, void* dst, int64_t n);

}  // namespace hearth::kernels::ref
