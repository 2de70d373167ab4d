// dequantize_row() against the per-element formulas of quantization.md §3, evaluated here
// straight from byte offsets (independent of the kernels' block structs and loop order).
#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstring>
#include <string>
#include <vector>

#include "base/half.h"
#include "base/tensor_type.h"
#include "kernels/block_formats.h"
#include "kernels/quant.h"
#include "test_util.h"

namespace hearth::kernels {
namespace {

using test::same_float;

const int kKv[16] = {-127, -104, -83, -65, -49, -35, -22, -10, 1, 13, 25, 38, 53, 69, 89, 113};

float f16_at(const uint8_t* p) {
  return f16_to_f32(static_cast<uint16_t>(p[0] | (p[1] << 8)));
}
uint32_t u32_at(const uint8_t* p) {
  return static_cast<uint32_t>(p[0]) | (static_cast<uint32_t>(p[1]) << 8) |
         (static_cast<uint32_t>(p[2]) << 16) | (static_cast<uint32_t>(p[3]) << 24);
}
float fl(int v) {
  return static_cast<float>(v);
}
// Nibble order of the 32-element formats: element e < 16 low nibble of qs[e], else high
// nibble of qs[e - 16].
int nibble(const uint8_t* qs, int e) {
  return e < 16 ? (qs[e] & 0xF) : (qs[e - 16] >> 4);
}

float spec_q8_0(const uint8_t* b, int e) {
  return fl(static_cast<int8_t>(b[2 + e])) * f16_at(b);
}
float spec_q4_0(const uint8_t* b, int e) {
  return fl(nibble(b + 2, e) - 8) * f16_at(b);
}
float spec_q4_1(const uint8_t* b, int e) {
  return fl(nibble(b + 4, e)) * f16_at(b) + f16_at(b + 2);
}
float spec_q5_0(const uint8_t* b, int e) {
  const int u = nibble(b + 6, e) | static_cast<int>(((u32_at(b + 2) >> e) & 1) << 4);
  return fl(u - 16) * f16_at(b);
}
float spec_q5_1(const uint8_t* b, int e) {
  const int u = nibble(b + 8, e) | static_cast<int>(((u32_at(b + 4) >> e) & 1) << 4);
  return fl(u) * f16_at(b) + f16_at(b + 2);
}
float spec_iq4_nl(const uint8_t* b, int e) {
  return f16_at(b) * fl(kKv[nibble(b + 2, e)]);
}
// MXFP4 (OCP MX v1.0): an E2M1 element (sign, 2 exponent bits of bias 1, 1 mantissa bit)
// times 2^(E8M0 - 127). The reference's integer code table has no -0: code 8 gives +0.
float spec_mxfp4(const uint8_t* b, int e) {
  const int code = nibble(b + 1, e);
  const int exp = (code >> 1) & 3, man = code & 1;
  const float magnitude = exp == 0 ? 0.5f * fl(man) : std::ldexp(1.0f + 0.5f * fl(man), exp - 1);
  if (magnitude == 0.0f) return 0.0f;
  return std::ldexp((code & 8) ? -magnitude : magnitude, b[0] - 127);
}

float spec_q2_k(const uint8_t* b, int e) {
  const int n = e / 128, j = (e % 128) / 32, l = e % 32, s = 8 * n + 2 * j + l / 16;
  const int q = (b[16 + 32 * n + l] >> (2 * j)) & 3;
  const int sc = b[s];
  return (f16_at(b + 80) * fl(sc & 0xF)) * fl(q) - (f16_at(b + 82) * fl(sc >> 4));
}

float spec_q3_k(const uint8_t* b, int e) {
  const int n = e / 128, j = (e % 128) / 32, l = e % 32, s = 8 * n + 2 * j + l / 16;
  const uint8_t* hmask = b;
  const uint8_t* qs = b + 32;
  const uint8_t* scales = b + 96;
  const int lo2 = (qs[32 * n + l] >> (2 * j)) & 3;
  const int hb = (hmask[l] >> (4 * n + j)) & 1;
  const int q = lo2 - (hb ? 0 : 4);
  const int low4 = (s < 8) ? (scales[s] & 0xF) : (scales[s - 8] >> 4);
  const int high2 = (scales[8 + (s % 4)] >> (2 * (s / 4))) & 3;
  const int sc = (low4 | (high2 << 4)) - 32;
  return (f16_at(b + 108) * fl(sc)) * fl(q);
}

void k4_scale_min(const uint8_t* q, int k, int& sc, int& mn) {
  if (k < 4) {
    sc = q[k] & 63;
    mn = q[k + 4] & 63;
  } else {
    sc = (q[k + 4] & 0xF) | ((q[k - 4] >> 6) << 4);
    mn = (q[k + 4] >> 4) | ((q[k] >> 6) << 4);
  }
}

float spec_q4_k(const uint8_t* b, int e) {
  const int g = e / 64, h = (e % 64) / 32, l = e % 32, k = 2 * g + h;
  int sc = 0, mn = 0;
  k4_scale_min(b + 4, k, sc, mn);
  const uint8_t byte = b[16 + 32 * g + l];
  const int u = h ? (byte >> 4) : (byte & 0xF);
  return (f16_at(b) * fl(sc)) * fl(u) - (f16_at(b + 2) * fl(mn));
}

float spec_q5_k(const uint8_t* b, int e) {
  const int g = e / 64, h = (e % 64) / 32, l = e % 32, k = 2 * g + h;
  int sc = 0, mn = 0;
  k4_scale_min(b + 4, k, sc, mn);
  const uint8_t byte = b[48 + 32 * g + l];
  int u = h ? (byte >> 4) : (byte & 0xF);
  u += 16 * ((b[16 + l] >> k) & 1);
  return (f16_at(b) * fl(sc)) * fl(u) - (f16_at(b + 2) * fl(mn));
}

float spec_q6_k(const uint8_t* b, int e) {
  const int n = e / 128, k = (e % 128) / 32, l = e % 32;
  const uint8_t byte = b[64 * n + ((k & 1) ? 32 : 0) + l];
  const int lo4 = (k < 2) ? (byte & 0xF) : (byte >> 4);
  const int hi2 = (b[128 + 32 * n + l] >> (2 * k)) & 3;
  const int q = (lo4 | (hi2 << 4)) - 32;
  const int sc = static_cast<int8_t>(b[192 + 8 * n + 2 * k + l / 16]);
  return (f16_at(b + 208) * fl(sc)) * fl(q);
}

float spec_iq4_xs(const uint8_t* b, int e) {
  const int sb = e / 32, r = e % 32;
  const int scales_h = b[2] | (b[3] << 8);
  const int ls = ((b[4 + sb / 2] >> (4 * (sb % 2))) & 0xF) | (((scales_h >> (2 * sb)) & 3) << 4);
  const float dl = f16_at(b) * fl(ls - 32);
  const uint8_t byte = b[8 + 16 * sb + (r % 16)];
  const int u = (r < 16) ? (byte & 0xF) : (byte >> 4);
  return dl * fl(kKv[u]);
}

struct Format {
  TensorType type;
  float (*spec)(const uint8_t* block, int e);
  std::vector<int> f16_fields;   // byte offsets of the f16 scale fields
  std::vector<int> int8_scales;  // [begin, end) of signed 8-bit scale bytes, if any
};

const std::vector<Format>& formats() {
  static const std::vector<Format> kFormats = {
      {TensorType::kQ8_0, spec_q8_0, {0}, {}},
      {TensorType::kQ4_0, spec_q4_0, {0}, {}},
      {TensorType::kQ4_1, spec_q4_1, {0, 2}, {}},
      {TensorType::kQ5_0, spec_q5_0, {0}, {}},
      {TensorType::kQ5_1, spec_q5_1, {0, 2}, {}},
      {TensorType::kQ2_K, spec_q2_k, {80, 82}, {}},
      {TensorType::kQ3_K, spec_q3_k, {108}, {}},
      {TensorType::kQ4_K, spec_q4_k, {0, 2}, {}},
      {TensorType::kQ5_K, spec_q5_k, {0, 2}, {}},
      {TensorType::kQ6_K, spec_q6_k, {208}, {192, 208}},
      {TensorType::kIQ4_NL, spec_iq4_nl, {0}, {}},
      {TensorType::kIQ4_XS, spec_iq4_xs, {0}, {}},
      {TensorType::kMXFP4, spec_mxfp4, {}, {}},
  };
  return kFormats;
}

// Scale values worth hitting: ±1, subnormals, ±max, ±inf, ±0, an ordinary fraction.
constexpr uint16_t kSpecialF16[] = {0x3C00, 0xBC00, 0x0001, 0x03FF, 0x8001, 0x7BFF,
                                    0xFBFF, 0x7C00, 0xFC00, 0x0000, 0x8000, 0x2E66};
constexpr int kNumSpecial = static_cast<int>(std::size(kSpecialF16));

// Blocks cycling through byte patterns (random, all 0x00, all 0xFF, 0x0F/0xF0) with the
// f16 fields set to special values first, then to random finite values.
std::vector<uint8_t> make_blocks(const Format& f, int n_blocks, uint32_t seed) {
  const auto& t = traits_of(f.type);
  std::vector<uint8_t> bytes =
      test::random_bytes(static_cast<size_t>(n_blocks) * t.type_size, seed);
  const std::vector<uint8_t> rnd = test::random_bytes(static_cast<size_t>(n_blocks) * 8, seed + 1);
  for (int i = 0; i < n_blocks; ++i) {
    uint8_t* b = bytes.data() + static_cast<size_t>(i) * t.type_size;
    const int pattern = i % 4;
    for (uint32_t k = 0; k < t.type_size; ++k) {
      if (pattern == 1) b[k] = 0x00;
      if (pattern == 2) b[k] = 0xFF;
      if (pattern == 3) b[k] = (k % 2) ? 0xF0 : 0x0F;
    }
    for (size_t fi = 0; fi < f.f16_fields.size(); ++fi) {
      uint16_t h;
      if (i < 2 * kNumSpecial) {
        h = kSpecialF16[(i + 5 * static_cast<int>(fi)) % kNumSpecial];
      } else {
        h = static_cast<uint16_t>(rnd[8 * i + 2 * fi] | (rnd[8 * i + 2 * fi + 1] << 8));
        if (((h >> 10) & 31) == 31) h &= 0xBFFF;  // keep random scales finite
      }
      b[f.f16_fields[fi]] = static_cast<uint8_t>(h & 0xFF);
      b[f.f16_fields[fi] + 1] = static_cast<uint8_t>(h >> 8);
    }
    if (!f.int8_scales.empty() && i % 8 == 5) {  // int8 extremes
      for (int k = f.int8_scales[0]; k < f.int8_scales[1]; ++k) b[k] = (k % 2) ? 0x80 : 0x7F;
    }
  }
  return bytes;
}

TEST(Dequantize, HandlesExactlyTheListedTypes) {
  for (const Format& f : formats()) EXPECT_TRUE(can_dequantize(f.type)) << tensor_type_name(f.type);
  for (TensorType t : {TensorType::kF32, TensorType::kF16, TensorType::kBF16}) {
    EXPECT_TRUE(can_dequantize(t));
  }
  for (TensorType t : {TensorType::kQ8_1, TensorType::kQ8_K, TensorType::kIQ2_XXS,
                       TensorType::kTQ1_0, TensorType::kI32, TensorType::kNVFP4}) {
    EXPECT_FALSE(can_dequantize(t)) << tensor_type_name(t);
  }
}

TEST(Dequantize, BlockFormatsMatchTypeTraits) {
  EXPECT_EQ(sizeof(BlockQ8_0), traits_of(TensorType::kQ8_0).type_size);
  EXPECT_EQ(sizeof(BlockQ4_0), traits_of(TensorType::kQ4_0).type_size);
  EXPECT_EQ(sizeof(BlockQ4_1), traits_of(TensorType::kQ4_1).type_size);
  EXPECT_EQ(sizeof(BlockQ5_0), traits_of(TensorType::kQ5_0).type_size);
  EXPECT_EQ(sizeof(BlockQ5_1), traits_of(TensorType::kQ5_1).type_size);
  EXPECT_EQ(sizeof(BlockQ2K), traits_of(TensorType::kQ2_K).type_size);
  EXPECT_EQ(sizeof(BlockQ3K), traits_of(TensorType::kQ3_K).type_size);
  EXPECT_EQ(sizeof(BlockQ4K), traits_of(TensorType::kQ4_K).type_size);
  EXPECT_EQ(sizeof(BlockQ5K), traits_of(TensorType::kQ5_K).type_size);
  EXPECT_EQ(sizeof(BlockQ6K), traits_of(TensorType::kQ6_K).type_size);
  EXPECT_EQ(sizeof(BlockQ8K), traits_of(TensorType::kQ8_K).type_size);
  EXPECT_EQ(sizeof(BlockIq4Nl), traits_of(TensorType::kIQ4_NL).type_size);
  EXPECT_EQ(sizeof(BlockIq4Xs), traits_of(TensorType::kIQ4_XS).type_size);
  EXPECT_EQ(sizeof(BlockMxfp4), traits_of(TensorType::kMXFP4).type_size);
}

// Every quantized format, bit for bit, from a source that is deliberately misaligned.
TEST(Dequantize, MatchesSpecFormulasBitExactly) {
  constexpr int kBlocks = 64;
  for (const Format& f : formats()) {
    SCOPED_TRACE(std::string(tensor_type_name(f.type)));
    const auto& t = traits_of(f.type);
    const std::vector<uint8_t> blocks = make_blocks(f, kBlocks, 1234u + t.type_size);
    std::vector<uint8_t> shifted(blocks.size() + 1);
    std::memcpy(shifted.data() + 1, blocks.data(), blocks.size());
    const int64_t n = int64_t{kBlocks} * t.block_size;
    std::vector<float> out(static_cast<size_t>(n));
    dequantize_row(f.type, shifted.data() + 1, out.data(), n);
    int mismatches = 0;
    for (int i = 0; i < kBlocks; ++i) {
      const uint8_t* b = blocks.data() + static_cast<size_t>(i) * t.type_size;
      for (uint32_t e = 0; e < t.block_size; ++e) {
        const float want = f.spec(b, static_cast<int>(e));
        const float got = out[static_cast<size_t>(i) * t.block_size + e];
        if (!same_float(got, want) && ++mismatches <= 5) {
          ADD_FAILURE() << "block " << i << " element " << e << ": got " << got << " want " << want;
        }
      }
    }
    EXPECT_EQ(mismatches, 0);
  }
}

TEST(Dequantize, ExtremeNibblesGiveTheRangeEnds) {
  // Q4_0 with d = 1: nibble 0 -> -8, nibble 15 -> 7.
  uint8_t q4[18] = {0x00, 0x3C};
  for (int j = 0; j < 16; ++j) q4[2 + j] = 0xF0;
  float y[32];
  dequantize_row(TensorType::kQ4_0, q4, y, 32);
  EXPECT_EQ(y[0], -8.0f);
  EXPECT_EQ(y[16], 7.0f);
  // Q5_0 with d = -2 and every 5th bit set: -2 * (31 - 16) = -30 for nibble 15.
  uint8_t q5[22] = {0x00, 0xC0, 0xFF, 0xFF, 0xFF, 0xFF};
  for (int j = 0; j < 16; ++j) q5[6 + j] = 0x0F;
  dequantize_row(TensorType::kQ5_0, q5, y, 32);
  EXPECT_EQ(y[0], -30.0f);
  EXPECT_EQ(y[16], -2.0f * (16 - 16));
  // Q8_0: -128 * inf = -inf; 0 * inf = NaN.
  uint8_t q8[34] = {0x00, 0x7C, 0x80, 0x00};
  dequantize_row(TensorType::kQ8_0, q8, y, 32);
  EXPECT_EQ(y[0], -INFINITY);
  EXPECT_TRUE(std::isnan(y[1]));
  // IQ4_NL with the smallest subnormal scale: exact multiples of 2^-24.
  uint8_t iq[18] = {0x01, 0x00, 0xF0};
  dequantize_row(TensorType::kIQ4_NL, iq, y, 32);
  EXPECT_EQ(y[0], -127.0f * 0x1p-24f);
  EXPECT_EQ(y[16], 113.0f * 0x1p-24f);
  // MXFP4: e = 0 is 2^-127 (a subnormal scale), e = 254 is 2^127; codes 7 and 15 are +-6.
  uint8_t fp4[17] = {0x00, 0xF7};
  dequantize_row(TensorType::kMXFP4, fp4, y, 32);
  EXPECT_EQ(y[0], 6.0f * 0x1p-127f);
  EXPECT_EQ(y[16], -6.0f * 0x1p-127f);
  fp4[0] = 254;
  dequantize_row(TensorType::kMXFP4, fp4, y, 32);
  EXPECT_EQ(y[0], 6.0f * 0x1p127f);
  EXPECT_EQ(y[2], 0.0f);
}

TEST(Dequantize, FloatTypesAreExactWidenings) {
  std::vector<uint8_t> bytes(65536 * 2);
  for (uint32_t h = 0; h < 65536; ++h) {
    bytes[2 * h] = static_cast<uint8_t>(h & 0xFF);
    bytes[2 * h + 1] = static_cast<uint8_t>(h >> 8);
  }
  std::vector<float> out(65536);
  dequantize_row(TensorType::kF16, bytes.data() + 0, out.data(), 65536);
  for (uint32_t h = 0; h < 65536; ++h) {
    ASSERT_TRUE(same_float(out[h], f16_to_f32(static_cast<uint16_t>(h))));
  }
  dequantize_row(TensorType::kBF16, bytes.data(), out.data(), 65536);
  for (uint32_t h = 0; h < 65536; ++h) {
    ASSERT_EQ(std::bit_cast<uint32_t>(out[h]), h << 16);
  }
  const std::vector<uint8_t> f32_bytes = test::random_bytes(4 * 1000 + 1, 7);
  std::vector<float> f32_out(1000);
  dequantize_row(TensorType::kF32, f32_bytes.data() + 1, f32_out.data(), 1000);
  EXPECT_EQ(std::memcmp(f32_out.data(), f32_bytes.data() + 1, 4000), 0);
}

}  // namespace
}  // namespace hearth::kernels
