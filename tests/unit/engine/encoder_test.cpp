// Encoders (bert, nomic-bert, jina-bert-v2, modern-bert) on random-weight models from
// hearth-synth: each token's final hidden state depends on the whole of its sequence
// (non-causal; within the window on modern-bert's local layers) and on nothing else of the
// batch (two sequences packed into one forward call give each one's rows alone, bit for bit);
// no logits, and no position past the model's position table.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>

#include "engine/context.h"
#include "models/registry.h"
#include "support/test_paths.h"
#include "tools/synth/synth.h"

namespace hearth::engine {
namespace {

class Encoder : public ::testing::TestWithParam<std::string> {
 protected:
  void SetUp() override {
    const std::string vocab = test::shared_path("models/vocab/ggml-vocab-bert-bge.gguf");
    if (!test::file_exists(vocab)) GTEST_SKIP() << "SKIPPED: " << vocab << " is missing";
    dir_ = test::make_temp_dir("encoder");
    synth::SynthParams p;
    p.arch = GetParam();
    p.n_embd = 64;
    p.n_layer = 2;
    p.n_head = 4;
    p.n_head_kv = 4;
    p.n_ff = 128;
    p.n_ctx = 64;
    p.type = TensorType::kF16;
    p.vocab_path = vocab;
    p.pooling = 1;
    p.qk_norm = true;  // jina-bert-v2's optional parts
    p.attn_norm_2 = true;
    p.n_swa = 4;  // modern-bert: every layer local, keys within 2 positions
    p.swa_pattern = 0;
    const std::string path = dir_ + "/encoder.gguf";
    ASSERT_TRUE(synth::synthesize(p, path).is_ok());
    auto m = models::load_model(path);
    ASSERT_TRUE(m.is_ok()) << m.status().to_string();
    model_ = *m;
  }
  void TearDown() override {
    if (!dir_.empty()) std::filesystem::remove_all(dir_);
  }

  std::unique_ptr<Context> context() {
    ContextParams cp;
    cp.n_ctx = 256;
    cp.n_seq_max = 2;
    cp.n_threads = 2;
    cp.embeddings = true;
    auto ctx = Context::create(model_, cp);
    EXPECT_TRUE(ctx.is_ok());
    return std::move(*ctx);
  }

  // Final hidden states of `seqs` decoded in one call, per sequence [n][E].
  std::vector<std::vector<float>> rows(const std::vector<std::vector<int32_t>>& seqs) {
    auto ctx = context();
    Batch b;
    for (size_t s = 0; s < seqs.size(); ++s)
      for (size_t i = 0; i < seqs[s].size(); ++i)
        b.add(seqs[s][i], static_cast<int32_t>(i), static_cast<SeqId>(s), false);
    EXPECT_TRUE(ctx->decode(b).is_ok());
    std::vector<std::vector<float>> out(seqs.size());
    for (int32_t i = 0; i < b.size(); ++i) {
      const auto row = ctx->embedding(i);
      auto& o = out[static_cast<size_t>(b[i].seq)];
      o.insert(o.end(), row.begin(), row.end());
    }
    return out;
  }

