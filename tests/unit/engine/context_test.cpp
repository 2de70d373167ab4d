// The batch API: several sequences per forward call, mixed decode and prefill, prefix
// sharing, save/restore, and the errors of bad batches. Runs on stories260K.
#include "engine/context.h"

#include <gtest/gtest.h>

#include "models/registry.h"
#include "support/test_paths.h"

namespace hearth::engine {
namespace {

const std::vector<int32_t> kPromptA = {1,   403, 407, 261, 378, 432, 383, 286, 261, 376,
                                       298, 315, 322, 353, 261, 410, 407, 265, 318, 334};
const std::vector<int32_t> kPromptB = {1, 320, 417, 261, 410, 301};

class ContextTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    auto m = models::load_model(test::shared_path("models/stories260K.gguf"));
    ASSERT_TRUE(m.is_ok()) << m.status().to_string();
    model_ = *m;
  }
  static void TearDownTestSuite() { model_.reset(); }

  std::unique_ptr<Context> make(int32_t n_ctx = 256, int32_t n_seq = 4, int32_t threads = 2) {
    ContextParams p;
    p.n_ctx = n_ctx;
    p.n_seq_max = n_seq;
    p.n_threads = threads;
    auto c = Context::create(model_, p);
    EXPECT_TRUE(c.is_ok()) << c.status().to_string();
    return c.is_ok() ? std::move(*c) : nullptr;
  }

  // Prefills `tokens` on `seq` in one call and returns the last logits.
  static std::vector<float> prefill(Context& ctx, const std::vector<int32_t>& tokens, SeqId seq) {
    Batch b;
    const int32_t start = ctx.kv_cache().length(seq);
    for (size_t i = 0; i < tokens.size(); ++i)
      b.add(tokens[i], start + static_cast<int32_t>(i), seq, i + 1 == tokens.size());
    EXPECT_TRUE(ctx.decode(b).is_ok());
    auto l = ctx.logits(b.size() - 1);
    return {l.begin(), l.end()};
  }

  static models::ModelPtr model_;
};

models::ModelPtr ContextTest::model_;

TEST_F(ContextTest, TwoSequencesInOneCallMatchSeparateCalls) {
  auto alone = make();
  const auto a = prefill(*alone, kPromptA, 0);
  const auto b = prefill(*alone, kPromptB, 1);
  auto together = make();
  Batch batch;
  for (size_t i = 0; i < kPromptA.size(); ++i)
    batch.add(kPromptA[i], static_cast<int32_t>(i), 0, i + 1 == kPromptA.size());
  for (size_t i = 0; i < kPromptB.size(); ++i)
    batch.add(kPromptB[i], static_cast<int32_t>(i), 2, i + 1 == kPromptB.size());
  ASSERT_TRUE(together->decode(batch).is_ok());
  auto la = together->logits(static_cast<int32_t>(kPromptA.size()) - 1);
  auto lb = together->logits(batch.size() - 1);
  EXPECT_EQ(std::vector<float>(la.begin(), la.end()), a);
  EXPECT_EQ(std::vector<float>(lb.begin(), lb.end()), b);
  EXPECT_TRUE(together->logits(0).empty()) << "rows that did not ask for logits have none";
}

// Rows that want no logits stop after the last layer's attention; the rows that do get the
// logits they get when every row wants its own, and the cache gets every row's K and V (the
// continuation matches).
TEST_F(ContextTest, RowsWithoutOutputsSkipTheLastLayersRestUnchanged) {
  const auto run = [&](bool all_rows) {
    auto ctx = make();
    Batch b;
    for (size_t i = 0; i < kPromptA.size(); ++i)
      b.add(kPromptA[i], static_cast<int32_t>(i), 0,
            all_rows || i == 2 || i + 1 == kPromptA.size());
    EXPECT_TRUE(ctx->decode(b).is_ok());
    std::vector<std::vector<float>> out;
    for (int32_t i : {2, b.size() - 1}) {
      auto l = ctx->logits(i);
      out.emplace_back(l.begin(), l.end());
    }
    Batch next;
    next.add(kPromptB[0], static_cast<int32_t>(kPromptA.size()), 0, true);
    EXPECT_TRUE(ctx->decode(next).is_ok());
    out.emplace_back(ctx->logits(0).begin(), ctx->logits(0).end());
    return out;
  };
  const auto all = run(true), some = run(false);
  ASSERT_EQ(all.size(), some.size());
  for (size_t i = 0; i < all.size(); ++i) {
    EXPECT_FALSE(some[i].empty());
    EXPECT_EQ(all[i], some[i]) << "output " << i;
  }
}

