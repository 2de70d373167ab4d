#include "kernels/scale_fit.h"

#include <array>
#include <cmath>
#include <iterator>
#include <limits>

#include "kernels/block_formats.h"

namespace hearth::kernels {
namespace {

// Groups are at most one K-quant sub-block (32 values).
constexpr int kMaxGroup = 32;

// Starting points of the searches, as factors on the range-based scale. Factors below 1
// clip the extremes in exchange for finer steps, which pays off for bell-shaped data.
constexpr float kAffineFactors[] = {0.8f, 0.9f, 1.0f, 1.1f};
constexpr float kSymmetricFactors[] = {0.75f, 0.85f, 0.95f, 1.0f, 1.1f, 1.25f};
constexpr float kIq4Factors[] = {0.8f, 0.9f, 0.95f, 1.0f, 1.05f, 1.15f};
// Each start is refined this many times by least squares.
constexpr int kRefineSteps = 2;

// kIq4Midpoints[i]: halfway between code book values i and i + 1.
constexpr auto kIq4Midpoints = [] {
  std::array<float, 15> m{};
  for (int i = 0; i < 15; ++i)
    m[i] = 0.5f * static_cast<float>(kIq4nlValues[i] + kIq4nlValues[i + 1]);
  return m;
}();

// Rounds every value for (scale, min); returns the squared error.
float affine_assign(const float* x, int n, int nmax, float scale, float min, int* q) {
  const float inv = scale > 0.0f ? 1.0f / scale : 0.0f;
  float err = 0.0f;
  for (int i = 0; i < n; ++i) {
    q[i] = round_clamped((x[i] + min) * inv, 0, nmax);
    const float diff = x[i] - (scale * static_cast<float>(q[i]) - min);
    err += diff * diff;
  }
  return err;
}

// Least-squares (scale, min) for fixed q with min >= 0; false when q is constant.
bool affine_solve(const float* x, const int* q, int n, float& scale, float& min) {
  double sq = 0, sqq = 0, sx = 0, sqx = 0;
  for (int i = 0; i < n; ++i) {
    sq += q[i];
    sqq += static_cast<double>(q[i]) * q[i];
    sx += x[i];
    sqx += static_cast<double>(q[i]) * x[i];
  }
  const double det = n * sqq - sq * sq;
  if (det <= 0.0) return false;
  double s = (n * sqx - sq * sx) / det;
  double offset = (sx - s * sq) / n;
  if (offset > 0.0) {  // the format cannot add a positive offset
    offset = 0.0;
    s = sqx / sqq;
  }
  if (!(s > 0.0)) return false;
  scale = static_cast<float>(s);
  min = static_cast<float>(-offset);
  return true;
}

float symmetric_assign(const float* x, int n, int nmin, int nmax, float scale, int* q) {
  const float inv = scale != 0.0f ? 1.0f / scale : 0.0f;
  float err = 0.0f;
  for (int i = 0; i < n; ++i) {
    q[i] = round_clamped(x[i] * inv, nmin, nmax);
    const float diff = x[i] - scale * static_cast<float>(q[i]);
    err += diff * diff;
  }
  return err;
}

float iq4_assign(const float* x, int n, float scale, int* q) {
  const float inv = scale != 0.0f ? 1.0f / scale : 0.0f;
  float err = 0.0f;
  for (int i = 0; i < n; ++i) {
    q[i] = kIq4nlValues[nearest_iq4_index(x[i] * inv)];
    const float diff = x[i] - scale * static_cast<float>(q[i]);
    err += diff * diff;
  }
  return err;
}

// Least-squares scale through the origin for fixed integer levels; 0 when all are zero.
float origin_solve(const float* x, const int* q, int n) {
  double sqq = 0, sqx = 0;
  for (int i = 0; i < n; ++i) {
    sqq += static_cast<double>(q[i]) * q[i];
    sqx += static_cast<double>(q[i]) * x[i];
  }
  return sqq > 0.0 ? static_cast<float>(sqx / sqq) : 0.0f;
}

// Shared search for the through-the-origin formats: `assign(scale, q)` rounds the group
// and returns the error; each start is refined by origin_solve().
template <typename Assign>
float search_origin_scale(const float* x, int n, const float* starts, int n_starts, Assign assign) {
  int q[kMaxGroup];
  float best_scale = 0.0f;
  float best_err = std::numeric_limits<float>::infinity();
  for (int s = 0; s < n_starts; ++s) {
    float scale = starts[s];
    float prev_err = std::numeric_limits<float>::infinity();
    for (int step = 0; step <= kRefineSteps; ++step) {
      const float err = assign(scale, q);
      if (err < best_err) {
        best_err = err;
        best_scale = scale;
      }
      if (step == kRefineSteps || !(err < prev_err)) break;  // converged
      prev_err = err;
      const float next = origin_solve(x, q, n);
      if (next == 0.0f || next == scale) break;
      scale = next;
    }
  }
  return best_scale;
}

}  // namespace

int round_clamped(float v, int lo, int hi) {
  if (!(v > static_cast<float>(lo))) return lo;
  if (!(v < static_cast<float>(hi))) return hi;
  // |v| < 2^22 here: adding 1.5 * 2^23 leaves no fraction bits, so the f32 addition itself
  // rounds to nearest even (std::nearbyint is a slow library call on baseline x86-64).
  constexpr float kMagic = 12582912.0f;
  return static_cast<int>((v + kMagic) - kMagic);
}

float signed_absmax(const float* x, int n) {
  float amax = 0.0f;
  float max = 0.0f;
  for (int i = 0; i < n; ++i) {
    if (amax < std::fabs(x[i])) {
      amax = std::fabs(x[i]);
      max = x[i];
    }
  }
  return max;
}

int nearest_iq4_index(float v) {
  // Binary search over the midpoints between consecutive code book values.
  int lo = 0;
  for (int step = 8; step > 0; step /= 2) {
    if (lo + step <= 15 && v > kIq4Midpoints[lo + step - 1]) lo += step;
  }
  return lo;
}

AffineFit fit_affine(const float* x, int n, int nmax) {
  float lo = 0.0f;
  float hi = -std::numeric_limits<float>::infinity();
  for (int i = 0; i < n; ++i) {
    lo = std::fmin(lo, x[i]);
    hi = std::fmax(hi, x[i]);
  }
  if (!(hi > lo)) return {0.0f, -lo};  // constant group, representable by the min alone
  int q[kMaxGroup];
  AffineFit best;
  float best_err = std::numeric_limits<float>::infinity();
  for (float factor : kAffineFactors) {
    AffineFit cur{(hi - lo) / static_cast<float>(nmax) * factor, -lo};
    float prev_err = std::numeric_limits<float>::infinity();
    for (int step = 0; step <= kRefineSteps; ++step) {
      const float err = affine_assign(x, n, nmax, cur.scale, cur.min, q);
      if (err < best_err) {
        best_err = err;
        best = cur;
      }
      if (step == kRefineSteps || !(err < prev_err)) break;  // converged
      prev_err = err;
      if (!affine_solve(x, q, n, cur.scale, cur.min)) break;
    }
  }
  return best;
}

float fit_symmetric(const float* x, int n, int nmin, int nmax) {
  const float m = signed_absmax(x, n);
  if (m == 0.0f) return 0.0f;
  // Map the extreme onto the wider (negative) end of the range, scaled by each factor,
  // plus one start that maps it onto the positive end.
  constexpr int kStarts = std::size(kSymmetricFactors) + 1;
  float starts[kStarts];
  for (int s = 0; s + 1 < kStarts; ++s) {
    starts[s] = m / static_cast<float>(nmin) * kSymmetricFactors[s];
  }
  starts[kStarts - 1] = m / static_cast<float>(nmax);
  return search_origin_scale(x, n, starts, kStarts, [&](float scale, int* q) {
    return symmetric_assign(x, n, nmin, nmax, scale, q);
  });
}

float fit_iq4(const float* x, int n) {
  const float m = signed_absmax(x, n);
  if (m == 0.0f) return 0.0f;
  constexpr int kStarts = std::size(kIq4Factors) + 1;
  float starts[kStarts];
  for (int s = 0; s + 1 < kStarts; ++s) {
    starts[s] = m / static_cast<float>(kIq4nlValues[0]) * kIq4Factors[s];
  }
  starts[kStarts - 1] = m / static_cast<float>(kIq4nlValues[15]);
  return search_origin_scale(x, n, starts, kStarts,
                             [&](float scale, int* q) { return iq4_assign(x, n, scale, q); });
}

}  // namespace hearth::kernels
