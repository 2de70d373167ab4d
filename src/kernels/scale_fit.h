// Scale search for the K-quant and IQ4 encoders: for a small group of values, find the
// scale (and min) whose quantized reconstruction has the least squared error. Each search
// tries a handful of starting scales around the range-based one and refines each by
// alternating "round every value" with "least-squares scale for these integers".
// Internal to hearth_kernels.
#pragma once

#include <cstdint>

namespace hearth::kernels {

// Nearest integer to v (ties to even) clamped to [lo, hi]; NaN gives lo.
int round_clamped(float v, int lo, int hi);

// The value of largest magnitude, the first on ties; 0 for an all-zero group.
float signed_absmax(const float* x, int n);

// x[i] ~= scale * q[i] - min with integer q in [0, nmax], scale >= 0 and min >= 0 (the
// K-quant formats store the min as a non-negative amount subtracted).
struct AffineFit {
  float scale = 0.0f;
  float min = 0.0f;
};
AffineFit fit_affine(const float* x, int n, int nmax);

// x[i] ~= scale * q[i] with integer q in [nmin, nmax] (nmin < 0 < nmax); scale may be
// negative so that the larger side of the range covers the extreme value.
float fit_symmetric(const float* x, int n, int nmin, int nmax);

// x[i] ~= scale * kIq4nlValues[u[i]]; scale may be negative.
float fit_iq4(const float* x, int n);

// Index of the code book value nearest to v.
int nearest_iq4_index(float v);

}  // namespace hearth::kernels
