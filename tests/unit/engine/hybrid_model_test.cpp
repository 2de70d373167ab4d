// lfm2's short convolutions keep each token's B*x row as a windowed layer's cached row. A
// token's logits must then not depend on the batch it shares, nor on how its sequence's
// rows got there: cut back and fed again, shared from another sequence, restored from a
// snapshot, or with the released rows kept (--swa-full). Each comparison is bit-exact.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <string>
#include <vector>

#include "engine/context.h"
#include "gguf/writer.h"
#include "models/registry.h"
#include "support/hybrid_model.h"
#include "support/test_paths.h"
#include "support/windowed_model.h"
#include "tools/synth/synth.h"

namespace hearth::engine {
namespace {

using Logits = std::vector<float>;

class HybridModel : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    if (!std::filesystem::exists(test::shared_path("models/stories260K.gguf"))) return;
    dir_ = test::make_temp_dir("hybrid-model");
    const std::string path = dir_ + "/lfm2.gguf";
    ASSERT_TRUE(synth::synthesize(test::hybrid_model_params(), path).is_ok());
    auto m = models::load_model(path);
    ASSERT_TRUE(m.is_ok()) << m.status().to_string();
    model_ = *m;
  }
  static void TearDownTestSuite() {
    model_.reset();
    if (!dir_.empty()) std::filesystem::remove_all(dir_);
  }
  void SetUp() override {
    if (!model_) GTEST_SKIP() << "SKIPPED: ../shared/models/stories260K.gguf is missing";
  }

  static std::unique_ptr<Context> make_context(bool swa_full = false, int32_t chunk = 16) {
    ContextParams p;
    p.n_ctx = 512;
    p.n_seq_max = 2;
    p.n_threads = 2;
    p.n_ubatch = chunk;
    p.swa_full = swa_full;
    auto c = Context::create(model_, p);
    EXPECT_TRUE(c.is_ok()) << c.status().to_string();
    return c.is_ok() ? std::move(*c) : nullptr;
  }

  static std::vector<int32_t> prompt(int32_t n, int32_t salt) {
    return test::patterned_tokens(n, salt, model_->hparams().n_vocab);
  }

  // Appends tokens to `seq` in calls of at most `chunk`; every token's logits.
  static std::vector<Logits> feed(Context& ctx, SeqId seq, std::span<const int32_t> tokens,
                                  size_t chunk = 16) {
    std::vector<Logits> out;
    for (size_t at = 0; at < tokens.size(); at += chunk) {
      Batch b;
      const size_t end = std::min(tokens.size(), at + chunk);
      for (size_t i = at; i < end; ++i)
        b.add(tokens[i], ctx.kv_cache().length(seq) + static_cast<int32_t>(i - at), seq, true);
      const Status s = ctx.decode(b);
      EXPECT_TRUE(s.is_ok()) << s.to_string();
      if (!s.is_ok()) return out;
      for (int32_t i = 0; i < b.size(); ++i) {
        const auto l = ctx.logits(i);
        out.emplace_back(l.begin(), l.end());
      }
    }
    return out;
  }

  static inline std::string dir_;
  static inline models::ModelPtr model_;
};

TEST_F(HybridModel, ConvolutionLayersCacheOneF32RowInAWindowedPool) {
  auto ctx = make_context();
  const KvCacheShape& shape = ctx->kv_cache().config().shape;
  const int32_t E = model_->hparams().n_embd;
  ASSERT_EQ(shape.layer_window.size(), 4u);
  EXPECT_EQ(shape.window(0), 3);
  EXPECT_EQ(shape.window(1), 0);
  EXPECT_EQ(shape.window(2), 3);
  EXPECT_EQ(shape.k_bytes(0), E * 4);
  EXPECT_EQ(shape.v_bytes(0), 0);
  EXPECT_EQ(shape.k_bytes(1), shape.k_row_bytes);
  EXPECT_EQ(shape.v_bytes(1), shape.v_row_bytes);
  // After a long prompt the convolution layers hold a window's worth of blocks.
  feed(*ctx, 0, prompt(120, 0));
  int32_t held = 0;
  for (int32_t block : ctx->kv_cache().block_table(0, 0)) held += block >= 0 ? 1 : 0;
  EXPECT_LE(held, 4);
  EXPECT_GT(ctx->kv_cache().window_first(0), 0);
}

