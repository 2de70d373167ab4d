// Row operations of the forward pass: RMSNorm's arithmetic, RoPE angles (plain, linear
// scaling, YaRN, per-pair divisors) against independent double-precision formulas, and
// the NORM / NEOX pairings, M-RoPE's sections.
#include "engine/ops.h"

#include "base/half.h"

#include <gtest/gtest.h>

#include <array>
#include <cmath>
#include <numbers>
#include <vector>

namespace hearth::engine::ops {
namespace {

TEST(RmsNorm, MatchesTheFormula) {
  const std::vector<float> x = {1.0f, -2.0f, 3.0f, 0.5f}, w = {1.0f, 2.0f, 0.5f, -1.0f};
  std::vector<float> y(4);
  rms_norm(x.data(), w.data(), y.data(), 4, 1e-5f);
  const double mean = (1.0 + 4.0 + 9.0 + 0.25) / 4.0;
  for (size_t i = 0; i < 4; ++i) EXPECT_NEAR(y[i], x[i] / std::sqrt(mean + 1e-5) * w[i], 1e-6);
}

TEST(RmsNorm, ZeroRowStaysFinite) {
  const std::vector<float> x(8, 0.0f), w(8, 1.0f);
  std::vector<float> y(8, 1.0f);
  rms_norm(x.data(), w.data(), y.data(), 8, 1e-6f);
  for (float v : y) EXPECT_EQ(v, 0.0f);
}

// theta_i = pos * base^(-2i/R) in double, for comparison with the iterative f32 angles.
double plain_theta(int pos, int i, double base, int n_rot) {
  return pos * std::pow(base, -2.0 * i / n_rot);
}

TEST(RopeAngles, PlainAnglesMatchPowerFormula) {
  RopeParams r;
  r.freq_base = 10000.0f;
  const int n_rot = 64;
  std::vector<float> c(n_rot / 2), s(n_rot / 2);
  for (int pos : {0, 1, 17, 1000}) {
    rope_angles(r, n_rot, nullptr, pos, c.data(), s.data());
    for (int i = 0; i < n_rot / 2; ++i) {
      const double th = plain_theta(pos, i, 10000.0, n_rot);
      EXPECT_NEAR(c[static_cast<size_t>(i)], std::cos(th), 2e-4) << pos << " " << i;
      EXPECT_NEAR(s[static_cast<size_t>(i)], std::sin(th), 2e-4) << pos << " " << i;
    }
  }
}

TEST(RopeAngles, LinearScalingDividesTheAngle) {
  RopeParams r;
  r.freq_scale = 0.25f;  // factor 4
  const int n_rot = 8;
  std::vector<float> c(4), s(4);
  rope_angles(r, n_rot, nullptr, 40, c.data(), s.data());
  for (int i = 0; i < 4; ++i)
    EXPECT_NEAR(c[static_cast<size_t>(i)], std::cos(plain_theta(40, i, 10000.0, n_rot) / 4), 1e-5);
}

TEST(RopeAngles, FrequencyFactorsDivideEachPair) {
  RopeParams r;
  const int n_rot = 8;
  const std::vector<float> factors = {1.0f, 2.0f, 4.0f, 8.0f};
  std::vector<float> c(4), s(4);
  rope_angles(r, n_rot, factors.data(), 9, c.data(), s.data());
  for (int i = 0; i < 4; ++i)
    EXPECT_NEAR(s[static_cast<size_t>(i)],
                std::sin(plain_theta(9, i, 10000.0, n_rot) / factors[static_cast<size_t>(i)]),
                1e-5);
}

TEST(RopeAngles, YarnRampsBetweenInterpolationAndExtrapolation) {
  RopeParams r;
  r.freq_base = 10000.0f;
  r.freq_scale = 0.125f;  // factor 8
  r.yarn_ext_factor = 1.0f;
  r.n_ctx_orig = 4096;
  r.attn_factor = 1.0f;
  const int n_rot = 128, pos = 3000;
  std::vector<float> c(n_rot / 2), s(n_rot / 2);
  rope_angles(r, n_rot, nullptr, pos, c.data(), s.data());
  // Independent evaluation of quantization-free YaRN (gguf-and-models.md 4.4.3).
  const auto corr = [&](double beta) {
    return n_rot * std::log(4096.0 / (beta * 2 * std::numbers::pi)) / (2 * std::log(10000.0));
  };
  const double lo = std::max(0.0, std::floor(corr(32.0))),
               hi = std::min(n_rot - 1.0, std::ceil(corr(1.0)));
  const double mscale = 1.0 + 0.1 * std::log(8.0);
  for (int i = 0; i < n_rot / 2; ++i) {
    const double extrap = plain_theta(pos, i, 10000.0, n_rot), interp = extrap / 8.0;
    const double ramp = 1.0 - std::clamp((i - lo) / std::max(0.001, hi - lo), 0.0, 1.0);
    const double theta = interp * (1 - ramp) + extrap * ramp;
    EXPECT_NEAR(c[static_cast<size_t>(i)], std::cos(theta) * mscale, 2e-3) << i;
    EXPECT_NEAR(s[static_cast<size_t>(i)], std::sin(theta) * mscale, 2e-3) << i;
  }
  // The fastest pairs extrapolate (keep the full angle), the slowest interpolate.
  EXPECT_NEAR(s[0], std::sin(static_cast<double>(pos)) * mscale, 2e-3);
}

TEST(RopeApply, NormRotatesAdjacentPairsNeoxRotatesHalves) {
  const std::vector<float> c = {0.0f, 1.0f},
                           s = {1.0f, 0.0f};  // pair 0 by 90 degrees, pair 1 not at all
  std::vector<float> norm = {1, 2, 3, 4, 5}, neox = {1, 2, 3, 4, 5};
  rope_apply(RopeKind::kNorm, norm.data(), c.data(), s.data(), 4);
  rope_apply(RopeKind::kNeox, neox.data(), c.data(), s.data(), 4);
  EXPECT_EQ(norm, (std::vector<float>{-2, 1, 3, 4, 5}));  // (x0, x1) -> (-x1, x0); dim 4 untouched
  EXPECT_EQ(neox, (std::vector<float>{-3, 2, 1, 4, 5}));  // (x0, x2) -> (-x2, x0)
}

// The reference's sections (ggml's mrope cache): contiguous for qwen2vl ([16, 24, 24, 0] of
// 64 pairs: 0-15 time, 16-39 height, 40-63 width), interleaved for qwen3vl ([24, 20, 20, 0]:
// t, h, w in turn, the pairs past 3 * 20 of h and w to the extra component; pairs 61 and 62
// are extra), and wrapping when the sections cover fewer pairs than the head has.
TEST(MultiRope, SectionsAssignPairsAsTheReference) {
  const std::array<int32_t, 4> qwen2vl = {16, 24, 24, 0};
  EXPECT_EQ(mrope_component(qwen2vl, false, 0), 0);
  EXPECT_EQ(mrope_component(qwen2vl, false, 15), 0);
  EXPECT_EQ(mrope_component(qwen2vl, false, 16), 1);
  EXPECT_EQ(mrope_component(qwen2vl, false, 39), 1);
  EXPECT_EQ(mrope_component(qwen2vl, false, 40), 2);
  EXPECT_EQ(mrope_component(qwen2vl, false, 63), 2);
  const std::array<int32_t, 4> qwen3vl = {24, 20, 20, 0};
  const int32_t expected[] = {0, 1, 2, 0, 1, 2};
  for (int32_t i = 0; i < 6; ++i) EXPECT_EQ(mrope_component(qwen3vl, true, i), expected[i]);
  EXPECT_EQ(mrope_component(qwen3vl, true, 58), 1);
  EXPECT_EQ(mrope_component(qwen3vl, true, 59), 2);
  EXPECT_EQ(mrope_component(qwen3vl, true, 60), 0);
  EXPECT_EQ(mrope_component(qwen3vl, true, 61), 3);
  EXPECT_EQ(mrope_component(qwen3vl, true, 62), 3);
  EXPECT_EQ(mrope_component(qwen3vl, true, 63), 0);
  const std::array<int32_t, 4> short_sections = {1, 1, 1, 1};  // 4 pairs, then again
  EXPECT_EQ(mrope_component(short_sections, false, 3), 3);
  EXPECT_EQ(mrope_component(short_sections, false, 5), 1);
}

// Pair i takes the 1-D angle of its component's position at pair i, bit for bit (so a text
// row, all four components equal, is rotated exactly as by the 1-D rope).
TEST(MultiRope, EachPairTakesItsComponentsOneDimensionalAngle) {
  RopeParams r;
  r.freq_base = 10000.0f;
  const int32_t n_rot = 16;
  const std::array<int32_t, 4> sections = {4, 2, 2, 0};
  std::vector<uint8_t> component(n_rot / 2);
  for (int32_t i = 0; i < n_rot / 2; ++i)
    component[static_cast<size_t>(i)] = static_cast<uint8_t>(mrope_component(sections, true, i));
  const int32_t pos[4] = {7, 9, 12, 0};
  std::vector<float> c(n_rot / 2), s(n_rot / 2);
  mrope_angles(r, n_rot, nullptr, pos, component.data(), c.data(), s.data());
  std::vector<float> c1(n_rot / 2), s1(n_rot / 2);
  for (int32_t i = 0; i < n_rot / 2; ++i) {
    rope_angles(r, n_rot, nullptr, pos[component[static_cast<size_t>(i)]], c1.data(), s1.data());
    EXPECT_EQ(c[static_cast<size_t>(i)], c1[static_cast<size_t>(i)]) << i;
    EXPECT_EQ(s[static_cast<size_t>(i)], s1[static_cast<size_t>(i)]) << i;
  }
  EXPECT_EQ(component[7], 3);  // pair 7 of [4, 2, 2, 0] interleaved is the extra component
  EXPECT_EQ(c[7], 1.0f);       // at position 0
}

TEST(Swiglu, SiluTimesUp) {
  const std::vector<float> g = {0.0f, 1.0f, -3.0f}, u = {5.0f, 2.0f, 1.0f};
  std::vector<float> out(3);
  swiglu(g.data(), u.data(), out.data(), 3);
  for (size_t i = 0; i < 3; ++i) EXPECT_NEAR(out[i], g[i] / (1 + std::exp(-g[i])) * u[i], 1e-6);
}

}  // namespace
}  // namespace hearth::engine::ops

