// Element-wise activations of the feed-forward block, dispatched on the CPU level like the
// matmul kernels. Each element's value depends only on its inputs: the SIMD path computes
// every element with the same vector code (a partial last vector is padded, not handled
// by a scalar tail), so results do not depend on where a row starts or how a loop is split.
#pragma once

#include <cstdint>

#include "kernels/cpu_level.h"

namespace hearth::kernels {

// out[i] = silu(gate[i]) * up[i], silu(g) = g / (1 + e^-g). `out` may alias gate or up.
void swiglu(const float* gate, const float* up, float* out, int64_t n);
// The same on one level (tests compare levels).
void swiglu_level(CpuLevel level, const float* gate, const float* up, float* out, int64_t n);

namespace simd {
void swiglu_avx2(const float* gate, const float* up, float* out, int64_t n);
}  // namespace simd

}  // namespace hearth::kernels
