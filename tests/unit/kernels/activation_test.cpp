// SwiGLU on every runnable level against the scalar reference, and independent of where
// an element sits in the row (no scalar tail with different rounding).
#include "kernels/activation.h"

#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "test_util.h"

namespace hearth::kernels {
namespace {

std::vector<float> gates(size_t n) {
  auto g = test::gaussian(n, 41, 4.0f);
  const float specials[] = {0.0f, -0.0f, 100.0f, -100.0f, 88.5f, -88.5f, 1e-30f, -20.0f, 20.0f};
  for (size_t i = 0; i < sizeof(specials) / sizeof(float) && i < n; ++i) g[i * 7 % n] = specials[i];
  return g;
}

TEST(Activation, SwigluMatchesTheScalarReferenceOnEveryLevel) {
  constexpr size_t kN = 1000;
  const auto g = gates(kN);
  const auto u = test::gaussian(kN, 42);
  std::vector<float> want(kN);
  swiglu_level(CpuLevel::kScalar, g.data(), u.data(), want.data(), kN);
  const std::vector<CpuLevel> levels = test::simd_levels();
  if (levels.empty()) GTEST_SKIP() << test::kNoSimdLevel;
  for (CpuLevel level : levels) {
    SCOPED_TRACE(std::string(cpu_level_name(level)));
    std::vector<float> got(kN);
    swiglu_level(level, g.data(), u.data(), got.data(), kN);
    for (size_t i = 0; i < kN; ++i) {
      EXPECT_NEAR(got[i], want[i], 1e-6f * std::fabs(want[i]) + 1e-30f)
          << "g " << g[i] << " u " << u[i];
    }
  }
}

TEST(Activation, SwigluOfAnElementDoesNotDependOnItsPlaceInTheRow) {
  constexpr size_t kN = 77;
  const auto g = gates(kN);
  const auto u = test::gaussian(kN, 43);
  for (CpuLevel level : runnable_cpu_levels()) {
    std::vector<float> whole(kN);
    swiglu_level(level, g.data(), u.data(), whole.data(), kN);
    for (size_t start : {1u, 3u, 70u, 76u}) {
      std::vector<float> part(kN - start);
      swiglu_level(level, g.data() + start, u.data() + start, part.data(),
                   static_cast<int64_t>(part.size()));
      for (size_t i = 0; i < part.size(); ++i) {
        ASSERT_TRUE(test::same_float(part[i], whole[start + i]))
            << cpu_level_name(level) << " start " << start << " i " << i;
      }
    }
  }
}

TEST(Activation, SwigluMayWriteOverItsGateInput) {
  auto g = gates(40);
  const auto u = test::gaussian(40, 44);
  std::vector<float> want(40);
  swiglu(g.data(), u.data(), want.data(), 40);
  swiglu(g.data(), u.data(), g.data(), 40);
  for (size_t i = 0; i < 40; ++i) EXPECT_TRUE(test::same_float(g[i], want[i]));
}

}  // namespace
}  // namespace hearth::kernels
