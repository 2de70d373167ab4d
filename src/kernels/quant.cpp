#include "kernels/quant.h"

#include <cassert>
#include <limits>

#include "kernels/kernel_table.h"

namespace hearth::kernels {

bool can_dequantize(TensorType type) {
  return active_kernels(type).dequantize_row != nullptr;
}

void dequantize_row(TensorType type, const void* src, float* dst, int64_t n) {
  assert(n >= 0 && n % traits_of(type).block_size == 0);
  const DequantizeRowFn fn = active_kernels(type).dequantize_row;
  assert(fn != nullptr && "dequantize_row: unhandled type, check can_dequantize()");
  if (fn == nullptr) {
    // A caller bug; make it visible in the output rather than reading garbage.
    for (int64_t i = 0; i < n; ++i) dst[i] = std::numeric_limits<float>::quiet_NaN();
    return;
  }
  fn(src, dst, n);
}

bool can_quantize(TensorType type) {
  return active_kernels(type).quantize_row != nullptr;
}

void quantize_row(TensorType type, const float* src, void* dst, int64_t n) {
  assert(n >= 0 && n % traits_of(type).block_size == 0);
  const QuantizeRowFn fn = active_kernels(type).quantize_row;
  assert(fn != nullptr && "quantize_row: unhandled type, check can_quantize()");
  if (fn != nullptr) fn(src, dst, n);
}

}  // namespace hearth::kernels
