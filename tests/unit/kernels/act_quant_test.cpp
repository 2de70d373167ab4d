// Activation quantizers (the from_float entries of the dispatch table) against blocks
// computed by hand from quantization.md §4.2: round-half-even ties, all-zero blocks, the
// sign of Q8_K's scale, bsums, and Q8_1's sum field.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <iterator>
#include <vector>

#include "base/half.h"
#include "base/tensor_type.h"
#include "kernels/block_formats.h"
#include "kernels/kernel_table.h"
#include "test_util.h"

namespace hearth::kernels {
namespace {

std::vector<uint8_t> convert(TensorType act, const std::vector<float>& x) {
  const QuantizeRowFn fn = reference_kernels(act).from_float;
  EXPECT_NE(fn, nullptr) << tensor_type_name(act);
  std::vector<uint8_t> out(row_bytes(traits_of(act), x.size()));
  if (fn != nullptr) fn(x.data(), out.data(), static_cast<int64_t>(x.size()));
  return out;
}

template <typename Block>
Block block_at(const std::vector<uint8_t>& bytes, size_t i) {
  Block b;
  std::memcpy(&b, bytes.data() + i * sizeof(Block), sizeof(Block));
  return b;
}

std::vector<float> padded(std::initializer_list<float> head, size_t n) {
  std::vector<float> x(head);
  x.resize(n, 0.0f);
  return x;
}

TEST(ActQuant, EveryActivationFormatHasAConverter) {
  for (TensorType t : {TensorType::kF32, TensorType::kF16, TensorType::kBF16, TensorType::kQ8_0,
                       TensorType::kQ8_1, TensorType::kQ8_K}) {
    EXPECT_NE(reference_kernels(t).from_float, nullptr) << tensor_type_name(t);
    EXPECT_NE(active_kernels(t).from_float, nullptr) << tensor_type_name(t);
  }
  EXPECT_EQ(reference_kernels(TensorType::kQ4_0).from_float, nullptr);
  EXPECT_EQ(reference_kernels(TensorType::kQ4_K).from_float, nullptr);
}

TEST(ActQuant, Q8_0TiesRoundToEven) {
  // amax 127: d = 1, id = 127/127 = 1, so q = the value rounded half to even (the weight
  // quantizer's roundf would send 0.5, 2.5 and 126.5 away from zero).
  const auto x =
      padded({127.0f, 0.5f, 1.5f, 2.5f, -0.5f, -1.5f, -2.5f, 126.5f, -126.5f, -127.0f}, 32);
  const auto b = block_at<BlockQ8_0>(convert(TensorType::kQ8_0, x), 0);
  EXPECT_EQ(b.d, 0x3C00);
  const int8_t want[10] = {127, 0, 2, 2, 0, -2, -2, 126, -126, -127};
  for (int j = 0; j < 10; ++j) EXPECT_EQ(b.qs[j], want[j]) << j;
  for (int j = 10; j < 32; ++j) EXPECT_EQ(b.qs[j], 0) << j;
}

TEST(ActQuant, Q8_0ScalesBy127OverAmaxNotOneOverD) {
  // amax 0.171875: 127/amax rounds up to 738.90912 and 0.0859375 (amax/2) lands on 63.5,
  // a tie that goes to 64; 1/d is 738.90906 and would give 63. d = f16(amax/127) = 0x158B.
  const auto x = padded({0.171875f, 0.0859375f, -0.171875f}, 32);
  const auto b = block_at<BlockQ8_0>(convert(TensorType::kQ8_0, x), 0);
  EXPECT_EQ(b.d, 0x158B);
  EXPECT_EQ(b.qs[0], 127);
  EXPECT_EQ(b.qs[1], 64);
  EXPECT_EQ(b.qs[2], -127);
  // amax 2 (negative): id = 63.5, 1 -> 63.5 -> 64, 0.5 -> 31.75 -> 32; d = f16(2/127).
  const auto y = padded({-2.0f, 1.0f, 0.5f, -1.0f}, 32);
  const auto c = block_at<BlockQ8_0>(convert(TensorType::kQ8_0, y), 0);
  EXPECT_EQ(c.d, 0x2408);
  EXPECT_EQ(c.qs[0], -127);
  EXPECT_EQ(c.qs[1], 64);
  EXPECT_EQ(c.qs[2], 32);
  EXPECT_EQ(c.qs[3], -64);
}

TEST(ActQuant, Q8_0AllZeroBlock) {
  std::vector<float> x(64, 0.0f);
  x[40] = 3.0f;  // the second block is not zero; the first must not see it
  const auto bytes = convert(TensorType::kQ8_0, x);
  const auto b = block_at<BlockQ8_0>(bytes, 0);
  EXPECT_EQ(b.d, 0);
  for (int j = 0; j < 32; ++j) EXPECT_EQ(b.qs[j], 0);
  EXPECT_EQ(block_at<BlockQ8_0>(bytes, 1).qs[8], 127);
}

TEST(ActQuant, Q8_1CarriesTheScaledSum) {
  // Block 0: d = 1, q = {127, 0, 2, 2, -3}, sum 128, s = f16(128) = 0x5800.
  // Block 1: amax 1, d = f32(1/127), id = 127: q = {127, 64 (63.5), -32 (-31.75)}, sum 159,
  // d16 = 0x2008 and s = f16(d * 159) = f16(1.2519685) = 0x3D02.
  std::vector<float> x = padded({127.0f, 0.5f, 1.5f, 2.5f, -3.0f}, 32);
  const auto second = padded({1.0f, 0.5f, -0.25f}, 32);
  x.insert(x.end(), second.begin(), second.end());
  const auto bytes = convert(TensorType::kQ8_1, x);
  const auto b0 = block_at<BlockQ8_1>(bytes, 0);
  EXPECT_EQ(b0.d, 0x3C00);
  EXPECT_EQ(b0.s, 0x5800);
  EXPECT_EQ(b0.qs[2], 2);
  EXPECT_EQ(b0.qs[3], 2);
  const auto b1 = block_at<BlockQ8_1>(bytes, 1);
  EXPECT_EQ(b1.d, 0x2008);
  EXPECT_EQ(b1.s, 0x3D02);
  EXPECT_EQ(b1.qs[0], 127);
  EXPECT_EQ(b1.qs[1], 64);
  EXPECT_EQ(b1.qs[2], -32);
  // s rounds d * sum with d in f32: amax 0.3 and q = {127, -127, 3} give sum 3 and
  // s = f16(3 * f32(0.3/127)) = 0x1F42, where the f16 d (0x18D6) would give 0x1F41.
  const auto third = convert(TensorType::kQ8_1, padded({0.3f, -0.3f, 0.007f}, 32));
  const auto b2 = block_at<BlockQ8_1>(third, 0);
  EXPECT_EQ(b2.d, 0x18D6);
  EXPECT_EQ(b2.qs[2], 3);
  EXPECT_EQ(b2.s, 0x1F42);
  // Quants and d are those of Q8_0.
  const auto q8 = block_at<BlockQ8_0>(convert(TensorType::kQ8_0, second), 0);
  EXPECT_EQ(std::memcmp(q8.qs, b1.qs, 32), 0);
}

TEST(ActQuant, Q8_KTakesTheSignOfTheExtreme) {
  // The largest magnitude is negative (-2): iscale = -127 / -2 = 63.5, d = 1/63.5, and
  // values keep their sign.
  const auto neg = convert(TensorType::kQ8_K, padded({1.0f, -2.0f, 0.5f}, 256));
  const auto a = block_at<BlockQ8K>(neg, 0);
  EXPECT_EQ(a.d, 1.0f / 63.5f);
  EXPECT_EQ(a.qs[0], 64);  // 63.5 -> even
  EXPECT_EQ(a.qs[1], -127);
  EXPECT_EQ(a.qs[2], 32);  // 31.75
  // Positive extreme: iscale = -63.5, every sign flips and d is negative.
  const auto pos = convert(TensorType::kQ8_K, padded({1.0f, 2.0f, 0.5f}, 256));
  const auto b = block_at<BlockQ8K>(pos, 0);
  EXPECT_EQ(b.d, 1.0f / -63.5f);
  EXPECT_EQ(b.qs[0], -64);
  EXPECT_EQ(b.qs[1], -127);
  EXPECT_EQ(b.qs[2], -32);
  // Equal magnitudes: the first one decides the sign.
  const auto tie = block_at<BlockQ8K>(convert(TensorType::kQ8_K, padded({-3.0f, 3.0f}, 256)), 0);
  EXPECT_EQ(tie.qs[0], -127);
  EXPECT_EQ(tie.qs[1], 127);
  EXPECT_GT(tie.d, 0.0f);
}

TEST(ActQuant, Q8_KRoundsHalfToEvenAndSumsSixteens) {
  // Extreme -127: iscale = 1 and d = 1; the values are then rounded as they are.
  std::vector<float> x(256, 0.0f);
  const float head[] = {-127.0f, 0.5f, 1.5f, 2.5f, -0.5f, -1.5f, -2.5f, 3.49f, 127.0f};
  std::copy(std::begin(head), std::end(head), x.begin());
  for (int j = 16; j < 256; ++j) x[static_cast<size_t>(j)] = static_cast<float>(j % 7 - 3);
  const auto b = block_at<BlockQ8K>(convert(TensorType::kQ8_K, x), 0);
  EXPECT_EQ(b.d, 1.0f);
  const int8_t want[9] = {-127, 0, 2, 2, 0, -2, -2, 3, 127};
  for (int j = 0; j < 9; ++j) EXPECT_EQ(b.qs[j], want[j]) << j;
  EXPECT_EQ(b.bsums[0], -127 + 0 + 2 + 2 + 0 - 2 - 2 + 3 + 127);
  for (int g = 1; g < 16; ++g) {
    int want_sum = 0;
    for (int j = 16 * g; j < 16 * g + 16; ++j) want_sum += j % 7 - 3;
    EXPECT_EQ(b.bsums[g], want_sum) << g;
  }
}

TEST(ActQuant, Q8_KAllZeroBlock) {
  std::vector<float> x(512, 0.0f);
  x[300] = -5.0f;
  const auto bytes = convert(TensorType::kQ8_K, x);
  const auto b = block_at<BlockQ8K>(bytes, 0);
  EXPECT_EQ(b.d, 0.0f);
  for (int j = 0; j < 256; ++j) EXPECT_EQ(b.qs[j], 0);
  for (int g = 0; g < 16; ++g) EXPECT_EQ(b.bsums[g], 0);
  const auto c = block_at<BlockQ8K>(bytes, 1);
  EXPECT_EQ(c.qs[44], -127);
  EXPECT_EQ(c.bsums[2], -127);
}

TEST(ActQuant, FloatFormatsRoundToNearestEven) {
  const std::vector<float> x = {1.0f + 0x1p-11f, 1.0f + 3 * 0x1p-11f, 1.0f + 0x1p-8f,
                                1.0f + 3 * 0x1p-8f};
  const auto h = convert(TensorType::kF16, x);
  uint16_t v[4];
  std::memcpy(v, h.data(), 8);
  EXPECT_EQ(v[0], 0x3C00);  // tie to even: 1.0
  EXPECT_EQ(v[1], 0x3C02);  // tie to even: 1 + 2^-9
  const auto bf = convert(TensorType::kBF16, x);
  std::memcpy(v, bf.data(), 8);
  EXPECT_EQ(v[2], 0x3F80);  // 1 + 2^-8 is a tie: 1.0
  EXPECT_EQ(v[3], 0x3F82);  // 1 + 3 * 2^-8: up to 1 + 2^-6
  const auto f = convert(TensorType::kF32, x);
  EXPECT_EQ(std::memcmp(f.data(), x.data(), 16), 0);
}

// Independent transcription of §4.2 over random rows, including blocks of very different
// magnitudes.
TEST(ActQuant, MatchesSpecFormulasOnRandomRows) {
  auto x = test::gaussian(1024, 42);
  for (size_t i = 0; i < x.size(); ++i) x[i] *= std::ldexp(1.0f, static_cast<int>(i / 32 % 9) - 4);
  const auto q8 = convert(TensorType::kQ8_0, x);
  const auto q8k = convert(TensorType::kQ8_K, x);
  const auto q81 = convert(TensorType::kQ8_1, x);
  for (size_t blk = 0; blk < 32; ++blk) {
    const float* xb = x.data() + 32 * blk;
    float amax = 0.0f;
    for (int j = 0; j < 32; ++j) amax = std::fmax(amax, std::fabs(xb[j]));
    const auto b = block_at<BlockQ8_0>(q8, blk);
    ASSERT_EQ(b.d, f32_to_f16(amax / 127.0f));
    int sum = 0;
    for (int j = 0; j < 32; ++j) {
      ASSERT_EQ(b.qs[j], static_cast<int8_t>(std::nearbyint(xb[j] * (127.0f / amax)))) << blk;
      sum += b.qs[j];
    }
    const auto b1 = block_at<BlockQ8_1>(q81, blk);
    ASSERT_EQ(b1.d, b.d);
    ASSERT_EQ(std::memcmp(b1.qs, b.qs, 32), 0);
    ASSERT_EQ(b1.s, f32_to_f16(amax / 127.0f * static_cast<float>(sum))) << blk;
  }
  for (size_t blk = 0; blk < 4; ++blk) {
    const float* xb = x.data() + 256 * blk;
    float max = 0.0f;
    for (int j = 0; j < 256; ++j) {
      if (std::fabs(xb[j]) > std::fabs(max)) max = xb[j];
    }
    const float iscale = -127.0f / max;
    const auto b = block_at<BlockQ8K>(q8k, blk);
    ASSERT_EQ(b.d, 1.0f / iscale);
    for (int j = 0; j < 256; ++j) {
      ASSERT_EQ(b.qs[j], static_cast<int8_t>(std::nearbyint(iscale * xb[j]))) << blk;
    }
  }
}

}  // namespace
}  // namespace hearth::kernels
