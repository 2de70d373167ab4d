// Element-wise and row operations of the forward pass on f32 activations, with the
// reference's arithmetic where it matters for matching its numbers.
#pragma once

#include <array>
#include <cstdint>

#include "engine/hparams.h"

namespace hearth::engine::ops {

// y = x / sqrt(mean(x^2) + eps) * w over one row of n values. Squares are formed in f32
// and summed in f64, as the reference does.
void rms_norm(const float* x, const float* w, float* y, int64_t n, float eps);

// y = (x - mean(x)) / sqrt(var(x) + eps) * w + b over one row of n values (the encoders'
// LayerNorm: population variance, sums in f64 as the reference's; b may be null).
void layer_norm(const float* x, const float* w, const float* b, float* y, int64_t n, float eps);

// y[i] = gelu(x[i]) with the tanh approximation, as the reference's CPU computes it: the
// input rounded to f16 and looked up in a table of f16 results (|x| >= 10: 0 or x).
void gelu(const float* x, float* y, int64_t n);

// x[i] += y[i]
void add_inplace(float* x, const float* y, int64_t n);

// out[i] = silu(gate[i]) * up[i], silu(g) = g / (1 + e^-g)
void swiglu(const float* gate, const float* up, float* out, int64_t n);

enum class RopeKind {
  kNorm,  // rotate interleaved pairs (x[2i], x[2i+1]): llama, mistral, smollm3
  kNeox,  // rotate halves (x[i], x[i + R/2]): qwen2, qwen3, gemma, phi3
};

// cos/sin of every rotated pair at position `pos` (n_rot/2 values each), including
// frequency scaling, YaRN and per-pair divisors (`freq_factors`, may be null).
void rope_angles(const RopeParams& rope, int32_t n_rot, const float* freq_factors, int32_t pos,
                 float* cos_out, float* sin_out);

// M-RoPE: the position component (0 time, 1 height, 2 width, 3 extra) that rotated pair
// `pair` takes, by the model's sections, contiguous or interleaved (qwen3vl), as the
// reference's mrope cache assigns them.
int32_t mrope_component(const std::array<int32_t, 4>& sections, bool interleaved, int32_t pair);

// cos/sin of every rotated pair under M-RoPE: pair i rotated by position pos[component[i]]
// (component: n_rot/2 entries from mrope_component), scaled as rope_angles() does.
void mrope_angles(const RopeParams& rope, int32_t n_rot, const float* freq_factors,
                  const int32_t pos[4], const uint8_t* component, float* cos_out, float* sin_out);

// Rotates the first n_rot dims of one head vector in place; dims n_rot.. stay unchanged.
void rope_apply(RopeKind kind, float* head, const float* cos_v, const float* sin_v, int32_t n_rot);

}  // namespace hearth::engine::ops
