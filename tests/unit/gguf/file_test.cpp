#include "gguf/file.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "fuzz/gguf_exercise.h"
#include "gguf/writer.h"
#include "support/test_paths.h"

namespace hearth::gguf {
namespace {

TEST(GgufFile, ReadsStories260K) {
  auto file = File::open(test::shared_path("models/stories260K.gguf"));
  ASSERT_TRUE(file.is_ok()) << file.status().to_string();
  EXPECT_EQ(file->version(), 3u);
  auto arch = file->get_string("general.architecture");
  ASSERT_TRUE(arch.is_ok());
  EXPECT_EQ(*arch, "llama");
  auto n_embd = file->get_u32("llama.embedding_length");
  ASSERT_TRUE(n_embd.is_ok());
  EXPECT_EQ(*n_embd, 64u);
  const TensorInfo* emb = file->find_tensor("token_embd.weight");
  ASSERT_NE(emb, nullptr);
  EXPECT_EQ(emb->ne[0], 64);
  EXPECT_EQ(emb->ne[1], 512);
}

TEST(GgufWriter, RoundTripsMetadataAndTensors) {
  Writer w;
  w.set_string("general.architecture", "llama");
  w.set_u32("llama.block_count", 2);
  w.set_f32("x.f", 1.5f);
  w.set_string_array("tok", {"a", "bc", ""});
  std::vector<uint8_t> data(4 * 6, 7);
  ASSERT_TRUE(w.add_tensor("t0", TensorType::kF32, {3, 2}, data).is_ok());
  ASSERT_TRUE(w.add_tensor("t1", TensorType::kF32, {1}, std::vector<uint8_t>(4, 1)).is_ok());
  const auto bytes = w.to_bytes();
  auto f = File::parse(bytes);
  ASSERT_TRUE(f.is_ok()) << f.status().to_string();
  EXPECT_EQ(*f->get_u32("llama.block_count"), 2u);
  EXPECT_FLOAT_EQ(*f->get_f32("x.f"), 1.5f);
  auto tok = f->get_array("tok", ValueType::kString);
  ASSERT_TRUE(tok.is_ok());
  EXPECT_EQ((*tok)->size(), 3u);
  EXPECT_EQ((*tok)->string_at(1), "bc");
  ASSERT_EQ(f->tensors().size(), 2u);
  EXPECT_EQ(f->tensors()[1].offset, 32u);
  EXPECT_EQ(f->tensors()[0].data[0], 7);
  // Wrong type is an error that names the key.
  auto wrong = f->get_u32("x.f");
  ASSERT_FALSE(wrong.is_ok());
  EXPECT_NE(wrong.status().message().find("x.f"), std::string::npos);
}

TEST(GgufFile, OpenMapsTheFileAndTensorsPointIntoIt) {
  const std::string dir = test::make_temp_dir("gguf-open");
  const std::string path = dir + "/m.gguf";
  Writer w;
  w.set_string("general.architecture", "llama");
  std::vector<uint8_t> data(64 * 4);
  for (size_t i = 0; i < data.size(); ++i) data[i] = static_cast<uint8_t>(i);
  ASSERT_TRUE(w.add_tensor("w", TensorType::kF32, {16, 4}, data).is_ok());
  ASSERT_TRUE(w.add_tensor("v", TensorType::kQ4_0, {64}, std::vector<uint8_t>(36, 9)).is_ok());
  ASSERT_TRUE(w.write(path).is_ok());
  EXPECT_EQ(test::read_file(path).size(), w.to_bytes().size());
  {
    auto f = File::open(path);
    ASSERT_TRUE(f.is_ok()) << f.status().to_string();
    EXPECT_EQ(f->name(), path);
    EXPECT_EQ(f->file_size(), std::filesystem::file_size(path));
    const TensorInfo* t = f->find_tensor("w");
    ASSERT_NE(t, nullptr);
    EXPECT_EQ(t->n_bytes, data.size());
    EXPECT_EQ(t->n_rows(), 4);
    EXPECT_EQ(t->shape_string(), "[16, 4]");
    EXPECT_EQ(t->data, f->bytes().data() + f->data_offset());
    EXPECT_EQ(std::memcmp(t->data, data.data(), data.size()), 0);
    // The data offset is aligned from the start of the file, so with a page-aligned
    // mapping every tensor is 32-byte aligned in memory.
    EXPECT_EQ(reinterpret_cast<uintptr_t>(t->data) % 32, 0u);
    EXPECT_EQ(reinterpret_cast<uintptr_t>(f->find_tensor("v")->data) % 32, 0u);
    EXPECT_EQ(f->find_tensor("v")->n_bytes, 36u);
    EXPECT_EQ(f->find_tensor("nope"), nullptr);
    // Moving the File keeps every view valid.
    File moved = std::move(f).value();
    uint64_t checksum = 0;
    EXPECT_EQ(fuzz::exercise(moved, checksum), "");
    EXPECT_EQ(*moved.get_string("general.architecture"), "llama");
  }
  std::filesystem::remove_all(dir);
}

TEST(GgufFile, OpenReportsFileSystemErrors) {
  const std::string dir = test::make_temp_dir("gguf-open-errors");
  EXPECT_EQ(File::open(dir + "/missing.gguf").status().code(), ErrorCode::kNotFound);
  EXPECT_EQ(File::open(dir).status().code(), ErrorCode::kInvalidArgument);
  std::ofstream(dir + "/empty.gguf").close();
  auto empty = File::open(dir + "/empty.gguf");
  EXPECT_EQ(empty.status().code(), ErrorCode::kCorruptFile);
  EXPECT_NE(empty.status().message().find(dir + "/empty.gguf: header: "), std::string::npos)
      << empty.status().message();
  std::filesystem::remove_all(dir);
}

TEST(GgufWriter, RefusesTensorsItCannotEncode) {
  Writer w;
  const std::vector<uint8_t> four(4);
  EXPECT_TRUE(w.add_tensor("t", TensorType::kF32, {1}, four).is_ok());
  EXPECT_EQ(w.add_tensor("t", TensorType::kF32, {1}, four).code(), ErrorCode::kInvalidArgument);
  EXPECT_FALSE(w.add_tensor("", TensorType::kF32, {1}, four).is_ok());
  EXPECT_FALSE(w.add_tensor(std::string(64, 'x'), TensorType::kF32, {1}, four).is_ok());
  EXPECT_TRUE(w.add_tensor(std::string(63, 'x'), TensorType::kF32, {1}, four).is_ok());
  EXPECT_FALSE(w.add_tensor("u", TensorType::kF32, {}, {}).is_ok());
  EXPECT_FALSE(w.add_tensor("u", TensorType::kF32, {1, 1, 1, 1, 1}, four).is_ok());
  EXPECT_FALSE(w.add_tensor("u", TensorType::kF32, {-1}, {}).is_ok());
  EXPECT_FALSE(w.add_tensor("u", TensorType::kF32, {1ll << 32, 1ll << 32}, {}).is_ok());
  EXPECT_FALSE(w.add_tensor("u", TensorType::kQ4_0, {16}, std::vector<uint8_t>(9)).is_ok());
  EXPECT_FALSE(w.add_tensor("u", TensorType::kF32, {2}, four).is_ok());
  const auto bytes = w.to_bytes();
  EXPECT_TRUE(File::parse(bytes).is_ok());
}

TEST(GgufWriter, WriteAndToBytesAgree) {
  const std::string dir = test::make_temp_dir("gguf-writer");
  Writer w;
  w.set_alignment(64);
  w.set_u16("x", 7);
  ASSERT_TRUE(w.add_tensor("a", TensorType::kF16, {3}, std::vector<uint8_t>(6, 1)).is_ok());
  ASSERT_TRUE(w.add_tensor("b", TensorType::kF16, {5}, std::vector<uint8_t>(10, 2)).is_ok());
  ASSERT_TRUE(w.write(dir + "/w.gguf").is_ok());
  const auto bytes = w.to_bytes();
  EXPECT_EQ(test::read_file(dir + "/w.gguf"), std::string(bytes.begin(), bytes.end()));
  auto f = File::parse(bytes);
  ASSERT_TRUE(f.is_ok()) << f.status().to_string();
  EXPECT_EQ(f->alignment(), 64u);
  EXPECT_EQ(f->tensors()[1].offset, 64u);
  EXPECT_EQ(w.write(dir + "/no/such/dir.gguf").code(), ErrorCode::kIo);
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace hearth::gguf
