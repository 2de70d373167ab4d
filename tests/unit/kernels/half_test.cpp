// f16/bf16 conversions of base/half.h against brute-force references computed in double.
#include "base/half.h"

#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>

namespace hearth {
namespace {

// The exact value of an f16 pattern, from the IEEE definition.
double f16_value(uint16_t h) {
  const int e = (h >> 10) & 31;
  const int m = h & 1023;
  const double sign = (h & 0x8000) ? -1.0 : 1.0;
  if (e == 0) return sign * std::ldexp(m, -24);
  return sign * std::ldexp(1024 + m, e - 25);
}

// Round to nearest even by counting quanta in double (exact for every f32 input).
uint16_t reference_f32_to_f16(float f) {
  const uint16_t sign = std::signbit(f) ? 0x8000 : 0;
  if (std::isnan(f)) return sign | 0x7E00;
  const double a = std::fabs(static_cast<double>(f));
  if (a >= 65520.0) return sign | 0x7C00;  // at or past the midpoint above 65504
  int e = 0;
  std::frexp(a, &e);  // a = m * 2^e, m in [0.5, 1)
  const bool subnormal = a < std::ldexp(1.0, -14);
  const double quantum = subnormal ? std::ldexp(1.0, -24) : std::ldexp(1.0, e - 1 - 10);
  const double k = a / quantum;
  auto n = static_cast<uint32_t>(std::floor(k));
  const double rem = k - std::floor(k);
  if (rem > 0.5 || (rem == 0.5 && (n & 1u))) ++n;
  if (subnormal) return static_cast<uint16_t>(sign | n);  // n == 1024 is 2^-14, still right
  return static_cast<uint16_t>(sign + (static_cast<uint32_t>(e - 1 + 15) << 10) + (n - 1024));
}

TEST(Half, F16ToF32MatchesDefinitionForAllPatterns) {
  for (uint32_t h = 0; h < 65536; ++h) {
    const float f = f16_to_f32(static_cast<uint16_t>(h));
    const int e = (h >> 10) & 31;
    if (e == 31) {
      const uint32_t want = ((h & 0x8000u) << 16) | 0x7F800000u | ((h & 0x3FFu) << 13);
      ASSERT_EQ(std::bit_cast<uint32_t>(f), want) << std::hex << h;
    } else {
      ASSERT_EQ(static_cast<double>(f), f16_value(static_cast<uint16_t>(h))) << std::hex << h;
      ASSERT_EQ(std::signbit(f), (h & 0x8000u) != 0) << std::hex << h;
    }
  }
}

TEST(Half, F16RoundTripIsExact) {
  for (uint32_t h = 0; h < 65536; ++h) {
    const auto bits = static_cast<uint16_t>(h);
    const uint16_t back = f32_to_f16(f16_to_f32(bits));
    if (((h >> 10) & 31) == 31 && (h & 0x3FF) != 0) {
      ASSERT_EQ(back, (h & 0x8000u) | 0x7E00u) << std::hex << h;  // NaN: canonical quiet
    } else {
      ASSERT_EQ(back, bits) << std::hex << h;
    }
  }
}

TEST(Half, F32ToF16TrickyValues) {
  struct Case {
    float f;
    uint16_t want;
  };
  const Case cases[] = {
      {0.0f, 0x0000},
      {-0.0f, 0x8000},
      {1.0f, 0x3C00},
      {1.0f + 0x1p-11f, 0x3C00},      // tie, even stays down
      {1.0f + 3 * 0x1p-11f, 0x3C02},  // tie, odd goes up
      {1.0f + 0x1p-11f + 0x1p-20f, 0x3C01},
      {65504.0f, 0x7BFF},
      {65519.99f, 0x7BFF},
      {65520.0f, 0x7C00},  // tie between max and the next (infinite) step: to even = inf
      {-65520.0f, 0xFC00},
      {1e10f, 0x7C00},
      {INFINITY, 0x7C00},
      {-INFINITY, 0xFC00},
      {0x1p-24f, 0x0001},
      {0x1p-25f, 0x0000},  // tie between 0 and the smallest subnormal
      {0x1p-25f + 0x1p-40f, 0x0001},
      {3 * 0x1p-25f, 0x0002},  // tie between 1 and 2 subnormal steps
      {5 * 0x1p-25f, 0x0002},  // tie between 2 and 3
      {0x1p-14f, 0x0400},
      {0x1p-14f - 0x1p-25f, 0x0400},      // tie between the largest subnormal and 2^-14
      {0x1p-14f - 3 * 0x1p-25f, 0x03FE},  // tie between 1022 and 1023 steps: even
      {0x1p-14f - 0x1p-24f, 0x03FF},      // the largest subnormal, exact
      {1e-30f, 0x0000},
      {-1e-30f, 0x8000},
      {std::numeric_limits<float>::denorm_min(), 0x0000},
      {std::bit_cast<float>(0x7FC00001u), 0x7E00},
      {std::bit_cast<float>(0xFF800001u), 0xFE00},
  };
  for (const Case& c : cases) {
    EXPECT_EQ(f32_to_f16(c.f), c.want) << c.f;
    EXPECT_EQ(reference_f32_to_f16(c.f), c.want) << c.f;  // the reference agrees
  }
}

// Every f32 whose low 13 bits are a rounding-critical pattern (exact, just below, at and
// just above the f16 midpoint), for every sign/exponent/upper-mantissa combination.
TEST(Half, F32ToF16MatchesReferenceOnSweep) {
  const uint32_t lows[] = {0x0000, 0x0001, 0x0FFF, 0x1000, 0x1001, 0x1FFF};
  for (uint32_t hi = 0; hi < (1u << 19); ++hi) {
    for (uint32_t low : lows) {
      const uint32_t bits = (hi << 13) | low;
      const float f = std::bit_cast<float>(bits);
      ASSERT_EQ(f32_to_f16(f), reference_f32_to_f16(f)) << std::hex << bits;
    }
  }
}

// Round to nearest even among the two bf16 neighbours, by distance in double; the step
// past the largest finite value counts as 2^128 (so overflow rounds to inf).
uint16_t reference_f32_to_bf16(float f) {
  const uint32_t bits = std::bit_cast<uint32_t>(f);
  if (std::isnan(f)) return static_cast<uint16_t>((bits >> 16) | 0x40);
  if (std::isinf(f)) return static_cast<uint16_t>(bits >> 16);
  const uint32_t lo = bits & 0xFFFF0000u;
  const uint32_t hi = lo + 0x10000u;
  const double a = std::fabs(static_cast<double>(f));
  const double vlo = std::fabs(static_cast<double>(std::bit_cast<float>(lo)));
  const double vhi = (hi & 0x7FFFFFFFu) == 0x7F800000u
                         ? std::ldexp(1.0, 128)
                         : std::fabs(static_cast<double>(std::bit_cast<float>(hi)));
  if (a - vlo < vhi - a) return static_cast<uint16_t>(lo >> 16);
  if (a - vlo > vhi - a) return static_cast<uint16_t>(hi >> 16);
  return static_cast<uint16_t>(((lo >> 16) & 1u) ? hi >> 16 : lo >> 16);
}

TEST(Half, Bf16RoundTripAndRounding) {
  for (uint32_t h = 0; h < 65536; ++h) {
    const auto bits = static_cast<uint16_t>(h);
    const float f = bf16_to_f32(bits);
    ASSERT_EQ(std::bit_cast<uint32_t>(f), h << 16);
    const bool nan = ((h >> 7) & 0xFF) == 0xFF && (h & 0x7F) != 0;
    ASSERT_EQ(f32_to_bf16(f), nan ? (bits | 0x40) : bits) << std::hex << h;
    if (nan) continue;
    for (uint32_t low : {0x0001u, 0x7FFFu, 0x8000u, 0x8001u, 0xFFFFu}) {
      const float g = std::bit_cast<float>((h << 16) | low);
      if (std::isnan(g)) continue;
      ASSERT_EQ(f32_to_bf16(g), reference_f32_to_bf16(g)) << std::hex << ((h << 16) | low);
    }
  }
  EXPECT_EQ(f32_to_bf16(std::bit_cast<float>(0x3F808000u)), 0x3F80);  // tie, even
  EXPECT_EQ(f32_to_bf16(std::bit_cast<float>(0x3F818000u)), 0x3F82);  // tie, odd -> up
  EXPECT_EQ(f32_to_bf16(std::bit_cast<float>(0x7F7FFFFFu)), 0x7F80);  // overflow -> inf
  EXPECT_EQ(f32_to_bf16(std::bit_cast<float>(0x7F800001u)), 0x7FC0);  // signalling NaN quieted
}

}  // namespace
}  // namespace hearth