TEST_F(ContextTest, DecodeTokenMixedWithPrefillChunk) {
  auto ref = make();
  prefill(*ref, kPromptA, 0);
  const auto next_a = prefill(*ref, {432}, 0);
  const auto b = prefill(*ref, kPromptB, 1);

  auto ctx = make();
  prefill(*ctx, kPromptA, 0);
  Batch step;  // one decode token of sequence 0 and the whole prompt of sequence 1
  step.add(432, static_cast<int32_t>(kPromptA.size()), 0, true);
  for (size_t i = 0; i < kPromptB.size(); ++i)
    step.add(kPromptB[i], static_cast<int32_t>(i), 1, i + 1 == kPromptB.size());
  ASSERT_TRUE(ctx->decode(step).is_ok());
  auto l0 = ctx->logits(0);
  auto l1 = ctx->logits(step.size() - 1);
  EXPECT_EQ(std::vector<float>(l0.begin(), l0.end()), next_a);
  EXPECT_EQ(std::vector<float>(l1.begin(), l1.end()), b);
}

TEST_F(ContextTest, SharedPrefixContinuesLikeAFreshSequence) {
  auto ctx = make();
  prefill(*ctx, kPromptA, 0);
  const int32_t keep = 7;
  ASSERT_TRUE(ctx->kv_cache().share_prefix(0, 1, keep).is_ok());
  const std::vector<int32_t> suffix = {261, 410, 407};
  const auto shared = prefill(*ctx, suffix, 1);

  auto fresh = make();
  std::vector<int32_t> full(kPromptA.begin(), kPromptA.begin() + keep);
  full.insert(full.end(), suffix.begin(), suffix.end());
  EXPECT_EQ(shared, prefill(*fresh, full, 0));
  // The source sequence is untouched by the other's writes.
  EXPECT_EQ(ctx->kv_cache().length(0), static_cast<int32_t>(kPromptA.size()));
  auto again = make();
  prefill(*again, kPromptA, 0);
  EXPECT_EQ(prefill(*ctx, {432}, 0), prefill(*again, {432}, 0));
}

TEST_F(ContextTest, SaveAndRestoreContinueIdentically) {
  auto ctx = make();
  prefill(*ctx, kPromptA, 0);
  const KvSnapshot snap = ctx->kv_cache().save(0);
  const auto expected = prefill(*ctx, {432}, 0);
  ctx->kv_cache().clear(0);
  ASSERT_TRUE(ctx->kv_cache().restore(3, snap).is_ok());
  EXPECT_EQ(prefill(*ctx, {432}, 3), expected);
}

TEST_F(ContextTest, ThreadCountDoesNotChangeResults) {
  auto one = make(256, 1, 1);
  auto two = make(256, 1, 2);
  EXPECT_EQ(prefill(*one, kPromptA, 0), prefill(*two, kPromptA, 0));
  EXPECT_EQ(prefill(*one, {432}, 0), prefill(*two, {432}, 0));
}

TEST_F(ContextTest, BadBatchesAreRefusedWithoutChangingState) {
  auto ctx = make();
  prefill(*ctx, kPromptB, 0);
  const int32_t len = ctx->kv_cache().length(0);
  struct BadCase {
    const char* what;
    int32_t token, pos;
    SeqId seq;
  };
  const BadCase cases[] = {{"token id past the vocabulary", 512, len, 0},
                           {"negative token id", -1, len, 0},
                           {"position gap", 5, len + 1, 0},
                           {"position rewind", 5, 0, 0},
                           {"sequence id out of range", 5, 0, 4},
                           {"negative sequence id", 5, 0, -1}};
  for (const auto& c : cases) {
    Batch b;
    b.add(c.token, c.pos, c.seq, true);
    Status s = ctx->decode(b);
    EXPECT_EQ(s.code(), ErrorCode::kInvalidArgument) << c.what;
    EXPECT_FALSE(s.message().empty());
    EXPECT_EQ(ctx->kv_cache().length(0), len) << c.what;
  }
  EXPECT_EQ(ctx->decode(Batch{}).code(), ErrorCode::kInvalidArgument);
}

TEST_F(ContextTest, FullCacheIsReportedAndLeavesNoTrace) {
  auto ctx = make(32, 1);  // room for 32 tokens, rounded up to whole blocks plus a spare one
  std::vector<int32_t> many(80, 261);
  many[0] = 1;
  Batch b;
  for (size_t i = 0; i < many.size(); ++i) b.add(many[i], static_cast<int32_t>(i), 0, false);
  Status s = ctx->decode(b);
  EXPECT_EQ(s.code(), ErrorCode::kResourceExhausted) << s.to_string();
  EXPECT_EQ(ctx->kv_cache().length(0), 0);
  EXPECT_FALSE(prefill(*ctx, kPromptB, 0).empty());
}

TEST_F(ContextTest, InvalidParamsAreRefused) {
  ContextParams p;
  p.n_ctx = 0;
  EXPECT_FALSE(Context::create(model_, p).is_ok());
  p.n_ctx = 16;
  p.n_seq_max = 0;
  EXPECT_FALSE(Context::create(model_, p).is_ok());
}

}  // namespace
}  // namespace hearth::engine
