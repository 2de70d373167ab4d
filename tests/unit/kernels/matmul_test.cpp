// matmul(): accuracy against a double-precision product of the dequantized operands, equality
// with the per-row vec_dot, and batch invariance (bitwise equal outputs across token counts
// and thread counts).
#include "kernels/matmul.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <string>
#include <vector>

#include "base/tensor_type.h"
#include "base/thread_pool.h"
#include "dot_reference.h"
#include "kernels/kernel_table.h"
#include "kernels/quant.h"
#include "test_util.h"

namespace hearth::kernels {
namespace {

const TensorType kAllTypes[] = {
    TensorType::kF32,  TensorType::kF16,    TensorType::kBF16,   TensorType::kQ8_0,
    TensorType::kQ4_0, TensorType::kQ4_1,   TensorType::kQ5_0,   TensorType::kQ5_1,
    TensorType::kQ2_K, TensorType::kQ3_K,   TensorType::kQ4_K,   TensorType::kQ5_K,
    TensorType::kQ6_K, TensorType::kIQ4_NL, TensorType::kIQ4_XS, TensorType::kMXFP4};

// A quantized random weight matrix, its rows `row_stride` bytes apart (>= the row size).
struct TestWeights {
  std::vector<uint8_t> bytes;
  WeightMatrix w;
};

TestWeights make_weights(TensorType type, int64_t n_rows, int64_t n_cols, uint32_t seed,
                         size_t extra_stride = 0) {
  const auto& t = traits_of(type);
  const size_t row_size = row_bytes(t, static_cast<uint64_t>(n_cols));
  TestWeights out;
  out.w = {type, n_cols, n_rows, row_size + extra_stride, nullptr};
  out.bytes.resize(out.w.row_stride * static_cast<size_t>(n_rows));
  const std::vector<float> values = test::gaussian(static_cast<size_t>(n_rows * n_cols), seed);
  for (int64_t r = 0; r < n_rows; ++r) {
    quantize_row(type, values.data() + r * n_cols, out.bytes.data() + r * out.w.row_stride, n_cols);
  }
  out.w.data = out.bytes.data();
  return out;
}

std::vector<float> run(const WeightMatrix& w, const std::vector<float>& x, int64_t n_tokens,
                       ThreadPool& pool) {
  std::vector<float> y(static_cast<size_t>(n_tokens * w.n_rows), -1.0f);
  matmul(w, x.data(), n_tokens, y.data(), pool);
  return y;
}

// One activation row converted by the reference from_float of `act`.
std::vector<uint8_t> convert_row(TensorType act, const float* x, int64_t n) {
  std::vector<uint8_t> out(row_bytes(traits_of(act), static_cast<uint64_t>(n)));
  reference_kernels(act).from_float(x, out.data(), n);
  return out;
}

bool bitwise_equal(const float* a, const float* b, size_t n) {
  return std::memcmp(a, b, n * sizeof(float)) == 0;
}

TEST(Matmul, SupportsEveryDequantizableType) {
  for (TensorType t : kAllTypes) EXPECT_TRUE(can_matmul(t)) << tensor_type_name(t);
  EXPECT_FALSE(can_matmul(TensorType::kQ8_K));
  EXPECT_FALSE(can_matmul(TensorType::kI8));
}

// Every type: y agrees with the double-precision product of the dequantized weights and
// the activations as converted to the weight's vec_dot_type (the conversion error is part
// of the arithmetic), to 1e-5 of sum |w x|.
TEST(Matmul, MatchesDequantizedProductOfConvertedActivations) {
  constexpr int64_t kRows = 13, kCols = 512, kTokens = 5;
  ThreadPool pool(2);
  const auto x = test::gaussian(static_cast<size_t>(kTokens * kCols), 77);
  for (TensorType type : kAllTypes) {
    SCOPED_TRACE(std::string(tensor_type_name(type)));
    const TestWeights tw = make_weights(type, kRows, kCols, 11, type == TensorType::kQ4_K ? 6 : 0);
    const auto y = run(tw.w, x, kTokens, pool);
    const TensorType act = reference_kernels(type).vec_dot_type;
    for (int64_t t = 0; t < kTokens; ++t) {
      const auto xq = convert_row(act, x.data() + t * kCols, kCols);
      for (int64_t r = 0; r < kRows; ++r) {
        const auto want =
            test::reference_dot(type, tw.bytes.data() + r * tw.w.row_stride, act, xq.data(), kCols);
        EXPECT_NEAR(y[t * kRows + r], want.value, 1e-5 * want.abs_sum)
            << "row " << r << " token " << t;
      }
    }
  }
}

// matmul is exactly the active table's vec_dot of each row with each converted token row
// (the activation conversion is the reference's on every level).
TEST(Matmul, EqualsVecDotOfEachRowAndToken) {
  constexpr int64_t kRows = 7, kCols = 256, kTokens = 3;
  ThreadPool pool(3);
  const auto x = test::gaussian(static_cast<size_t>(kTokens * kCols), 12);
  for (TensorType type : kAllTypes) {
    SCOPED_TRACE(std::string(tensor_type_name(type)));
    const TestWeights tw = make_weights(type, kRows, kCols, 13, 2);
    const auto y = run(tw.w, x, kTokens, pool);
    const TypeKernels& k = active_kernels(type);
    for (int64_t t = 0; t < kTokens; ++t) {
      const auto xq = convert_row(k.vec_dot_type, x.data() + t * kCols, kCols);
      for (int64_t r = 0; r < kRows; ++r) {
        const float want = k.vec_dot(tw.bytes.data() + r * tw.w.row_stride, xq.data(), kCols);
        EXPECT_TRUE(test::same_float(y[t * kRows + r], want)) << "row " << r << " token " << t;
      }
    }
  }
}

// Token t's outputs are the same bits whether it runs alone or in a batch of 9, on 1, 2
// or 3 threads.
TEST(Matmul, IsBatchAndThreadInvariant) {
  constexpr int64_t kRows = 21, kCols = 768, kTokens = 9;
  ThreadPool one(1), two(2), three(3);
  const auto x = test::gaussian(static_cast<size_t>(kTokens * kCols), 5);
  for (TensorType type : kAllTypes) {
    SCOPED_TRACE(std::string(tensor_type_name(type)));
    const TestWeights tw = make_weights(type, kRows, kCols, 3);
    const auto batch = run(tw.w, x, kTokens, two);
    EXPECT_TRUE(bitwise_equal(batch.data(), run(tw.w, x, kTokens, one).data(), batch.size()));
    EXPECT_TRUE(bitwise_equal(batch.data(), run(tw.w, x, kTokens, three).data(), batch.size()));
    for (int64_t t = 0; t < kTokens; ++t) {
      const std::vector<float> xt(x.begin() + t * kCols, x.begin() + (t + 1) * kCols);
      for (ThreadPool* pool : {&one, &two}) {
        const auto single = run(tw.w, xt, 1, *pool);
        ASSERT_TRUE(bitwise_equal(single.data(), batch.data() + t * kRows, kRows)) << "token " << t;
      }
    }
  }
}

// An f32 weight that is not 4-byte aligned takes the copying path; same bits.
TEST(Matmul, MisalignedF32WeightsGiveTheSameResult) {
  constexpr int64_t kRows = 6, kCols = 40, kTokens = 3;
  ThreadPool pool(2);
  const TestWeights tw = make_weights(TensorType::kF32, kRows, kCols, 8);
  std::vector<uint8_t> shifted(tw.bytes.size() + 2);
  std::memcpy(shifted.data() + 2, tw.bytes.data(), tw.bytes.size());
  WeightMatrix misaligned = tw.w;
  misaligned.data = shifted.data() + 2;
  const auto x = test::gaussian(static_cast<size_t>(kTokens * kCols), 9);
  const auto a = run(tw.w, x, kTokens, pool);
  const auto b = run(misaligned, x, kTokens, pool);
  EXPECT_TRUE(bitwise_equal(a.data(), b.data(), a.size()));
}

TEST(Matmul, ZeroTokensOrRowsWritesNothing) {
  ThreadPool pool(2);
  const TestWeights tw = make_weights(TensorType::kQ8_0, 4, 64, 1);
  std::vector<float> y(4, 3.0f);
  const auto x = test::gaussian(64, 1);
  matmul(tw.w, x.data(), 0, y.data(), pool);
  EXPECT_EQ(y, std::vector<float>(4, 3.0f));
}

// The reference table is what the public API runs until faster kernels are registered;
// either way each readable type has all three entries.
TEST(Matmul, DispatchTableIsComplete) {
  for (TensorType t : kAllTypes) {
    const TypeKernels& k = reference_kernels(t);
    EXPECT_NE(k.dequantize_row, nullptr) << tensor_type_name(t);
    EXPECT_NE(k.quantize_row, nullptr) << tensor_type_name(t);
    EXPECT_NE(k.matmul, nullptr) << tensor_type_name(t);
    EXPECT_NE(k.vec_dot, nullptr) << tensor_type_name(t);
    EXPECT_NE(reference_kernels(k.vec_dot_type).from_float, nullptr) << tensor_type_name(t);
    EXPECT_NE(active_kernels(t).matmul, nullptr) << tensor_type_name(t);
  }
  EXPECT_EQ(reference_kernels(static_cast<TensorType>(999)).matmul, nullptr);
}

}  // namespace
}  // namespace hearth::kernels

