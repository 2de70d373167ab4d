// The interleaved (repacked) layouts: rows survive the repack byte for byte, every level's
// tiles give the scalar tiles' bits for any number of tokens (so a token's outputs do not
// depend on its batch), and the results agree with the row layout's products to rounding.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <string>
#include <vector>

#include "base/half.h"
#include "base/thread_pool.h"
#include "kernels/interleaved.h"
#include "kernels/interleaved_format.h"
#include "kernels/kernel_table.h"
#include "kernels/quant.h"
#include "test_util.h"

namespace hearth::kernels {
namespace {

const TensorType kTypes[] = {TensorType::kQ4_0,   TensorType::kQ4_1, TensorType::kQ5_0,
                             TensorType::kQ5_1,   TensorType::kQ8_0, TensorType::kIQ4_NL,
                             TensorType::kQ4_K,   TensorType::kQ5_K, TensorType::kQ6_K,
                             TensorType::kIQ4_XS, TensorType::kF16,  TensorType::kBF16};

bool is_super_block(TensorType type) {
  return traits_of(type).block_size == 256;
}

// Bytes per row and block in the file and once repacked: the K-quants and IQ4_XS keep their
// packed 6-bit scales unpacked.
size_t repacked_size(TensorType type, size_t file_bytes) {
  switch (type) {
    case TensorType::kQ4_K:
      return file_bytes / 144 * 148;
    case TensorType::kQ5_K:
      return file_bytes / 176 * 180;
    case TensorType::kIQ4_XS:
      return file_bytes / 136 * 138;
    default:
      return file_bytes;
  }
}

struct Matrix {
  std::vector<uint8_t> rows;  // the file's layout
  WeightMatrix w;
};

bool is_float(TensorType type) {
  return type == TensorType::kF16 || type == TensorType::kBF16;
}

// n_rows x n_cols weights quantized from gaussian rows with a spread of magnitudes; for the
// quantized types, rows 16..31 (when present) are raw bytes instead: every code value,
// including the extremes (Q8_0 -128, nibbles 0 and 15, 6-bit scales and mins 63), under
// finite f16 scales. (F16 and BF16 rows stay gaussian: raw bytes would be NaNs and
// denormals, whose products the BF16 instruction flushes.)
Matrix make_matrix(TensorType type, int64_t n_rows, int64_t n_cols, uint32_t seed) {
  Matrix m;
  const size_t stride = row_bytes(traits_of(type), static_cast<uint64_t>(n_cols));
  m.rows.resize(stride * static_cast<size_t>(n_rows));
  for (int64_t r = 0; r < n_rows; ++r) {
    uint8_t* row = m.rows.data() + static_cast<size_t>(r) * stride;
    if (r >= 16 && r < 32 && !is_float(type)) {
      auto bytes = test::random_bytes(stride, seed + static_cast<uint32_t>(r));
      if (r == 16) std::fill(bytes.begin(), bytes.end(), uint8_t{0xFF});
      if (r == 17) std::fill(bytes.begin(), bytes.end(), uint8_t{0x80});
      std::memcpy(row, bytes.data(), stride);
      // Finite scales: every f16 field of each block set to a value from 2^-14 to 2^3.
      const size_t block = traits_of(type).type_size;
      for (size_t off = 0; off < stride; off += block) {
        const f16_bits d =
            f32_to_f16(std::ldexp(1.0f, static_cast<int>((off / block + r) % 18) - 14));
        if (type == TensorType::kQ6_K) {
          std::memcpy(row + off + 208, &d, 2);  // Q6_K's d is last
          continue;
        }
        std::memcpy(row + off, &d, 2);  // d leads the blocks of the other types
        const bool second = type == TensorType::kQ4_K || type == TensorType::kQ5_K ||
                            type == TensorType::kQ4_1 || type == TensorType::kQ5_1;
        if (second) std::memcpy(row + off + 2, &d, 2);  // dmin or m
      }
      continue;
    }
    auto x = test::gaussian(static_cast<size_t>(n_cols), seed * 31 + static_cast<uint32_t>(r));
    for (float& v : x) v *= std::ldexp(1.0f, static_cast<int>(r % 7) - 3);
    quantize_row(type, x.data(), row, n_cols);
  }
  m.w = {type, n_cols, n_rows, stride, m.rows.data(), WeightLayout::kRows};
  return m;
}

std::vector<float> activations(int64_t n_tokens, int64_t n_cols, uint32_t seed) {
  std::vector<float> x;
  for (int64_t t = 0; t < n_tokens; ++t) {
    auto row = test::gaussian(static_cast<size_t>(n_cols), seed + static_cast<uint32_t>(t));
    for (int64_t i = 0; i < n_cols; ++i) {
      float& v = row[static_cast<size_t>(i)];
      if (t % 5 == 3) v *= std::ldexp(1.0f, static_cast<int>(i / 32 % 24) - 12);  // scale spread
      if (t % 5 == 4 && i % 64 == 0) v = 0.0f;
    }
    x.insert(x.end(), row.begin(), row.end());
  }
  return x;
}

std::vector<float> run(CpuLevel level, const WeightMatrix& w, const std::vector<float>& x,
                       int64_t n_tokens, ThreadPool& pool) {
  std::vector<float> y(static_cast<size_t>(n_tokens * w.n_rows), -1.0f);
  matmul_interleaved(level, w, x.data(), n_tokens, y.data(), pool);
  return y;
}

TEST(Interleaved, RowsSurviveTheRepack) {
  for (TensorType type : kTypes) {
    const Matrix m = make_matrix(type, 48, 512, 7);
    std::vector<uint8_t> packed(interleaved_bytes(m.w));
    const WeightMatrix iw = interleave(m.w, packed.data());
    EXPECT_EQ(iw.layout, WeightLayout::kInterleaved16);
    EXPECT_EQ(packed.size(), repacked_size(type, m.rows.size())) << tensor_type_name(type);
    std::vector<uint8_t> row(m.w.row_stride);
    for (int64_t r = 0; r < m.w.n_rows; ++r) {
      extract_row(iw, r, row.data());
      ASSERT_EQ(0, std::memcmp(row.data(), m.rows.data() + r * m.w.row_stride, row.size()))
          << tensor_type_name(type) << " row " << r;
    }
  }
}

// Every level against the scalar tiles, bit for bit, for token counts that leave every
// remainder of the SIMD token steps and cross the driver's 64-token blocks; and each
// token's outputs equal to a call with that token alone.
TEST(Interleaved, EveryLevelGivesTheScalarBitsForAnyBatch) {
  ThreadPool pool(2);
  for (TensorType type : kTypes) {
    const int64_t n_cols = is_super_block(type) ? 1024 : 512;
    const Matrix m = make_matrix(type, 64, n_cols, 11);
    std::vector<uint8_t> packed(interleaved_bytes(m.w));
    const WeightMatrix iw = interleave(m.w, packed.data());
    const int64_t n_tokens = 70;
    const auto x = activations(n_tokens, n_cols, 3);
    const auto want = run(CpuLevel::kScalar, iw, x, n_tokens, pool);
    for (CpuLevel level : runnable_cpu_levels()) {
      const std::string what =
          std::string(cpu_level_name(level)) + " " + std::string(tensor_type_name(type));
      for (int64_t n : {1, 2, 3, 5, 7, 8, 9, 13, 70}) {
        const auto got = run(level, iw, x, n, pool);
        for (size_t i = 0; i < got.size(); ++i)
          ASSERT_TRUE(test::same_float(got[i], want[i]))
              << what << " n=" << n << " output " << i << ": " << got[i] << " vs " << want[i];
      }
      for (int64_t t : {0, 6, 41, 69}) {
        const std::vector<float> xt(x.begin() + t * n_cols, x.begin() + (t + 1) * n_cols);
        const auto alone = run(level, iw, xt, 1, pool);
        for (int64_t r = 0; r < iw.n_rows; ++r)
          ASSERT_TRUE(test::same_float(alone[static_cast<size_t>(r)],
                                       want[static_cast<size_t>(t * iw.n_rows + r)]))
              << what << " token " << t << " row " << r;
      }
    }
  }
  for (CpuLevel level : {CpuLevel::kAvx2, CpuLevel::kAvx512}) {
    if (level > detected_cpu_level())
      GTEST_LOG_(INFO) << "SKIPPED level " << cpu_level_name(level) << ": this CPU lacks it";
  }
  // The scalar pass above checked batch invariance only: the comparison of a level with the
  // scalar tiles needs a SIMD level.
  if (test::simd_levels().empty()) GTEST_SKIP() << test::kNoSimdLevel;
}

// The 256-bit VNNI tiles, which the AVX2 level uses on CPUs with AVX-VNNI: their VEX build
// where the CPU has AVX-VNNI, and the same source built with the EVEX forms where it has
// AVX-512, against the scalar tiles' bits for every type.
TEST(Interleaved, Vnni256TilesGiveTheScalarBits) {
  struct TileSet {
    const char* name;
    bool runs;
    const char* lacks;
    simd::InterleavedEntry (*entry)();
  };
  const TileSet sets[] = {
      {"AVX-VNNI (VEX)", cpu_has_avx_vnni(), "AVX-VNNI", simd::avxvnni_interleaved},
      {"AVX-512 VL VNNI (EVEX)", detected_cpu_level() >= CpuLevel::kAvx512, "AVX-512",
       simd::avx512vl_vnni256_interleaved},
  };
  ThreadPool pool(2);
  int ran = 0;
  for (const TileSet& set : sets) {
    if (!set.runs) {
      GTEST_LOG_(INFO) << "SKIPPED the " << set.name << " tiles: this CPU lacks " << set.lacks;
      continue;
    }
    ++ran;
    const simd::InterleavedEntry entry = set.entry();
    for (TensorType type : kTypes) {
      const int64_t n_cols = is_super_block(type) ? 512 : 256;
      const Matrix m = make_matrix(type, 32, n_cols, 17);
      std::vector<uint8_t> packed(interleaved_bytes(m.w));
      const WeightMatrix iw = interleave(m.w, packed.data());
      for (int64_t n : {1, 5, 70}) {
        const auto x = activations(n, n_cols, 23);
        const auto want = run(CpuLevel::kScalar, iw, x, n, pool);
        std::vector<float> got(want.size(), -1.0f);
        interleaved::matmul_with(entry, CpuLevel::kAvx2, iw, x.data(), n, got.data(), pool);
        for (size_t i = 0; i < got.size(); ++i)
          ASSERT_TRUE(test::same_float(got[i], want[i]))
              << set.name << " " << tensor_type_name(type) << " n=" << n << " output " << i;
      }
    }
  }
  if (ran == 0) GTEST_SKIP() << "SKIPPED: this CPU has neither AVX-VNNI nor AVX-512";
}

// The AVX-512 level has two BF16 tiles: vdpbf16ps (the level's tile where the CPU has
// AVX-512 BF16) and two FMAs per column pair (simd::avx512_interleaved()'s own). Both give the
// scalar bits on normal numbers.
TEST(Interleaved, BothAvx512Bf16TilesGiveTheScalarBits) {
  if (detected_cpu_level() < CpuLevel::kAvx512)
    GTEST_SKIP() << "SKIPPED: this CPU lacks the AVX-512 level";
  if (!cpu_has_avx512_bf16())
    GTEST_LOG_(INFO) << "SKIPPED the vdpbf16ps tile: this CPU lacks AVX-512 BF16";
  ThreadPool pool(2);
  const Matrix m = make_matrix(TensorType::kBF16, 48, 1024, 13);
  std::vector<uint8_t> packed(interleaved_bytes(m.w));
  const WeightMatrix iw = interleave(m.w, packed.data());
  for (int64_t n : {1, 9, 70}) {
    const auto x = activations(n, 1024, 21);
    const auto want = run(CpuLevel::kScalar, iw, x, n, pool);
    const auto by_default = run(CpuLevel::kAvx512, iw, x, n, pool);
    std::vector<float> by_fma(want.size(), -1.0f);
    interleaved::matmul_with(simd::avx512_interleaved(), CpuLevel::kAvx512, iw, x.data(), n,
                             by_fma.data(), pool);
    for (const std::vector<float>* got :
         {&by_default, static_cast<const std::vector<float>*>(&by_fma)}) {
      for (size_t i = 0; i < got->size(); ++i)
        ASSERT_TRUE(test::same_float((*got)[i], want[i]))
            << (got == &by_default ? "default" : "fma") << " tile, n=" << n << " output " << i
            << ": " << (*got)[i] << " vs " << want[i];
    }
  }
}

// The same products as the row layout's reference arithmetic, to f32 rounding of sums in
// another order (both are exact in their integer parts).
TEST(Interleaved, AgreesWithTheRowLayoutToRounding) {
  ThreadPool pool(1);
  for (TensorType type : kTypes) {
    const int64_t n_cols = 2048;
    Matrix m = make_matrix(type, 32, n_cols, 5);
    std::vector<uint8_t> packed(interleaved_bytes(m.w));
    const WeightMatrix iw = interleave(m.w, packed.data());
    const int64_t n_tokens = 6;
    const auto x = activations(n_tokens, n_cols, 9);
    std::vector<float> want(static_cast<size_t>(n_tokens * m.w.n_rows));
    matmul_reference(m.w, x.data(), n_tokens, want.data(), pool);
    const auto got = run(CpuLevel::kScalar, iw, x, n_tokens, pool);
    std::vector<float> mag(want.size());
    {
      // sum |w| * |x| per output bounds the rounding of either order.
      std::vector<float> row(static_cast<size_t>(n_cols));
      for (int64_t r = 0; r < m.w.n_rows; ++r) {
        dequantize_row(type, m.rows.data() + r * m.w.row_stride, row.data(), n_cols);
        for (int64_t t = 0; t < n_tokens; ++t) {
          double s = 0.0;
          for (int64_t c = 0; c < n_cols; ++c)
            s += std::fabs(row[static_cast<size_t>(c)] * x[static_cast<size_t>(t * n_cols + c)]);
          mag[static_cast<size_t>(t * m.w.n_rows + r)] = static_cast<float>(s);
        }
      }
    }
    for (size_t i = 0; i < got.size(); ++i) {
      EXPECT_NEAR(got[i], want[i], 1e-5 * mag[i] + 1e-30)
          << tensor_type_name(type) << " output " << i;
    }
  }
}

TEST(Interleaved, OnlyFittingMatricesAreRepacked) {
  const Matrix m = make_matrix(TensorType::kQ4_0, 48, 256, 1);
  WeightMatrix w = m.w;
  EXPECT_EQ(can_interleave(w), active_cpu_level() != CpuLevel::kScalar);
  w.n_rows = 40;  // not a multiple of 16
  EXPECT_FALSE(can_interleave(w));
  w = m.w;
  w.type = TensorType::kQ3_K;  // no layout
  EXPECT_FALSE(can_interleave(w));
  w.type = TensorType::kQ5_K;  // its 256-bit tiles lose to the row layout
  EXPECT_EQ(can_interleave(w), active_cpu_level() >= CpuLevel::kAvx512);
  EXPECT_FALSE(has_interleaved_layout(TensorType::kF32));
  for (TensorType type : kTypes)
    EXPECT_TRUE(has_interleaved_layout(type)) << tensor_type_name(type);
}

}  // namespace
}  // namespace hearth::kernels
