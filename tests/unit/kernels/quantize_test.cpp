// quantize_row(): the closed-form quantizers byte for byte (hand-computed encodings and
// an independent transcription of quantization.md §3.9), and round-trip error bounds for
// every encoder.
#include <gtest/gtest.h>

#include <cfloat>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "base/half.h"
#include "base/tensor_type.h"
#include "kernels/quant.h"
#include "test_util.h"

namespace hearth::kernels {
namespace {

std::vector<uint8_t> quantize(TensorType type, const std::vector<float>& x) {
  const auto& t = traits_of(type);
  std::vector<uint8_t> out(row_bytes(t, x.size()));
  quantize_row(type, x.data(), out.data(), static_cast<int64_t>(x.size()));
  return out;
}

std::vector<float> dequantize(TensorType type, const std::vector<uint8_t>& bytes, size_t n) {
  std::vector<float> out(n);
  dequantize_row(type, bytes.data(), out.data(), static_cast<int64_t>(n));
  return out;
}

void put_f16(std::vector<uint8_t>& b, uint16_t h) {
  b.push_back(static_cast<uint8_t>(h & 0xFF));
  b.push_back(static_cast<uint8_t>(h >> 8));
}

// A 32-element block's nibbles from its codes: byte j = codes[j] | codes[j + 16] << 4.
void put_nibbles(std::vector<uint8_t>& b, const int* codes) {
  for (int j = 0; j < 16; ++j)
    b.push_back(static_cast<uint8_t>((codes[j] & 0xF) | ((codes[j + 16] & 0xF) << 4)));
}

void put_qh(std::vector<uint8_t>& b, const int* codes) {
  uint32_t qh = 0;
  for (int e = 0; e < 32; ++e) qh |= static_cast<uint32_t>((codes[e] >> 4) & 1) << e;
  for (int k = 0; k < 4; ++k) b.push_back(static_cast<uint8_t>(qh >> (8 * k)));
}

// Pads a hand-written prefix with `fill` to one 32-element block.
std::vector<float> block_of(std::initializer_list<float> head, float fill = 0.0f) {
  std::vector<float> x(head);
  x.resize(32, fill);
  return x;
}

TEST(Quantize, HandlesTheListedTypes) {
  for (TensorType t :
       {TensorType::kF32, TensorType::kF16, TensorType::kBF16, TensorType::kQ8_0, TensorType::kQ4_0,
        TensorType::kQ4_1, TensorType::kQ5_0, TensorType::kQ5_1, TensorType::kQ2_K,
        TensorType::kQ3_K, TensorType::kQ4_K, TensorType::kQ5_K, TensorType::kQ6_K,
        TensorType::kIQ4_NL, TensorType::kIQ4_XS, TensorType::kMXFP4}) {
    EXPECT_TRUE(can_quantize(t)) << tensor_type_name(t);
  }
  EXPECT_FALSE(can_quantize(TensorType::kQ8_K));
  EXPECT_FALSE(can_quantize(TensorType::kIQ2_XXS));
}

TEST(Quantize, Q8_0RampAndTies) {
  // amax 127 gives d = 1 exactly; roundf sends ties away from zero.
  std::vector<float> ramp(32);
  for (int j = 0; j < 32; ++j) ramp[j] = static_cast<float>(-127 + 8 * j);
  std::vector<uint8_t> want;
  put_f16(want, 0x3C00);
  for (int j = 0; j < 32; ++j)
    want.push_back(static_cast<uint8_t>(static_cast<int8_t>(-127 + 8 * j)));
  EXPECT_EQ(quantize(TensorType::kQ8_0, ramp), want);

  const auto ties =
      block_of({127.0f, -127.0f, 0.5f, -0.5f, 1.5f, -1.5f, 2.5f, 63.5f, -63.5f, 126.5f});
  const int codes[10] = {127, -127, 1, -1, 2, -2, 3, 64, -64, 127};
  want.clear();
  put_f16(want, 0x3C00);
  for (int j = 0; j < 32; ++j)
    want.push_back(static_cast<uint8_t>(static_cast<int8_t>(j < 10 ? codes[j] : 0)));
  EXPECT_EQ(quantize(TensorType::kQ8_0, ties), want);

  // An all-zero block: d = 0 and zero codes.
  EXPECT_EQ(quantize(TensorType::kQ8_0, block_of({})), std::vector<uint8_t>(34, 0));
}

TEST(Quantize, Q4_0TiesAndSignOfTheExtreme) {
  // The extreme -8 gives d = 1; codes are trunc(x + 8.5) capped at 15 (ties go up).
  auto x = block_of({-8.0f, 7.0f, 0.5f, -0.5f, 7.5f, -7.5f, 1.49f, 3.0f});
  int codes[32];
  for (int& c : codes) c = 8;
  const int head[8] = {0, 15, 9, 8, 15, 1, 9, 11};
  std::copy(head, head + 8, codes);
  std::vector<uint8_t> want;
  put_f16(want, 0x3C00);
  put_nibbles(want, codes);
  EXPECT_EQ(quantize(TensorType::kQ4_0, x), want);

  // 8 before -8: the first extreme wins, d = -1, and -8 clips to code 15 (value -7).
  x = block_of({8.0f, -8.0f, 0.5f, -0.5f});
  const int head2[4] = {0, 15, 8, 9};
  for (int& c : codes) c = 8;
  std::copy(head2, head2 + 4, codes);
  want.clear();
  put_f16(want, 0xBC00);
  put_nibbles(want, codes);
  EXPECT_EQ(quantize(TensorType::kQ4_0, x), want);
  const auto y = dequantize(TensorType::kQ4_0, want, 32);
  EXPECT_EQ(y[0], 8.0f);
  EXPECT_EQ(y[1], -7.0f);
  EXPECT_EQ(y[3], -1.0f);
}

TEST(Quantize, Q4_1AndQ5_xKnownEncodings) {
  // Q4_1: min -1, max 14 -> d = 1, m = -1; code = trunc(x + 1 + 0.5).
  auto x = block_of({-1.0f, 14.0f, 0.5f, -0.5f, 13.6f}, 0.0f);
  int codes[32];
  for (int& c : codes) c = 1;
  const int q41[5] = {0, 15, 2, 1, 15};
  std::copy(q41, q41 + 5, codes);
  std::vector<uint8_t> want;
  put_f16(want, 0x3C00);
  put_f16(want, 0xBC00);
  put_nibbles(want, codes);
  EXPECT_EQ(quantize(TensorType::kQ4_1, x), want);

  // Q5_0: extreme -16 -> d = 1; code = min(31, trunc(x + 16.5)).
  x = block_of({-16.0f, 15.0f, 15.6f, 0.5f, -0.5f, 3.2f});
  for (int& c : codes) c = 16;
  const int q50[6] = {0, 31, 31, 17, 16, 19};
  std::copy(q50, q50 + 6, codes);
  want.clear();
  put_f16(want, 0x3C00);
  put_qh(want, codes);
  put_nibbles(want, codes);
  EXPECT_EQ(quantize(TensorType::kQ5_0, x), want);

  // Q5_1: min 0, max 31 -> d = 1, m = 0; code = trunc(x + 0.5).
  x = block_of({0.0f, 31.0f, 0.5f, 1.5f, 30.49f, 16.0f});
  for (int& c : codes) c = 0;
  const int q51[6] = {0, 31, 1, 2, 30, 16};
  std::copy(q51, q51 + 6, codes);
  want.clear();
  put_f16(want, 0x3C00);
  put_f16(want, 0x0000);
  put_qh(want, codes);
  put_nibbles(want, codes);
  EXPECT_EQ(quantize(TensorType::kQ5_1, x), want);
}

// quantization.md §3.9 transcribed as directly as possible, for comparison on random data.
std::vector<uint8_t> spec_quantize(TensorType type, const std::vector<float>& x) {
  std::vector<uint8_t> out;
  for (size_t b = 0; b < x.size(); b += 32) {
    const float* v = x.data() + b;
    float amax = 0.0f, max = 0.0f, lo = FLT_MAX, hi = -FLT_MAX;
    for (int j = 0; j < 32; ++j) {
      if (amax < std::fabs(v[j])) {
        amax = std::fabs(v[j]);
        max = v[j];
      }
      lo = std::min(lo, v[j]);
      hi = std::max(hi, v[j]);
    }
    int codes[32];
    if (type == TensorType::kQ8_0) {
      const float d = amax / 127.0f;
      const float id = d != 0.0f ? 1.0f / d : 0.0f;
      put_f16(out, f32_to_f16(d));
      for (int j = 0; j < 32; ++j)
        out.push_back(static_cast<uint8_t>(static_cast<int8_t>(std::round(v[j] * id))));
      continue;
    }
    const bool affine = type == TensorType::kQ4_1 || type == TensorType::kQ5_1;
    const int levels = (type == TensorType::kQ4_0 || type == TensorType::kQ4_1) ? 16 : 32;
    const float d =
        affine ? (hi - lo) / static_cast<float>(levels - 1) : max / static_cast<float>(-levels / 2);
    const float id = d != 0.0f ? 1.0f / d : 0.0f;
    for (int j = 0; j < 32; ++j) {
      const float t =
          affine ? (v[j] - lo) * id + 0.5f : v[j] * id + (static_cast<float>(levels / 2) + 0.5f);
      codes[j] = std::min(levels - 1, static_cast<int>(static_cast<int8_t>(t)));
    }
    put_f16(out, f32_to_f16(d));
    if (affine) put_f16(out, f32_to_f16(lo));
    if (levels == 32) put_qh(out, codes);
    put_nibbles(out, codes);
  }
  return out;
}

TEST(Quantize, ClosedFormQuantizersMatchSpecOnRandomData) {
  // Gaussian data at several scales, plus blocks with exact ties and repeated extremes.
  std::vector<float> x = test::gaussian(32 * 64, 99);
  for (size_t i = 0; i < x.size(); ++i)
    x[i] *= std::ldexp(1.0f, static_cast<int>(i / 256) * 3 - 10);
  for (int j = 0; j < 32; ++j) x.push_back(static_cast<float>(j % 17 - 8) * 0.25f);
  for (int j = 0; j < 32; ++j) x.push_back(j % 2 ? 3.0f : -3.0f);
  for (int j = 0; j < 32; ++j) x.push_back(1.0f);
  for (TensorType t : {TensorType::kQ8_0, TensorType::kQ4_0, TensorType::kQ4_1, TensorType::kQ5_0,
                       TensorType::kQ5_1}) {
    EXPECT_EQ(quantize(t, x), spec_quantize(t, x)) << tensor_type_name(t);
  }
}

TEST(Quantize, FloatTypesRoundToNearestEven) {
  const std::vector<float> x = {1.0f, 1.0f + 0x1p-11f, -65520.0f, 0x1p-25f, 3.0e-8f, 0.1f, NAN,
                                -2.5f};
  const auto f16 = quantize(TensorType::kF16, x);
  const auto bf16 = quantize(TensorType::kBF16, x);
  for (size_t i = 0; i < x.size(); ++i) {
    EXPECT_EQ(f16[2 * i] | (f16[2 * i + 1] << 8), f32_to_f16(x[i]));
    EXPECT_EQ(bf16[2 * i] | (bf16[2 * i + 1] << 8), f32_to_bf16(x[i]));
  }
  const auto f32 = quantize(TensorType::kF32, x);
  EXPECT_EQ(std::memcmp(f32.data(), x.data(), f32.size()), 0);
}

struct ErrorBound {
  TensorType type;
  double max_relative_rms;
};

// Round trip on N(0, 1) data; the bounds sit ~15% above the measured errors.
TEST(Quantize, RoundTripErrorOnGaussianData) {
  const ErrorBound bounds[] = {
      {TensorType::kF16, 2.5e-4},   {TensorType::kBF16, 2e-3},    {TensorType::kQ8_0, 0.006},
      {TensorType::kQ4_0, 0.10},    {TensorType::kQ4_1, 0.09},    {TensorType::kQ5_0, 0.05},
      {TensorType::kQ5_1, 0.044},   {TensorType::kQ2_K, 0.31},    {TensorType::kQ3_K, 0.165},
      {TensorType::kQ4_K, 0.084},   {TensorType::kQ5_K, 0.042},   {TensorType::kQ6_K, 0.02},
      {TensorType::kIQ4_NL, 0.084}, {TensorType::kIQ4_XS, 0.085}, {TensorType::kMXFP4, 0.13},
  };
  const std::vector<float> x = test::gaussian(256 * 64, 2024);
  double q4_0_error = 0.0, q4_k_error = 0.0;
  for (const ErrorBound& b : bounds) {
    const auto y = dequantize(b.type, quantize(b.type, x), x.size());
    const double err = test::relative_rms(y.data(), x.data(), x.size());
    std::printf("[ round trip ] %-7s relative RMS error %.5f\n",
                std::string(tensor_type_name(b.type)).c_str(), err);
    EXPECT_LT(err, b.max_relative_rms) << tensor_type_name(b.type);
    if (b.type == TensorType::kQ4_0) q4_0_error = err;
    if (b.type == TensorType::kQ4_K) q4_k_error = err;
  }
  EXPECT_LT(q4_k_error, 1.5 * q4_0_error);
}

// Degenerate blocks must decode to finite values close to the input.
TEST(Quantize, DegenerateBlocksStayFinite) {
  std::vector<std::vector<float>> cases;
  cases.emplace_back(256, 0.0f);
  cases.emplace_back(256, 2.5f);
  cases.emplace_back(256, -3.0f);
  std::vector<float> spike(256, 1e-3f);
  spike[77] = 1000.0f;
  cases.push_back(spike);
  std::vector<float> negative = test::gaussian(256, 5);
  for (float& v : negative) v = -std::fabs(v) - 1.0f;
  cases.push_back(negative);
  for (TensorType t :
       {TensorType::kQ8_0, TensorType::kQ4_0, TensorType::kQ4_1, TensorType::kQ5_0,
        TensorType::kQ5_1, TensorType::kQ2_K, TensorType::kQ3_K, TensorType::kQ4_K,
        TensorType::kQ5_K, TensorType::kQ6_K, TensorType::kIQ4_NL, TensorType::kIQ4_XS}) {
    for (size_t c = 0; c < cases.size(); ++c) {
      const auto y = dequantize(t, quantize(t, cases[c]), 256);
      double max_abs = 0.0;
      for (size_t i = 0; i < y.size(); ++i) {
        ASSERT_TRUE(std::isfinite(y[i])) << tensor_type_name(t) << " case " << c;
        max_abs = std::max(max_abs, std::fabs(static_cast<double>(y[i]) - cases[c][i]));
      }
      // Constant blocks (zero, positive, negative) come back to within f16 precision.
      if (c < 3) {
        EXPECT_LE(max_abs, 2e-3 * std::fabs(cases[c][0])) << tensor_type_name(t) << " case " << c;
      }
      if (c == 3) {
        EXPECT_NEAR(y[77], 1000.0f, 25.0f) << tensor_type_name(t);
      }
    }
  }
}

// MXFP4 (the reference's quantize_row_mxfp4_ref): e = floor(log2 amax) - 2 + 127, so that
// amax / 2^(e - 127) lies in [4, 8), and each value takes the nearest code, the first of two
// equally near ones.
TEST(Quantize, Mxfp4ExponentAndNearestCodes) {
  const auto b = quantize(TensorType::kMXFP4, block_of({6.0f, -3.0f, 2.5f, 0.1f, -0.1f}));
  ASSERT_EQ(b.size(), 17u);
  EXPECT_EQ(b[0], 127);       // amax 6: floor(log2 6) = 2; the half-scale is 0.5
  EXPECT_EQ(b[1] & 0xF, 7);   // 6 / 0.5 = 12: code 7 (E2M1 6.0)
  EXPECT_EQ(b[2] & 0xF, 13);  // -3 / 0.5 = -6: code 13
  EXPECT_EQ(b[3] & 0xF, 4);   // 5 lies between 4 (code 4) and 6 (code 5): the first
  EXPECT_EQ(b[4] & 0xF, 0);   // 0.2: +0 (code 0) before -0 (code 8)
  EXPECT_EQ(b[5] & 0xF, 0);   // -0.2: +0 again, nearer than -1 (code 9)
  EXPECT_EQ(b[1] >> 4, 0);    // the zero fill of the second half
  const auto zero = quantize(TensorType::kMXFP4, block_of({}));
  EXPECT_EQ(zero, std::vector<uint8_t>(17, 0));
  const std::vector<float> back = dequantize(TensorType::kMXFP4, b, 32);
  EXPECT_EQ(back[0], 6.0f);
  EXPECT_EQ(back[1], -3.0f);
  EXPECT_EQ(back[2], 2.0f);
}

}  // namespace
}  // namespace hearth::kernels
