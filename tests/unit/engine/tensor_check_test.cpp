// --check-tensors' validation: NaN/Inf values of float tensors and NaN/Inf block scales of
// quantized ones are found and placed; valid data passes.
#include "engine/tensor_check.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cmath>
#include <cstring>
#include <filesystem>
#include <limits>
#include <string>
#include <vector>

#include "base/half.h"
#include "gguf/writer.h"
#include "kernels/block_formats.h"

namespace hearth::engine {
namespace {

constexpr float kNan = std::numeric_limits<float>::quiet_NaN();
constexpr float kInf = std::numeric_limits<float>::infinity();

std::vector<uint8_t> f32_bytes(const std::vector<float>& v) {
  std::vector<uint8_t> out(v.size() * sizeof(float));
  std::memcpy(out.data(), v.data(), out.size());
  return out;
}

std::vector<uint8_t> f16_bytes(const std::vector<float>& v) {
  std::vector<uint8_t> out(v.size() * sizeof(f16_bits));
  for (size_t i = 0; i < v.size(); ++i) {
    const f16_bits h = f32_to_f16(v[i]);
    std::memcpy(out.data() + i * 2, &h, 2);
  }
  return out;
}

// `n_blocks` Q4_K blocks whose d and dmin are 1, with `d` of block `bad` set to `value`.
std::vector<uint8_t> q4k_bytes(int n_blocks, int bad, float value, bool in_dmin) {
  std::vector<kernels::BlockQ4K> blocks(static_cast<size_t>(n_blocks));
  for (auto& b : blocks) {
    std::memset(&b, 0x11, sizeof(b));
    b.d = b.dmin = f32_to_f16(1.0f);
  }
  if (bad >= 0) (in_dmin ? blocks[bad].dmin : blocks[bad].d) = f32_to_f16(value);
  std::vector<uint8_t> out(blocks.size() * sizeof(kernels::BlockQ4K));
  std::memcpy(out.data(), blocks.data(), out.size());
  return out;
}

// The problem find_invalid_data reports for one tensor written and parsed back.
std::optional<std::string> problem_of(TensorType type, std::vector<int64_t> ne,
                                      std::vector<uint8_t> data) {
  gguf::Writer w;
  EXPECT_TRUE(w.add_tensor("t", type, std::move(ne), std::move(data)).is_ok());
  static std::vector<uint8_t> image;  // outlives the parsed File below
  image = w.to_bytes();
  auto file = gguf::File::parse(image);
  EXPECT_TRUE(file.is_ok());
  return find_invalid_data(file->tensors().front());
}

TEST(TensorCheckTest, FindsNanAndInfValues) {
  EXPECT_EQ(problem_of(TensorType::kF32, {4, 2}, f32_bytes({0, 1, -2, 3e38f, 4, 5, 6, 7})),
            std::nullopt);
  EXPECT_EQ(problem_of(TensorType::kF32, {4, 2}, f32_bytes({0, 1, 2, 3, 4, kNan, 6, 7})),
            "NaN at row 1, column 1");
  EXPECT_EQ(problem_of(TensorType::kF32, {4, 2}, f32_bytes({0, 1, 2, -kInf, 4, 5, 6, 7})),
            "infinite at row 0, column 3");
  EXPECT_EQ(problem_of(TensorType::kF16, {4}, f16_bytes({0, 1, 2, 65504})), std::nullopt);
  EXPECT_EQ(problem_of(TensorType::kF16, {4}, f16_bytes({0, 1, kNan, 3})),
            "NaN at row 0, column 2");
  std::vector<uint8_t> bf16 = {0x80, 0x3f, 0x80, 0x7f};  // 1.0, +inf
  EXPECT_EQ(problem_of(TensorType::kBF16, {2}, bf16), "infinite at row 0, column 1");
}

TEST(TensorCheckTest, FindsBadBlockScales) {
  // [512, 2]: two Q4_K blocks a row; the quants themselves are never NaN.
  EXPECT_EQ(problem_of(TensorType::kQ4_K, {512, 2}, q4k_bytes(4, -1, 0, false)), std::nullopt);
  EXPECT_EQ(problem_of(TensorType::kQ4_K, {512, 2}, q4k_bytes(4, 3, kNan, false)),
            "NaN block scale d in row 1, block 1");
  EXPECT_EQ(problem_of(TensorType::kQ4_K, {512, 2}, q4k_bytes(4, 2, kInf, true)),
            "infinite block scale dmin in row 1, block 0");
  // Q8_0: d leads each 34-byte block.
  std::vector<uint8_t> q8(2 * sizeof(kernels::BlockQ8_0), 0);
  const f16_bits nan16 = f32_to_f16(kNan);
  std::memcpy(q8.data() + sizeof(kernels::BlockQ8_0), &nan16, 2);
  EXPECT_EQ(problem_of(TensorType::kQ8_0, {64}, q8), "NaN block scale d in row 0, block 1");
  // MXFP4's exponent 0xff is the one invalid value.
  std::vector<uint8_t> mx(sizeof(kernels::BlockMxfp4), 0);
  EXPECT_EQ(problem_of(TensorType::kMXFP4, {32}, mx), std::nullopt);
  mx[0] = 0xff;
  EXPECT_EQ(problem_of(TensorType::kMXFP4, {32}, mx),
            "invalid (0xff) block scale e in row 0, block 0");
}

TEST(TensorCheckTest, NamesTheFirstBadTensor) {
  gguf::Writer w;
  ASSERT_TRUE(w.add_tensor("good", TensorType::kF32, {2}, f32_bytes({1, 2})).is_ok());
  ASSERT_TRUE(w.add_tensor("blk.0.bad", TensorType::kF32, {2}, f32_bytes({1, kNan})).is_ok());
  ASSERT_TRUE(w.add_tensor("blk.1.bad", TensorType::kF16, {2}, f16_bytes({kInf, 1})).is_ok());
  const auto dir = std::filesystem::temp_directory_path() /
                   ("hearth_tensor_check_" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  const std::string path = (dir / "bad.gguf").string();
  ASSERT_TRUE(w.write(path).is_ok());
  auto archive = gguf::Archive::open(path);
  ASSERT_TRUE(archive.is_ok()) << archive.status().message();
  const Status st = check_tensor_data(*archive, 2);
  EXPECT_EQ(st.code(), ErrorCode::kCorruptFile);
  EXPECT_EQ(st.message(), path +
                              ": tensor 'blk.0.bad' has invalid data: NaN at row 0, column 1 "
                              "(and 1 more tensors with invalid data)");
  gguf::Writer clean;
  ASSERT_TRUE(clean.add_tensor("good", TensorType::kF32, {2}, f32_bytes({1, 2})).is_ok());
  ASSERT_TRUE(clean.write(path).is_ok());
  auto clean_archive = gguf::Archive::open(path);
  ASSERT_TRUE(clean_archive.is_ok());
  EXPECT_TRUE(check_tensor_data(*clean_archive).is_ok());
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace hearth::engine