namespace hearth::engine::ops {
namespace {

// The encoders' LayerNorm: mean 0 and variance 1 before the affine part, then w and b.
TEST(LayerNorm, NormalizesThenScalesAndShifts) {
  const std::vector<float> x = {1.0f, 2.0f, 4.0f, 9.0f};
  const std::vector<float> w = {1.0f, 2.0f, 0.5f, 1.0f}, b = {0.0f, 1.0f, -1.0f, 0.25f};
  std::vector<float> y(4);
  layer_norm(x.data(), w.data(), b.data(), y.data(), 4, 1e-12f);
  const double mean = 4.0, var = (9.0 + 4.0 + 0.0 + 25.0) / 4.0;
  for (size_t i = 0; i < 4; ++i)
    EXPECT_NEAR(y[i], (x[i] - mean) / std::sqrt(var) * w[i] + b[i], 1e-6) << i;
  std::vector<float> in_place = x;
  layer_norm(in_place.data(), w.data(), nullptr, in_place.data(), 4, 1e-12f);
  for (size_t i = 0; i < 4; ++i) EXPECT_NEAR(in_place[i], y[i] - b[i], 1e-6) << "no bias";
}

// GELU as the reference computes it: the tanh form at the input rounded to f16, the result
// rounded to f16; 0 at -10 and below, the identity at 10 and above.
TEST(Gelu, TanhFormThroughHalfPrecision) {
  const std::vector<float> x = {-12.0f, -10.0f, -3.0f, -0.5f, 0.0f, 0.3f,
                                1.0f,   2.5f,   9.99f, 10.0f, 17.0f};
  std::vector<float> y(x.size());
  gelu(x.data(), y.data(), static_cast<int64_t>(x.size()));
  for (size_t i = 0; i < x.size(); ++i) {
    const float h = f16_to_f32(f32_to_f16(x[i]));
    const float exact =
        0.5f * h * (1.0f + std::tanh(0.7978845608f * h * (1.0f + 0.044715f * h * h)));
    const float want = x[i] <= -10.0f ? 0.0f : x[i] >= 10.0f ? x[i] : f16_to_f32(f32_to_f16(exact));
    EXPECT_EQ(y[i], want) << x[i];
  }
  EXPECT_NEAR(y[6], 0.8412f, 1e-3) << "gelu(1)";
}

}  // namespace
}  // namespace hearth::engine::ops
