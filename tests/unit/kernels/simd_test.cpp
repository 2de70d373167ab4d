// Every SIMD kernel of every level this CPU runs, against the scalar reference: activation
// conversions byte for byte, dot products to float rounding on random rows (and exactly on
// integer data), tiles bit for bit against their own level's vec_dot, and matmul outputs
// independent of the batch and the thread count.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

#include "base/half.h"
#include "base/thread_pool.h"
#include "dot_reference.h"
#include "integer_data.h"
#include "kernels/kernel_table.h"
#include "kernels/quant.h"
#include "test_util.h"

namespace hearth::kernels {
namespace {

const TensorType kWeightTypes[] = {
    TensorType::kF32,  TensorType::kF16,    TensorType::kBF16,   TensorType::kQ8_0,
    TensorType::kQ4_0, TensorType::kQ4_1,   TensorType::kQ5_0,   TensorType::kQ5_1,
    TensorType::kQ2_K, TensorType::kQ3_K,   TensorType::kQ4_K,   TensorType::kQ5_K,
    TensorType::kQ6_K, TensorType::kIQ4_NL, TensorType::kIQ4_XS, TensorType::kMXFP4,
};
const TensorType kActivationTypes[] = {TensorType::kF32,  TensorType::kF16,  TensorType::kBF16,
                                       TensorType::kQ8_0, TensorType::kQ8_1, TensorType::kQ8_K};

std::string level_and_type(CpuLevel level, TensorType type) {
  return std::string(cpu_level_name(level)) + " " + std::string(tensor_type_name(type));
}

// Activation rows that stress the conversions: ordinary values over many magnitudes,
// exact ties of the rounding, zeros, huge and tiny values, blocks of one repeated value.
std::vector<std::vector<float>> stress_rows(int64_t n) {
  std::vector<std::vector<float>> rows;
  for (uint32_t seed = 1; seed <= 4; ++seed) {
    auto x = test::gaussian(static_cast<size_t>(n), 500 + seed);
    for (int64_t i = 0; i < n; ++i)
      x[static_cast<size_t>(i)] *= std::ldexp(1.0f, static_cast<int>((i / 16 + seed) % 21) - 10);
    rows.push_back(x);
  }
  std::vector<float> ties(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i)
    ties[static_cast<size_t>(i)] = (i % 32 == 0) ? 127.0f : 0.5f * static_cast<float>(i % 9 - 4);
  rows.push_back(ties);
  std::vector<float> extremes(static_cast<size_t>(n), 0.0f);
  for (int64_t i = 0; i < n; ++i) {
    const int64_t block = i / 32;
    float v = 0.0f;
    switch (block % 5) {
      case 0:
        v = 0.0f;
        break;
      case 1:
        v = 1e30f * ((i % 2) ? 1.0f : -1.0f);
        break;
      case 2:
        v = 1e-30f * static_cast<float>(i % 7 - 3);
        break;
      case 3:
        v = -3.0f;
        break;
      default:
        v = 65504.0f * static_cast<float>(i % 3 - 1);
        break;
    }
    extremes[static_cast<size_t>(i)] = v;
  }
  rows.push_back(extremes);
  return rows;
}

std::vector<uint8_t> convert(const TypeKernels& act, TensorType type, const std::vector<float>& x) {
  std::vector<uint8_t> out(row_bytes(traits_of(type), x.size()));
  act.from_float(x.data(), out.data(), static_cast<int64_t>(x.size()));
  return out;
}

TEST(Simd, ActivationConversionsMatchTheReferenceByteForByte) {
  constexpr int64_t kCols = 1024;
  const std::vector<CpuLevel> levels = test::simd_levels();
  if (levels.empty()) GTEST_SKIP() << test::kNoSimdLevel;
  for (CpuLevel level : levels) {
    for (TensorType type : kActivationTypes) {
      SCOPED_TRACE(level_and_type(level, type));
      const TypeKernels& mine = level_kernels(level, type);
      ASSERT_NE(mine.from_float, nullptr);
      for (const auto& x : stress_rows(kCols)) {
        EXPECT_EQ(convert(mine, type, x), convert(reference_kernels(type), type, x));
      }
    }
  }
}

// F16 and BF16 rows: every level's encoder and widening give the reference's bits, for
// every one of the 65536 codes and the stress rows (NaN, infinities, subnormals, ties).
TEST(Simd, HalfRowConversionsMatchTheReference) {
  const std::vector<CpuLevel> levels = test::simd_levels();
  if (levels.empty()) GTEST_SKIP() << test::kNoSimdLevel;
  for (CpuLevel level : levels) {
    for (TensorType type : {TensorType::kF16, TensorType::kBF16}) {
      SCOPED_TRACE(level_and_type(level, type));
      const TypeKernels& mine = level_kernels(level, type);
      const TypeKernels& ref = reference_kernels(type);
      std::vector<uint16_t> codes(65536);
      for (size_t i = 0; i < codes.size(); ++i) codes[i] = static_cast<uint16_t>(i);
      std::vector<float> a(codes.size()), b(codes.size());
      mine.dequantize_row(codes.data(), a.data(), static_cast<int64_t>(codes.size()));
      ref.dequantize_row(codes.data(), b.data(), static_cast<int64_t>(codes.size()));
      size_t differ = 0;  // NaN payloads may be quieted by the hardware conversion
      for (size_t i = 0; i < a.size(); ++i) {
        const bool same =
            std::memcmp(&a[i], &b[i], sizeof(float)) == 0 || (std::isnan(a[i]) && std::isnan(b[i]));
        differ += same ? 0 : 1;
      }
      EXPECT_EQ(differ, 0u);
      for (const auto& x : stress_rows(1024)) {
        std::vector<uint8_t> m(row_bytes(traits_of(type), x.size())), r(m.size());
        mine.quantize_row(x.data(), m.data(), static_cast<int64_t>(x.size()));
        ref.quantize_row(x.data(), r.data(), static_cast<int64_t>(x.size()));
        EXPECT_EQ(m, r);
      }
    }
  }
}

std::vector<uint8_t> encode(TensorType type, const std::vector<float>& x) {
  std::vector<uint8_t> out(row_bytes(traits_of(type), x.size()));
  quantize_row(type, x.data(), out.data(), static_cast<int64_t>(x.size()));
  return out;
}

// Level vec_dot against the independent double-precision model, to 2e-5 of sum |w * a|
// (the SIMD order of f32 additions differs from the reference's).
TEST(Simd, DotProductsMatchTheReferenceOnRandomRows) {
  constexpr int64_t kCols = 2048;
  for (CpuLevel level : runnable_cpu_levels()) {
    for (TensorType type : kWeightTypes) {
      SCOPED_TRACE(level_and_type(level, type));
      const TypeKernels& k = level_kernels(level, type);
      const TypeKernels& act = level_kernels(level, k.vec_dot_type);
      for (uint32_t seed = 1; seed <= 5; ++seed) {
        auto wf = test::gaussian(kCols, 600 + seed, 0.02f * static_cast<float>(seed * seed));
        if (seed == 5) {  // outliers: one huge weight per block
          for (size_t i = 0; i < wf.size(); i += 29) wf[i] *= 200.0f;
        }
        const auto w = encode(type, wf);
        const auto a = convert(act, k.vec_dot_type, stress_rows(kCols)[seed % 4]);
        const auto want = test::reference_dot(type, w.data(), k.vec_dot_type, a.data(), kCols);
        EXPECT_NEAR(k.vec_dot(w.data(), a.data(), kCols), want.value, 2e-5 * want.abs_sum)
            << "seed " << seed;
      }
    }
  }
}

// On integer data every float operation is exact, so the SIMD integer paths (code
// unpacking, sub-block scales, min terms) must give the reference's value bit for bit.
TEST(Simd, DotProductsAreExactOnIntegerData) {
  constexpr int64_t kCols = 512;
  const std::vector<CpuLevel> levels = test::simd_levels();
  if (levels.empty()) GTEST_SKIP() << test::kNoSimdLevel;
  for (CpuLevel level : levels) {
    for (TensorType type : kWeightTypes) {
      SCOPED_TRACE(level_and_type(level, type));
      const TypeKernels& k = level_kernels(level, type);
      for (uint32_t seed = 1; seed <= 4; ++seed) {
        const auto w = test::integer_weights(type, kCols, 700 + seed);
        const auto a = convert(reference_kernels(k.vec_dot_type), k.vec_dot_type,
                               test::integer_activations(kCols, 800 + seed));
        EXPECT_EQ(k.vec_dot(w.data(), a.data(), kCols),
                  reference_kernels(type).vec_dot(w.data(), a.data(), kCols))
            << "seed " << seed;
      }
    }
  }
}

// Rows and tokens at odd byte offsets, the way tensors sit in a GGUF file.
TEST(Simd, TilesEqualTheirLevelsVecDotForEveryShape) {
  constexpr int64_t kCols = 512;
  constexpr int kRows = 9, kTokens = 7;
  for (CpuLevel level : runnable_cpu_levels()) {
    for (TensorType type : kWeightTypes) {
      SCOPED_TRACE(level_and_type(level, type));
      const TypeKernels& k = level_kernels(level, type);
      if (k.tile == nullptr) continue;
      ASSERT_LE(k.tile_rows, kRows);
      ASSERT_LE(k.tile_tokens, kTokens);
      const auto& wt = traits_of(type);
      const size_t w_stride = row_bytes(wt, kCols) + 1;
      std::vector<uint8_t> w(w_stride * kRows + 1);
      for (int r = 0; r < kRows; ++r) {
        const auto row = encode(type, test::gaussian(kCols, 900 + static_cast<uint32_t>(r)));
        std::memcpy(w.data() + 1 + static_cast<size_t>(r) * w_stride, row.data(), row.size());
      }
      const size_t x_stride = row_bytes(traits_of(k.vec_dot_type), kCols) + 3;
      std::vector<uint8_t> x(x_stride * kTokens + 3);
      const TypeKernels& act = level_kernels(level, k.vec_dot_type);
      for (int t = 0; t < kTokens; ++t) {
        const auto row =
            convert(act, k.vec_dot_type, test::gaussian(kCols, 950 + static_cast<uint32_t>(t)));
        std::memcpy(x.data() + 3 + static_cast<size_t>(t) * x_stride, row.data(), row.size());
      }
      for (int n_rows = 1; n_rows <= k.tile_rows; ++n_rows) {
        for (int n_tok = 1; n_tok <= k.tile_tokens; ++n_tok) {
          std::vector<float> y(static_cast<size_t>(kTokens * kRows), -1.0f);
          simd::TileArgs a;
          a.w = w.data() + 1;
          a.w_stride = w_stride;
          a.x = x.data() + 3;
          a.x_stride = x_stride;
          a.n = kCols;
          a.y = y.data();
          a.y_stride = kRows;
          a.n_rows = n_rows;
          a.n_tokens = n_tok;
          k.tile(a);
          for (int t = 0; t < kTokens; ++t) {
            for (int r = 0; r < kRows; ++r) {
              const float got = y[static_cast<size_t>(t * kRows + r)];
              if (t >= n_tok || r >= n_rows) {
                EXPECT_EQ(got, -1.0f) << "tile wrote outside itself at t " << t << " r " << r;
                continue;
              }
              const float want = k.vec_dot(a.w + static_cast<size_t>(r) * w_stride,
                                           a.x + static_cast<size_t>(t) * x_stride, kCols);
              EXPECT_TRUE(test::same_float(got, want))
                  << n_rows << "x" << n_tok << " tile, row " << r << " token " << t << ": " << got
                  << " vs " << want;
            }
          }
        }
      }
    }
  }
}

// Weight blocks of raw random codes (every byte value, Q8_0's -128 included) with ordinary
// scales: each tile output still equals its level's vec_dot, so the integer path of a tile
// (vpdpbusd on AVX-512) agrees with vec_dot's (vpmaddubsw) on every code, not only on the
// codes a quantizer writes.
TEST(Simd, TilesEqualVecDotOnRawCodes) {
  constexpr int64_t kCols = 512;
  constexpr int kTokens = 7;
  const TensorType types[] = {TensorType::kQ4_0, TensorType::kQ5_0, TensorType::kQ8_0,
                              TensorType::kQ4_K, TensorType::kQ5_K};
  for (CpuLevel level : runnable_cpu_levels()) {
    for (TensorType type : types) {
      SCOPED_TRACE(level_and_type(level, type));
      const TypeKernels& k = level_kernels(level, type);
      if (k.tile == nullptr) continue;
      const auto& wt = traits_of(type);
      const size_t w_stride = row_bytes(wt, kCols);
      std::vector<uint8_t> w(w_stride * static_cast<size_t>(k.tile_rows));
      uint32_t state = 12345;
      for (uint8_t& b : w) {
        state = state * 1664525u + 1013904223u;
        b = static_cast<uint8_t>(state >> 24);
      }
      // The f16 scale leads each block; a K-quant's f16 dmin follows it.
      const bool k_quant = type == TensorType::kQ4_K || type == TensorType::kQ5_K;
      for (size_t at = 0; at < w.size(); at += wt.type_size) {
        const uint16_t d = f32_to_f16(0.01f * static_cast<float>(1 + at % 7));
        std::memcpy(w.data() + at, &d, sizeof(d));
        if (k_quant) std::memcpy(w.data() + at + 2, &d, sizeof(d));
      }
      const size_t x_stride = row_bytes(traits_of(k.vec_dot_type), kCols);
      std::vector<uint8_t> x(x_stride * kTokens);
      const TypeKernels& act = level_kernels(level, k.vec_dot_type);
      for (int t = 0; t < kTokens; ++t) {
        const auto row =
            convert(act, k.vec_dot_type, test::gaussian(kCols, 970 + static_cast<uint32_t>(t)));
        std::memcpy(x.data() + static_cast<size_t>(t) * x_stride, row.data(), row.size());
      }
      const int n_tok = std::min(k.tile_tokens, kTokens);
      std::vector<float> y(static_cast<size_t>(n_tok * k.tile_rows));
      simd::TileArgs a;
      a.w = w.data();
      a.w_stride = w_stride;
      a.x = x.data();
      a.x_stride = x_stride;
      a.n = kCols;
      a.y = y.data();
      a.y_stride = static_cast<size_t>(k.tile_rows);
      a.n_rows = k.tile_rows;
      a.n_tokens = n_tok;
      k.tile(a);
      for (int t = 0; t < n_tok; ++t) {
        for (int r = 0; r < k.tile_rows; ++r) {
          const float want = k.vec_dot(w.data() + static_cast<size_t>(r) * w_stride,
                                       x.data() + static_cast<size_t>(t) * x_stride, kCols);
          EXPECT_TRUE(test::same_float(y[static_cast<size_t>(t * k.tile_rows + r)], want))
              << "row " << r << " token " << t;
        }
      }
    }
  }
}

// matmul on each level: every token's outputs are the same alone, in batches of any size,
// and with 1 or 2 threads.
TEST(Simd, MatmulIsBatchAndThreadInvariantOnEveryLevel) {
  constexpr int64_t kCols = 256, kRows = 37;
  ThreadPool one(1), two(2);
  for (CpuLevel level : runnable_cpu_levels()) {
    for (TensorType type : kWeightTypes) {
      SCOPED_TRACE(level_and_type(level, type));
      const auto wbytes = encode(type, test::gaussian(kCols * kRows, 1000));
      WeightMatrix w{type, kCols, kRows, row_bytes(traits_of(type), kCols), wbytes.data()};
      constexpr int64_t kTokens = 70;
      const auto x = test::gaussian(kCols * kTokens, 1001);
      std::vector<float> batch(kRows * kTokens), alone(kRows);
      matmul_level(level, w, x.data(), kTokens, batch.data(), two);
      for (int64_t t : {int64_t{0}, int64_t{1}, int64_t{5}, int64_t{64}, int64_t{69}}) {
        matmul_level(level, w, x.data() + t * kCols, 1, alone.data(), one);
        for (int64_t r = 0; r < kRows; ++r) {
          ASSERT_TRUE(test::same_float(batch[static_cast<size_t>(t * kRows + r)],
                                       alone[static_cast<size_t>(r)]))
              << "token " << t << " row " << r;
        }
      }
    }
  }
}

// The AVX-512 level adds tiles that equal the AVX2 vec_dot, so a whole matmul gives the same
// bits at both levels, for every weight type and any batch: a model's logits do not depend
// on which of the two levels runs it.
TEST(Simd, Avx512LevelEqualsAvx2BitForBit) {
  const std::vector<CpuLevel> levels = runnable_cpu_levels();
  if (std::find(levels.begin(), levels.end(), CpuLevel::kAvx512) == levels.end()) {
    GTEST_SKIP() << "this CPU does not run the avx512 level (AVX-512 F/BW/VL/DQ + VNNI)";
  }
  constexpr int64_t kCols = 512, kRows = 29, kTokens = 23;
  ThreadPool two(2);
  for (TensorType type : kWeightTypes) {
    SCOPED_TRACE(tensor_type_name(type));
    const auto wbytes = encode(type, test::gaussian(kCols * kRows, 1100));
    WeightMatrix w{type, kCols, kRows, row_bytes(traits_of(type), kCols), wbytes.data()};
    const auto x = test::gaussian(kCols * kTokens, 1101);
    std::vector<float> avx2(kRows * kTokens), avx512(kRows * kTokens);
    matmul_level(CpuLevel::kAvx2, w, x.data(), kTokens, avx2.data(), two);
    matmul_level(CpuLevel::kAvx512, w, x.data(), kTokens, avx512.data(), two);
    for (size_t i = 0; i < avx2.size(); ++i) {
      ASSERT_TRUE(test::same_float(avx2[i], avx512[i])) << "output " << i;
    }
  }
}

}  // namespace
}  // namespace hearth::kernels
