#include "kernels/activation.h"

#include <cmath>

namespace hearth::kernels {
namespace {

void swiglu_scalar(const float* gate, const float* up, float* out, int64_t n) {
  for (int64_t i = 0; i < n; ++i) {
    const float g = gate[i];
    out[i] = g / (1.0f + std::exp(-g)) * up[i];
  }
}

}  // namespace

void swiglu_level(CpuLevel level, const float* gate, const float* up, float* out, int64_t n) {
  if (level == CpuLevel::kScalar) {
    swiglu_scalar(gate, up, out, n);
  } else {
    simd::swiglu_avx2(gate, up, out, n);
  }
}

void swiglu(const float* gate, const float* up, float* out, int64_t n) {
  swiglu_level(active_cpu_level(), gate, up, out, n);
}

}  // namespace hearth::kernels