  std::string dir_;
  std::shared_ptr<const Model> model_;
};

TEST_P(Encoder, PackedSequencesGiveTheirRowsAlone) {
  const std::vector<int32_t> a = {101, 7592, 2088, 102}, b = {101, 2023, 2003, 1037, 3231, 102};
  const auto together = rows({a, b});
  EXPECT_EQ(together[0], rows({a})[0]);
  EXPECT_EQ(together[1], rows({b})[0]);
}

TEST_P(Encoder, EveryTokenSeesItsWholeSequence) {
  const auto E = static_cast<size_t>(model_->hparams().n_embd);
  const auto one = rows({{101, 7592, 2088, 102}})[0];
  const auto other = rows({{101, 7592, 3000, 102}})[0];
  const std::vector<float> first_one(one.begin(), one.begin() + static_cast<std::ptrdiff_t>(E));
  const std::vector<float> first_other(other.begin(),
                                       other.begin() + static_cast<std::ptrdiff_t>(E));
  EXPECT_NE(first_one, first_other) << "token 0 must depend on token 2";
}

// Rows added with output = false (the pooling does not read them) get no final state, and
// the rows kept are the ones a full computation gives.
TEST_P(Encoder, UnreadRowsAreSkippedKeptRowsUnchanged) {
  const std::vector<int32_t> a = {101, 7592, 2088, 102}, b = {101, 2023, 2003, 1037, 3231, 102};
  const auto full = rows({a, b});
  auto ctx = context();
  Batch batch;
  for (size_t i = 0; i < a.size(); ++i) batch.add(a[i], static_cast<int32_t>(i), 0, false, i == 0);
  for (size_t i = 0; i < b.size(); ++i)
    batch.add(b[i], static_cast<int32_t>(i), 1, false, i + 1 == b.size());
  ASSERT_TRUE(ctx->decode(batch).is_ok());
  const auto E = static_cast<std::ptrdiff_t>(model_->hparams().n_embd);
  const auto first_a = ctx->embedding(0);
  const auto last_b = ctx->embedding(batch.size() - 1);
  EXPECT_EQ(std::vector<float>(first_a.begin(), first_a.end()),
            std::vector<float>(full[0].begin(), full[0].begin() + E));
  EXPECT_EQ(std::vector<float>(last_b.begin(), last_b.end()),
            std::vector<float>(full[1].end() - E, full[1].end()));
  EXPECT_TRUE(ctx->embedding(1).empty());
  EXPECT_TRUE(ctx->embedding(static_cast<int32_t>(a.size())).empty());
}

// modern-bert's local layers: with two layers of a +-2 window, token 0 sees tokens up to 4
// positions on, and nothing further.
TEST_P(Encoder, LocalLayersSeeOnlyTheirWindow) {
  if (GetParam() != "modern-bert") GTEST_SKIP() << "SKIPPED: only modern-bert has local layers";
  const auto E = static_cast<std::ptrdiff_t>(model_->hparams().n_embd);
  const std::vector<int32_t> base = {101, 7592, 2088, 2023, 2003, 1037, 3231, 102};
  const auto first_row = [&](std::vector<int32_t> tokens) {
    const auto r = rows({tokens})[0];
    return std::vector<float>(r.begin(), r.begin() + E);
  };
  auto near = base, far = base;
  near[4] = 3000;
  far[5] = 3000;
  EXPECT_NE(first_row(near), first_row(base)) << "token 0 must see token 4 after two layers";
  EXPECT_EQ(first_row(far), first_row(base)) << "token 0 must not see token 5";
}

TEST_P(Encoder, NoLogitsAndNoPositionPastTheTable) {
  EXPECT_FALSE(model_->has_lm_head());
  auto ctx = context();
  Batch b;
  b.add(101, 0, 0, true);
  EXPECT_EQ(ctx->decode(b).code(), ErrorCode::kInvalidArgument);
  if (GetParam() == "bert") {
    Batch far;
    for (int32_t i = 0; i < 65; ++i) far.add(101, i, 0, false);
    EXPECT_EQ(context()->decode(far).code(), ErrorCode::kInvalidArgument);
  }
}

// A reranker's head: tanh(cls r + b), then cls.output r + b, on the first row.
TEST(EncoderRankHead, ClassifierOnTheFirstRow) {
  const std::string vocab = test::shared_path("models/vocab/ggml-vocab-bert-bge.gguf");
  if (!test::file_exists(vocab)) GTEST_SKIP() << "SKIPPED: " << vocab << " is missing";
  const std::string dir = test::make_temp_dir("rank-head");
  synth::SynthParams p;
  p.arch = "bert";
  p.n_embd = 32;
  p.n_layer = 1;
  p.n_head = 2;
  p.n_head_kv = 2;
  p.n_ff = 64;
  p.n_ctx = 32;
  p.type = TensorType::kF32;
  p.vocab_path = vocab;
  p.pooling = 4;
  p.n_cls_out = 2;
  ASSERT_TRUE(synth::synthesize(p, dir + "/rank.gguf").is_ok());
  auto m = models::load_model(dir + "/rank.gguf");
  ASSERT_TRUE(m.is_ok()) << m.status().to_string();
  const Model& model = **m;
  ASSERT_EQ(model.hparams().n_cls_out, 2);
  ContextParams cp;
  cp.n_ctx = 32;
  cp.embeddings = true;
  auto ctx = Context::create(*m, cp);
  ASSERT_TRUE(ctx.is_ok());
  std::vector<float> rows(3 * 32);
  for (size_t i = 0; i < rows.size(); ++i) rows[i] = std::sin(static_cast<float>(i));
  const std::vector<float> got = (*ctx)->pool(PoolingType::kRank, rows.data(), 3);
  ASSERT_EQ(got.size(), 2u);
  const ModelWeights& w = model.weights();
  const auto row_of = [](const WeightMatrix& mat, int64_t r) {
    return static_cast<const float*>(mat.data) + r * mat.n_cols;  // F32 rows
  };
  std::vector<float> hidden(32);
  for (int64_t o = 0; o < 32; ++o) {
    double s = w.cls_b[static_cast<size_t>(o)];
    for (int64_t i = 0; i < 32; ++i) s += row_of(w.cls, o)[i] * rows[static_cast<size_t>(i)];
    hidden[static_cast<size_t>(o)] = static_cast<float>(std::tanh(s));
  }
  for (int64_t o = 0; o < 2; ++o) {
    double s = w.cls_out_b[static_cast<size_t>(o)];
    for (int64_t i = 0; i < 32; ++i) s += row_of(w.cls_out, o)[i] * hidden[static_cast<size_t>(i)];
    EXPECT_NEAR(got[static_cast<size_t>(o)], s, 1e-5) << o;
  }
  std::filesystem::remove_all(dir);
}

// hidden_activation "relu" on modern-bert: the reference builds an ungated ReLU that cannot
// feed ffn_down and aborts in ggml (differences.json, modern-bert-ungated-relu); Hearth
// refuses the file with a message, and loads the gated variants.
TEST(ModernBertActivation, UngatedReluIsRefusedGatedOnesLoad) {
  const std::string vocab = test::shared_path("models/vocab/ggml-vocab-bert-bge.gguf");
  if (!test::file_exists(vocab)) GTEST_SKIP() << "SKIPPED: " << vocab << " is missing";
  const std::string dir = test::make_temp_dir("modern-bert-act");
  for (const std::string act : {"relu", "reglu", "silu", "geglu", "gelu_new"}) {
    synth::SynthParams p;
    p.arch = "modern-bert";
    p.n_embd = 32;
    p.n_layer = 1;
    p.n_head = 4;
    p.n_head_kv = 4;
    p.n_ff = 64;
    p.type = TensorType::kF16;
    p.vocab_path = vocab;
    p.hidden_act = act;
    const std::string path = dir + "/" + act + ".gguf";
    ASSERT_TRUE(synth::synthesize(p, path).is_ok());
    auto m = models::load_model(path);
    if (act == "relu") {
      ASSERT_EQ(m.status().code(), ErrorCode::kUnsupported);
      EXPECT_NE(m.status().message().find("hidden_activation 'relu'"), std::string::npos)
          << m.status().message();
    } else {
      EXPECT_TRUE(m.is_ok()) << act << ": " << m.status().to_string();
    }
  }
  std::filesystem::remove_all(dir);
}

INSTANTIATE_TEST_SUITE_P(Architectures, Encoder,
                         ::testing::Values("bert", "nomic-bert", "jina-bert-v2", "modern-bert"),
                         [](const auto& param_info) {
                           std::string n = param_info.param;
                           for (char& c : n)
                             if (c == '-') c = '_';
                           return n;
                         });

}  // namespace
}  // namespace hearth::engine
