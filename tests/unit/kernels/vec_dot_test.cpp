// vec_dot of every weight type against the independent model in dot_reference.h: on
// random rows to float rounding (quantization.md §12.3), and exactly on integer data where
// every float operation of the reference arithmetic is exact, so the integer parts (code
// products, sub-block scales, bsums min terms) are checked bit for bit.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <string>
#include <vector>

#include "base/half.h"
#include "base/tensor_type.h"
#include "dot_reference.h"
#include "integer_data.h"
#include "kernels/kernel_table.h"
#include "kernels/quant.h"
#include "test_util.h"

namespace hearth::kernels {
namespace {

struct TypeCase {
  TensorType type;
  TensorType vec_dot_type;  // quantization.md §2
};

const TypeCase kCases[] = {
    {TensorType::kF32, TensorType::kF32},     {TensorType::kF16, TensorType::kF16},
    {TensorType::kBF16, TensorType::kBF16},   {TensorType::kQ8_0, TensorType::kQ8_0},
    {TensorType::kQ4_0, TensorType::kQ8_0},   {TensorType::kQ4_1, TensorType::kQ8_1},
    {TensorType::kQ5_0, TensorType::kQ8_0},   {TensorType::kQ5_1, TensorType::kQ8_1},
    {TensorType::kQ2_K, TensorType::kQ8_K},   {TensorType::kQ3_K, TensorType::kQ8_K},
    {TensorType::kQ4_K, TensorType::kQ8_K},   {TensorType::kQ5_K, TensorType::kQ8_K},
    {TensorType::kQ6_K, TensorType::kQ8_K},   {TensorType::kIQ4_NL, TensorType::kQ8_0},
    {TensorType::kIQ4_XS, TensorType::kQ8_K}, {TensorType::kMXFP4, TensorType::kQ8_0},
};

std::vector<uint8_t> encode(TensorType type, const std::vector<float>& x) {
  std::vector<uint8_t> out(row_bytes(traits_of(type), x.size()));
  quantize_row(type, x.data(), out.data(), static_cast<int64_t>(x.size()));
  return out;
}

std::vector<uint8_t> convert(TensorType act, const std::vector<float>& x) {
  std::vector<uint8_t> out(row_bytes(traits_of(act), x.size()));
  reference_kernels(act).from_float(x.data(), out.data(), static_cast<int64_t>(x.size()));
  return out;
}

float vec_dot(TensorType type, const std::vector<uint8_t>& w, const std::vector<uint8_t>& a,
              int64_t n) {
  return reference_kernels(type).vec_dot(w.data(), a.data(), n);
}

TEST(VecDot, TableFollowsTheSpecVecDotTypes) {
  for (const TypeCase& c : kCases) {
    const TypeKernels& k = reference_kernels(c.type);
    EXPECT_EQ(k.vec_dot_type, c.vec_dot_type) << tensor_type_name(c.type);
    EXPECT_NE(k.vec_dot, nullptr) << tensor_type_name(c.type);
    EXPECT_NE(reference_kernels(k.vec_dot_type).from_float, nullptr) << tensor_type_name(c.type);
    EXPECT_EQ(active_kernels(c.type).vec_dot_type, c.vec_dot_type) << tensor_type_name(c.type);
    EXPECT_NE(active_kernels(c.type).vec_dot, nullptr) << tensor_type_name(c.type);
  }
  EXPECT_EQ(reference_kernels(TensorType::kQ8_K).vec_dot, nullptr);
  EXPECT_EQ(reference_kernels(TensorType::kQ8_1).vec_dot, nullptr);
}

// Random weights and activations whose blocks span a range of magnitudes: vec_dot equals
// the double-precision product of the dequantized operands to 1e-5 of sum |w * a|.
TEST(VecDot, MatchesDequantizedProductOnRandomRows) {
  constexpr int64_t kCols = 768;
  for (const TypeCase& c : kCases) {
    SCOPED_TRACE(std::string(tensor_type_name(c.type)));
    for (uint32_t seed = 1; seed <= 6; ++seed) {
      const auto w = encode(c.type, test::gaussian(kCols, 100 + seed, 0.05f * seed));
      auto x = test::gaussian(kCols, 200 + seed);
      for (int64_t i = 0; i < kCols; ++i) {
        x[static_cast<size_t>(i)] *= std::ldexp(1.0f, static_cast<int>((i / 32 + seed) % 7) - 3);
      }
      const auto a = convert(c.vec_dot_type, x);
      const auto want = test::reference_dot(c.type, w.data(), c.vec_dot_type, a.data(), kCols);
      EXPECT_NEAR(vec_dot(c.type, w, a, kCols), want.value, 1e-5 * want.abs_sum) << "seed " << seed;
    }
  }
}

// Activations in [-3, 3] with 127 opening every 32 values: every Q8_0/Q8_1 block gets
// d = 1 and every Q8_K block d = -1, so the conversion is exact, and all partial sums stay
// below 2^24, where f32 holds integers exactly.
TEST(VecDot, IntegerDataGivesExactSums) {
  constexpr int64_t kCols = 512;
  for (const TypeCase& c : kCases) {
    SCOPED_TRACE(std::string(tensor_type_name(c.type)));
    for (uint32_t seed = 1; seed <= 4; ++seed) {
      const auto w = test::integer_weights(c.type, kCols, 300 + seed);
      std::vector<float> x(kCols);
      const auto r = test::random_bytes(kCols, 400 + seed);
      for (size_t i = 0; i < x.size(); ++i) {
        x[i] = i % 32 == 0 ? 127.0f : static_cast<float>(r[i] % 7) - 3.0f;
      }
      const auto a = convert(c.vec_dot_type, x);
      const auto want = test::reference_dot(c.type, w.data(), c.vec_dot_type, a.data(), kCols);
      ASSERT_LT(want.abs_sum, 0x1p24);
      EXPECT_EQ(vec_dot(c.type, w, a, kCols), static_cast<float>(want.value)) << "seed " << seed;
      EXPECT_EQ(want.value, std::nearbyint(want.value));
    }
  }
}

// The weight row is read in place from any byte offset.
TEST(VecDot, MisalignedWeightRowsGiveTheSameResult) {
  constexpr int64_t kCols = 256;
  for (const TypeCase& c : kCases) {
    SCOPED_TRACE(std::string(tensor_type_name(c.type)));
    const auto w = encode(c.type, test::gaussian(kCols, 7));
    const auto a = convert(c.vec_dot_type, test::gaussian(kCols, 8));
    std::vector<uint8_t> shifted(w.size() + 3);
    std::memcpy(shifted.data() + 3, w.data(), w.size());
    const float aligned = vec_dot(c.type, w, a, kCols);
    const float moved = reference_kernels(c.type).vec_dot(shifted.data() + 3, a.data(), kCols);
    EXPECT_TRUE(test::same_float(aligned, moved));
  }
}

}  // namespace
}  // namespace hearth::kernels
