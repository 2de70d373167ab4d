// Conversions between stored tensor types and f32: exact dequantization of every block
// format Hearth reads, and the reference quantizers used by writers and tests.
#pragma once

#include <cstdint>

#include "base/tensor_type.h"

namespace hearth::kernels {

// True when dequantize_row() handles this type.
bool can_dequantize(TensorType type);
// Converts `n` elements (a multiple of the type's block size, starting on a block
// boundary) to f32, bit-exact with the reference engine's dequantization.
void dequantize_row(TensorType type, const void* src, float* dst, int64_t n);

// True when quantize_row() handles this type.
bool can_quantize(TensorType type);
// Encodes `n` f32 values (a multiple of the block size) with the reference quantizer.
void quantize_row(TensorType type, const float* src, void* dst, int64_t n);

}  // namespace hearth::kernels
