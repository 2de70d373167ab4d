// Helpers shared by the kernels tests: deterministic random data and bit-level float
// comparison.
#pragma once

#include <bit>
#include <cmath>
#include <cstdint>
#include <random>
#include <vector>

#include "kernels/cpu_level.h"

namespace hearth::kernels::test {

// The levels a test compares with the scalar reference: every level this CPU runs except
// scalar itself (comparing scalar with scalar would pass without testing anything). Empty on
// a CPU without AVX2, where such a test skips with kNoSimdLevel.
inline std::vector<CpuLevel> simd_levels() {
  std::vector<CpuLevel> out;
  for (CpuLevel level : runnable_cpu_levels()) {
    if (level != CpuLevel::kScalar) out.push_back(level);
  }
  return out;
}

inline constexpr const char* kNoSimdLevel =
    "this CPU runs no SIMD level (AVX2 or above): only the scalar reference exists here";

inline std::vector<float> gaussian(size_t n, uint32_t seed, float sigma = 1.0f) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> dist(0.0f, sigma);
  std::vector<float> v(n);
  for (auto& x : v) x = dist(rng);
  return v;
}

inline std::vector<uint8_t> random_bytes(size_t n, uint32_t seed) {
  std::mt19937 rng(seed);
  std::vector<uint8_t> v(n);
  for (auto& b : v) b = static_cast<uint8_t>(rng() & 0xFF);
  return v;
}

// Equal bit patterns, or both NaN (inf * 0 gives the same default NaN on both sides, but
// the test does not depend on that).
inline bool same_float(float a, float b) {
  if (std::isnan(a) && std::isnan(b)) return true;
  return std::bit_cast<uint32_t>(a) == std::bit_cast<uint32_t>(b);
}

// sqrt(mean((a - b)^2)) / sqrt(mean(b^2)), in double.
inline double relative_rms(const float* a, const float* b, size_t n) {
  double num = 0.0, den = 0.0;
  for (size_t i = 0; i < n; ++i) {
    const double d = static_cast<double>(a[i]) - b[i];
    num += d * d;
    den += static_cast<double>(b[i]) * b[i];
  }
  return den > 0.0 ? std::sqrt(num / den) : std::sqrt(num);
}

}  // namespace hearth::kernels::test
