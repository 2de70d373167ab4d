#include "gguf/file.h"

#include <gtest/gtest.h>

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

}  // namespace
}  // namespace hearth::gguf