// One token at a time, in chunks of 5 and in one call: the same logits.
TEST_F(HybridModel, LogitsDoNotDependOnHowThePromptIsSplit) {
  const auto tokens = prompt(40, 3);
  auto a = make_context(false, 64);
  auto b = make_context(false, 64);
  auto c = make_context(false, 64);
  const auto whole = feed(*a, 0, tokens, 64);
  const auto single = feed(*b, 0, tokens, 1);
  const auto fives = feed(*c, 0, tokens, 5);
  ASSERT_EQ(whole.size(), tokens.size());
  for (size_t i = 0; i < tokens.size(); ++i) {
    EXPECT_TRUE(whole[i] == single[i]) << "token " << i << " fed alone";
    EXPECT_TRUE(whole[i] == fives[i]) << "token " << i << " in chunks of 5";
  }
}

// Two sequences interleaved in each call equal each one alone.
TEST_F(HybridModel, TwoSequencesInOneBatchEqualEachAlone) {
  const auto p0 = prompt(23, 1);
  const auto p1 = prompt(31, 7);
  auto alone0 = make_context(false, 64);
  auto alone1 = make_context(false, 64);
  const auto want0 = feed(*alone0, 0, p0, 64);
  const auto want1 = feed(*alone1, 1, p1, 64);
  auto ctx = make_context(false, 64);
  size_t i0 = 0, i1 = 0;
  while (i0 < p0.size() || i1 < p1.size()) {
    Batch b;
    std::vector<std::pair<SeqId, size_t>> rows;
    for (int k = 0; k < 4; ++k) {  // uneven slices, interleaved token by token
      if (i0 < p0.size()) {
        b.add(p0[i0], static_cast<int32_t>(i0), 0, true);
        rows.emplace_back(0, i0++);
      }
      if (k % 2 == 0 && i1 < p1.size()) {
        b.add(p1[i1], static_cast<int32_t>(i1), 1, true);
        rows.emplace_back(1, i1++);
      }
    }
    ASSERT_TRUE(ctx->decode(b).is_ok());
    for (size_t r = 0; r < rows.size(); ++r) {
      const auto l = ctx->logits(static_cast<int32_t>(r));
      const Logits got(l.begin(), l.end());
      const auto& want = rows[r].first == 0 ? want0 : want1;
      EXPECT_TRUE(got == want[rows[r].second])
          << "sequence " << rows[r].first << " token " << rows[r].second;
    }
  }
}

// A sequence cut back, shared into another sequence, or restored from a snapshot continues
// exactly as a cold run of the whole prompt does.
TEST_F(HybridModel, ReusedPrefixesContinueExactly) {
  const auto tokens = prompt(90, 5);
  auto cold = make_context();
  const auto want = feed(*cold, 0, tokens);
  const auto tail = std::span<const int32_t>(tokens).last(10);

  auto ctx = make_context();
  feed(*ctx, 0, tokens);
  KvCache& kv = ctx->kv_cache();
  EXPECT_GT(kv.min_truncation(0), 0);
  ASSERT_EQ(kv.truncate(0, 80), 80);
  EXPECT_TRUE(feed(*ctx, 0, tail).back() == want.back()) << "cut back and fed again";

  ASSERT_TRUE(kv.share_prefix(0, 1, 80).is_ok());
  EXPECT_TRUE(feed(*ctx, 1, tail).back() == want.back()) << "shared into sequence 1";

  const KvSnapshot snapshot = kv.save(0, 80);
  ASSERT_EQ(snapshot.n_tokens, 80);
  auto restored = make_context(true);  // into a cache that keeps every row
  ASSERT_TRUE(restored->kv_cache().restore(0, snapshot).is_ok());
  EXPECT_TRUE(feed(*restored, 0, tail).back() == want.back()) << "restored from a snapshot";

  auto full = make_context(true);
  const auto kept = feed(*full, 0, tokens);
  EXPECT_TRUE(kept.back() == want.back()) << "--swa-full";
}

