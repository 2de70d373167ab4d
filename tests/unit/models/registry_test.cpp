// Model loading: each architecture's tensor set is checked exactly, and files that do
// not fit get an error naming the key or tensor at fault.
#include "models/registry.h"

#include <gtest/gtest.h>

#include <array>
#include <cmath>
#include <filesystem>
#include <functional>

#include "gguf/writer.h"
#include "support/test_paths.h"

namespace hearth::models {
namespace {

constexpr int64_t kE = 32, kH = 4, kHkv = 2, kD = 8, kF = 64, kV = 16;

std::vector<uint8_t> f32_bytes(int64_t n, float value = 0.01f) {
  std::vector<float> v(static_cast<size_t>(n), value);
  std::vector<uint8_t> b(v.size() * 4);
  std::memcpy(b.data(), v.data(), b.size());
  return b;
}

// A minimal one-layer model; `edit` may change the writer before tensors are added and
// `skip` names a tensor to leave out.
struct TinySpec {
  std::string arch = "llama";
  std::string skip;
  std::function<void(gguf::Writer&)> edit;
  std::vector<std::pair<std::string, std::vector<int64_t>>> extra;
  std::vector<int64_t> q_shape = {kE, kH* kD};
};

std::string write_tiny(const TinySpec& spec, const std::string& dir) {
  gguf::Writer w;
  const std::string a = spec.arch;
  w.set_string("general.architecture", a);
  w.set_u32(a + ".context_length", 64);
  w.set_u32(a + ".embedding_length", kE);
  w.set_u32(a + ".block_count", 1);
  w.set_u32(a + ".feed_forward_length", kF);
  w.set_u32(a + ".attention.head_count", kH);
  w.set_u32(a + ".attention.head_count_kv", kHkv);
  w.set_f32(a + ".attention.layer_norm_rms_epsilon", 1e-5f);
  w.set_u32(a + ".vocab_size", kV);
  if (spec.edit) spec.edit(w);
  std::vector<std::pair<std::string, std::vector<int64_t>>> tensors = {
      {"token_embd.weight", {kE, kV}},
      {"output_norm.weight", {kE}},
      {"blk.0.attn_norm.weight", {kE}},
      {"blk.0.attn_q.weight", spec.q_shape},
      {"blk.0.attn_k.weight", {kE, kHkv * kD}},
      {"blk.0.attn_v.weight", {kE, kHkv * kD}},
      {"blk.0.attn_output.weight", {kH * kD, kE}},
      {"blk.0.ffn_norm.weight", {kE}},
      {"blk.0.ffn_gate.weight", {kE, kF}},
      {"blk.0.ffn_up.weight", {kE, kF}},
      {"blk.0.ffn_down.weight", {kF, kE}}};
  tensors.insert(tensors.end(), spec.extra.begin(), spec.extra.end());
  for (const auto& [name, ne] : tensors) {
    if (name == spec.skip) continue;
    int64_t n = 1;
    for (int64_t d : ne) n *= d;
    EXPECT_TRUE(w.add_tensor(name, TensorType::kF32, ne, f32_bytes(n)).is_ok());
  }
  const std::string path = dir + "/tiny-" + std::to_string(std::rand()) + ".gguf";
  EXPECT_TRUE(w.write(path).is_ok());
  return path;
}

class RegistryTest : public ::testing::Test {
 protected:
  void SetUp() override { dir_ = test::make_temp_dir("registry"); }
  void TearDown() override { std::filesystem::remove_all(dir_); }
  Status load(const TinySpec& spec) { return load_model(write_tiny(spec, dir_)).status(); }
  std::string dir_;
};

TEST_F(RegistryTest, LoadsAMinimalModel) {
  auto m = load_model(write_tiny({}, dir_));
  ASSERT_TRUE(m.is_ok()) << m.status().to_string();
  EXPECT_EQ((*m)->hparams().n_vocab, kV);
  EXPECT_EQ((*m)->hparams().head_dim, kD);
  EXPECT_EQ((*m)->weights().output.data, (*m)->weights().token_embd.data)
      << "absent output.weight ties to embeddings";
}

TEST_F(RegistryTest, LoadsEveryTinyModel) {
  const std::string dir = test::shared_path("models/tiny");
  int n = 0;
  for (const auto& e : std::filesystem::directory_iterator(dir)) {
    auto m = load_model(e.path().string());
    EXPECT_TRUE(m.is_ok()) << e.path() << ": " << m.status().to_string();
    ++n;
  }
  EXPECT_GE(n, 20);
}

TEST_F(RegistryTest, UnknownArchitectureIsUnsupported) {
  TinySpec s;
  s.arch = "mamba";
  Status st = load(s);
  EXPECT_EQ(st.code(), ErrorCode::kUnsupported);
  EXPECT_NE(st.message().find("mamba"), std::string::npos);
}

TEST_F(RegistryTest, MissingTensorIsNamed) {
  TinySpec s;
  s.skip = "blk.0.ffn_up.weight";
  Status st = load(s);
  EXPECT_EQ(st.code(), ErrorCode::kCorruptFile);
  EXPECT_NE(st.message().find("blk.0.ffn_up.weight"), std::string::npos) << st.message();
}

TEST_F(RegistryTest, WrongShapeIsNamed) {
  TinySpec s;
  s.q_shape = {kE, kH * kD + 1};
  Status st = load(s);
  EXPECT_EQ(st.code(), ErrorCode::kCorruptFile);
  EXPECT_NE(st.message().find("attn_q"), std::string::npos) << st.message();
}

TEST_F(RegistryTest, UnexpectedTensorIsRefused) {
  TinySpec s;
  s.extra = {{"blk.0.mystery.weight", {kE}}};
  Status st = load(s);
  EXPECT_EQ(st.code(), ErrorCode::kCorruptFile);
  EXPECT_NE(st.message().find("mystery"), std::string::npos);
}

TEST_F(RegistryTest, Qwen2RequiresBiases) {
  TinySpec s;
  s.arch = "qwen2";
  Status st = load(s);
  EXPECT_EQ(st.code(), ErrorCode::kCorruptFile);
  EXPECT_NE(st.message().find("attn_q.bias"), std::string::npos) << st.message();
}

// qwen2vl (biases optional, as the reference loads them) takes its M-RoPE sections from
// rope.dimension_sections, which it needs; qwen3vl's deepstack layers widen the input rows.
TEST_F(RegistryTest, MultiRopeSectionsAndDeepstackAreRead) {
  TinySpec s;
  s.arch = "qwen2vl";
  Status st = load(s);
  EXPECT_EQ(st.code(), ErrorCode::kCorruptFile);
  EXPECT_NE(st.message().find("qwen2vl.rope.dimension_sections"), std::string::npos)
      << st.message();
  const std::vector<int32_t> sections = {1, 1, 2};
  s.edit = [&](gguf::Writer& w) { w.set_i32_array("qwen2vl.rope.dimension_sections", sections); };
  auto m = load_model(write_tiny(s, dir_));
  ASSERT_TRUE(m.is_ok()) << m.status().to_string();
  EXPECT_EQ((*m)->hparams().mrope, engine::MultiRope::kSections);
  EXPECT_EQ((*m)->hparams().rope_sections, (std::array<int32_t, 4>{1, 1, 2, 0}));
  EXPECT_EQ((*m)->hparams().n_embd_inp(), kE);
  const std::vector<int32_t> too_many = {1, 1, 1, 1, 1};
  s.edit = [&](gguf::Writer& w) { w.set_i32_array("qwen2vl.rope.dimension_sections", too_many); };
  EXPECT_EQ(load(s).code(), ErrorCode::kCorruptFile);
  const std::vector<int32_t> none = {0, 0, 0, 4};
  s.edit = [&](gguf::Writer& w) { w.set_i32_array("qwen2vl.rope.dimension_sections", none); };
  EXPECT_EQ(load(s).code(), ErrorCode::kCorruptFile);

  TinySpec q3;
  q3.arch = "qwen3vl";
  q3.extra = {{"blk.0.attn_q_norm.weight", {kD}}, {"blk.0.attn_k_norm.weight", {kD}}};
  q3.edit = [&](gguf::Writer& w) {
    w.set_i32_array("qwen3vl.rope.dimension_sections", sections);
    w.set_u32("qwen3vl.n_deepstack_layers", 1);
  };
  auto m3 = load_model(write_tiny(q3, dir_));
  ASSERT_TRUE(m3.is_ok()) << m3.status().to_string();
  EXPECT_EQ((*m3)->hparams().mrope, engine::MultiRope::kInterleaved);
  EXPECT_EQ((*m3)->hparams().n_embd_inp(), 2 * kE);
  q3.edit = [&](gguf::Writer& w) {
    w.set_i32_array("qwen3vl.rope.dimension_sections", sections);
    w.set_u32("qwen3vl.n_deepstack_layers", 2);  // more than the one layer
  };
  st = load(q3);
  EXPECT_EQ(st.code(), ErrorCode::kCorruptFile);
  EXPECT_NE(st.message().find("n_deepstack_layers"), std::string::npos) << st.message();
}

TEST_F(RegistryTest, MistypedHyperParameterIsNamed) {
  TinySpec s;
  s.edit = [](gguf::Writer& w) { w.set_i32("llama.block_count", 1); };
  Status st = load(s);
  EXPECT_EQ(st.code(), ErrorCode::kCorruptFile);
  EXPECT_NE(st.message().find("llama.block_count"), std::string::npos) << st.message();
}

TEST_F(RegistryTest, InconsistentHeadsAreRefused) {
  TinySpec s;
  s.edit = [](gguf::Writer& w) { w.set_u32("llama.attention.head_count_kv", 3); };
  EXPECT_EQ(load(s).code(), ErrorCode::kCorruptFile);
}

TEST_F(RegistryTest, RopeScalingKeysAreRead) {
  TinySpec linear;
  linear.edit = [](gguf::Writer& w) {
    w.set_string("llama.rope.scaling.type", "linear");
    w.set_f32("llama.rope.scaling.factor", 8.0f);
    w.set_f32("llama.rope.freq_base", 500000.0f);
  };
  auto m = load_model(write_tiny(linear, dir_));
  ASSERT_TRUE(m.is_ok()) << m.status().to_string();
  EXPECT_FLOAT_EQ((*m)->hparams().rope.freq_scale, 0.125f);
  EXPECT_FLOAT_EQ((*m)->hparams().rope.freq_base, 500000.0f);
  EXPECT_EQ((*m)->hparams().rope.yarn_ext_factor, 0.0f);

  TinySpec yarn;
  yarn.edit = [](gguf::Writer& w) {
    w.set_string("llama.rope.scaling.type", "yarn");
    w.set_f32("llama.rope.scaling.factor", 4.0f);
    w.set_u32("llama.rope.scaling.original_context_length", 32);
  };
  m = load_model(write_tiny(yarn, dir_));
  ASSERT_TRUE(m.is_ok()) << m.status().to_string();
  const auto& r = (*m)->hparams().rope;
  EXPECT_FLOAT_EQ(r.freq_scale, 0.25f);
  EXPECT_EQ(r.yarn_ext_factor, 1.0f);
  EXPECT_EQ(r.n_ctx_orig, 32);
  // The kernel multiplies by (1 + 0.1 ln s) itself, so the stored factor cancels it.
  EXPECT_NEAR(r.attn_factor * (1.0f + 0.1f * std::log(4.0f)), 1.0f + 0.1f * std::log(4.0f), 1e-6);

  TinySpec bad;
  bad.edit = [](gguf::Writer& w) { w.set_string("llama.rope.scaling.type", "spiral"); };
  EXPECT_EQ(load(bad).code(), ErrorCode::kUnsupported);
}

TEST_F(RegistryTest, RopeFreqsTensorIsUsedWhenPresent) {
  TinySpec s;
  s.extra = {{"rope_freqs.weight", {kD / 2}}};
  auto m = load_model(write_tiny(s, dir_));
  ASSERT_TRUE(m.is_ok()) << m.status().to_string();
  EXPECT_EQ((*m)->weights().rope_freqs.size(), static_cast<size_t>(kD / 2));
}

TEST_F(RegistryTest, MissingFileIsNotFound) {
  EXPECT_EQ(load_model(dir_ + "/nope.gguf").status().code(), ErrorCode::kNotFound);
}

}  // namespace
}  // namespace hearth::models