namespace hearth::kernels {
namespace {

// dot_converted_rows (attention's scores of several heads over a run of cached K rows) gives
// every output dot_converted's bits, for the KV cache types, with rows further apart than
// their size and counts around the tile shapes.
TEST(Matmul, DotConvertedRowsEqualsDotConverted) {
  for (TensorType type :
       {TensorType::kF16, TensorType::kF32, TensorType::kBF16, TensorType::kQ8_0}) {
    const int64_t n = 64, n_rows = 11, n_conv = 5;
    const TestWeights tw = make_weights(type, n_rows, n, 21, 24);
    const size_t conv_bytes = converted_row_bytes(type, n);
    std::vector<uint8_t> conv(conv_bytes * n_conv);
    const auto x = test::gaussian(static_cast<size_t>(n * n_conv), 8);
    for (int64_t t = 0; t < n_conv; ++t)
      convert_for_dot(type, x.data() + t * n, conv.data() + t * conv_bytes, n);
    std::vector<float> y(static_cast<size_t>(n_rows * n_conv));
    dot_converted_rows(type, tw.bytes.data(), tw.w.row_stride, n_rows, conv.data(), conv_bytes,
                       n_conv, n, y.data());
    for (int64_t t = 0; t < n_conv; ++t) {
      for (int64_t r = 0; r < n_rows; ++r) {
        const float want = dot_converted(type, tw.bytes.data() + r * tw.w.row_stride,
                                         conv.data() + t * conv_bytes, n);
        EXPECT_TRUE(bitwise_equal(&y[static_cast<size_t>(t * n_rows + r)], &want, 1))
            << tensor_type_name(type) << " row " << r << " vector " << t;
      }
    }
  }
}

}  // namespace
}  // namespace hearth::kernels