TEST_F(HybridModel, HparamsMarkTheConvolutionLayers) {
  const ModelHparams& hp = model_->hparams();
  EXPECT_EQ(hp.n_head_kv, 2);
  ASSERT_EQ(hp.layer_attends.size(), 4u);
  EXPECT_FALSE(hp.attends(0));
  EXPECT_TRUE(hp.attends(1));
  EXPECT_FALSE(hp.attends(2));
  EXPECT_TRUE(hp.attends(3));
}

// A per-layer head_count_kv with zeros is refused, naming the reason, by architectures
// without convolution layers.
TEST_F(HybridModel, OtherArchitecturesRefuseLayersWithoutAttention) {
  gguf::Writer w;
  w.set_string("general.architecture", "llama");
  w.set_u32("llama.context_length", 64);
  w.set_u32("llama.embedding_length", 64);
  w.set_u32("llama.block_count", 2);
  w.set_u32("llama.feed_forward_length", 128);
  w.set_u32("llama.attention.head_count", 4);
  const std::vector<int32_t> head_count_kv = {0, 2};
  w.set_i32_array("llama.attention.head_count_kv", head_count_kv);
  w.set_f32("llama.attention.layer_norm_rms_epsilon", 1e-5f);
  w.set_u32("llama.vocab_size", 32);
  const std::string path = dir_ + "/llama-hybrid.gguf";
  ASSERT_TRUE(w.write(path).is_ok());
  auto m = models::load_model(path);
  ASSERT_FALSE(m.is_ok());
  EXPECT_EQ(m.status().code(), ErrorCode::kUnsupported) << m.status().to_string();
  EXPECT_NE(m.status().message().find("without attention"), std::string::npos)
      << m.status().to_string();
}

// An lfm2 file whose shortconv.l_cache is missing or too small, or an lfm2moe file with a
// gating function other than sigmoid, is refused naming the key (before any tensor is read).
TEST_F(HybridModel, RefusesBadConvolutionAndGatingKeys) {
  const auto write = [&](const std::string& arch, int64_t l_cache, int64_t gating) {
    gguf::Writer w;
    w.set_string("general.architecture", arch);
    w.set_u32(arch + ".context_length", 64);
    w.set_u32(arch + ".embedding_length", 64);
    w.set_u32(arch + ".block_count", 2);
    w.set_u32(arch + ".feed_forward_length", 128);
    w.set_u32(arch + ".attention.head_count", 4);
    const std::vector<int32_t> head_count_kv = {0, 2};
    w.set_i32_array(arch + ".attention.head_count_kv", head_count_kv);
    w.set_f32(arch + ".attention.layer_norm_rms_epsilon", 1e-5f);
    w.set_u32(arch + ".vocab_size", 32);
    if (l_cache >= 0) w.set_u32(arch + ".shortconv.l_cache", static_cast<uint32_t>(l_cache));
    if (gating >= 0) {
      w.set_u32(arch + ".expert_count", 4);
      w.set_u32(arch + ".expert_used_count", 2);
      w.set_u32(arch + ".expert_feed_forward_length", 32);
      w.set_u32(arch + ".expert_gating_func", static_cast<uint32_t>(gating));
    }
    const std::string path = dir_ + "/bad-" + arch + ".gguf";
    EXPECT_TRUE(w.write(path).is_ok());
    auto m = models::load_model(path);
    EXPECT_FALSE(m.is_ok());
    return m.is_ok() ? std::string() : m.status().message();
  };
  EXPECT_NE(write("lfm2", -1, -1).find("lfm2.shortconv.l_cache 0 is missing"), std::string::npos);
  EXPECT_NE(write("lfm2", 1, -1).find("outside [2, 64]"), std::string::npos);
  EXPECT_NE(write("lfm2moe", 3, 1).find("lfm2moe.expert_gating_func 1 is not supported"),
            std::string::npos);
}

}  // namespace
}  // namespace hearth::engine
