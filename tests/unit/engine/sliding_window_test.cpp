// A context over a model with sliding-window layers keeps only the rows those layers can
// still attend to. That must change no logits: the same tokens give bit-identical logits
// with a cache that keeps every row (--swa-full), after cutting a sequence back within
// what it kept, and after a snapshot of it is restored elsewhere.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <string>
#include <vector>

#include "engine/context.h"
#include "models/registry.h"
#include "support/test_paths.h"
#include "support/windowed_model.h"
#include "tools/synth/synth.h"

namespace hearth::engine {
namespace {

constexpr int32_t kPromptLength = 150;
constexpr int32_t kChunk = 32;

class SlidingWindowCache : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = test::make_temp_dir("sliding-window");
    const std::string path = dir_ + "/gemma3.gguf";
    ASSERT_TRUE(synth::synthesize(test::windowed_model_params(), path).is_ok());
    auto m = models::load_model(path);
    ASSERT_TRUE(m.is_ok()) << m.status().to_string();
    model_ = *m;
  }
  static void TearDownTestSuite() {
    model_.reset();
    std::filesystem::remove_all(dir_);
  }

  static std::unique_ptr<Context> make_context(bool swa_full) {
    ContextParams p;
    p.n_ctx = 512;
    p.n_seq_max = 2;
    p.n_threads = 2;
    p.n_ubatch = kChunk;
    p.swa_full = swa_full;
    auto c = Context::create(model_, p);
    EXPECT_TRUE(c.is_ok()) << c.status().to_string();
    return c.is_ok() ? std::move(*c) : nullptr;
  }

  static std::vector<int32_t> prompt() {
    return test::patterned_tokens(kPromptLength, 0, model_->hparams().n_vocab);
  }

  // Appends tokens to `seq` in calls of at most kChunk; the last token's logits.
  static std::vector<float> feed(Context& ctx, SeqId seq, std::span<const int32_t> tokens) {
    std::vector<float> last;
    for (size_t at = 0; at < tokens.size(); at += kChunk) {
      Batch b;
      const size_t end = std::min(tokens.size(), at + kChunk);
      for (size_t i = at; i < end; ++i)
        b.add(tokens[i], ctx.kv_cache().length(seq) + static_cast<int32_t>(i - at), seq,
              i + 1 == end);
      const Status s = ctx.decode(b);
      EXPECT_TRUE(s.is_ok()) << s.to_string();
      if (!s.is_ok()) return {};
      const auto l = ctx.logits(b.size() - 1);
      last.assign(l.begin(), l.end());
    }
    return last;
  }

  static int32_t argmax(const std::vector<float>& l) {
    return static_cast<int32_t>(std::max_element(l.begin(), l.end()) - l.begin());
  }

  // The prompt, then `steps` greedy tokens: every step's logits, and the tokens fed.
  static std::vector<std::vector<float>> run(Context& ctx, int steps, std::vector<int32_t>& fed) {
    fed = prompt();
    std::vector<std::vector<float>> out = {feed(ctx, 0, fed)};
    for (int i = 0; i < steps; ++i) {
      fed.push_back(argmax(out.back()));
      out.push_back(feed(ctx, 0, std::span<const int32_t>(fed).last(1)));
    }
    return out;
  }

  static inline std::string dir_;
  static inline models::ModelPtr model_;
};

TEST_F(SlidingWindowCache, ReleasedRowsChangeNoLogits) {
  auto full = make_context(true);
  auto windowed = make_context(false);
  std::vector<int32_t> fed;
  const auto expected = run(*full, 24, fed);
  const auto got = run(*windowed, 24, fed);
  ASSERT_EQ(expected.size(), got.size());
  for (size_t step = 0; step < got.size(); ++step)
    EXPECT_TRUE(expected[step] == got[step]) << "step " << step << ": logits differ";
  // Layer 0 keeps its window (16), the slack (32) and partial blocks: at most 4 blocks of
  // 16 positions, not the 11 of the whole sequence.
  const KvCache& kv = windowed->kv_cache();
  EXPECT_GT(kv.window_first(0), 0);
  EXPECT_EQ(kv.block_table(0, 0).size(), kv.block_table(0, 2).size());
  EXPECT_LT(kv.n_blocks(), full->kv_cache().n_blocks()) << "the windowed pool is smaller";
  int32_t held = 0;
  for (int32_t block : kv.block_table(0, 0)) held += block >= 0 ? 1 : 0;
  EXPECT_LE(held, 4);
}

TEST_F(SlidingWindowCache, SwaFullKeepsEveryRow) {
  auto full = make_context(true);
  std::vector<int32_t> fed;
  run(*full, 4, fed);
  KvCache& kv = full->kv_cache();
  EXPECT_EQ(kv.window_first(0), 0);
  EXPECT_EQ(kv.min_truncation(0), 0);
  for (int32_t block : kv.block_table(0, 0)) EXPECT_GE(block, 0);
  EXPECT_EQ(kv.truncate(0, 10), 10);
  // Cut back that far, the sequence continues as a fresh one would.
  auto fresh = make_context(true);
  const std::vector<int32_t> rest(fed.begin() + 10, fed.begin() + 40);
  const auto continued = feed(*full, 0, rest);
  const auto reference = feed(*fresh, 0, std::span<const int32_t>(fed).first(40));
  EXPECT_TRUE(continued == reference);
}

TEST_F(SlidingWindowCache, CuttingBackWithinTheSlackContinuesExactly) {
  auto full = make_context(true);
  auto windowed = make_context(false);
  std::vector<int32_t> fed;
  const auto expected = run(*full, 4, fed);
  run(*windowed, 4, fed);
  KvCache& kv = windowed->kv_cache();
  const auto length = static_cast<int32_t>(fed.size());
  ASSERT_EQ(kv.length(0), length);
  const int32_t shortest = kv.min_truncation(0);
  EXPECT_GT(shortest, 0);
  EXPECT_LE(shortest, length - 32) << "the slack of 32 positions";
  // Back by 20 tokens and forward again: the last step's logits reappear.
  EXPECT_EQ(kv.truncate(0, length - 20), length - 20);
  const auto again = feed(*windowed, 0, std::span<const int32_t>(fed).last(20));
  EXPECT_TRUE(again == expected.back());
  // Further back than the rows allow, the whole sequence goes.
  EXPECT_EQ(kv.truncate(0, shortest - 1), 0);
  EXPECT_EQ(kv.length(0), 0);
}

TEST_F(SlidingWindowCache, RestoredSnapshotsContinueExactly) {
  auto full = make_context(true);
  auto windowed = make_context(false);
  std::vector<int32_t> fed;
  const auto steps = run(*full, 5, fed);
  run(*windowed, 5, fed);
  const std::vector<int32_t> next = {argmax(steps.back())};
  const auto expected = feed(*full, 0, next);
  const KvSnapshot snapshot = windowed->kv_cache().save(0);
  EXPECT_GT(snapshot.window_first, 0);
  EXPECT_LT(snapshot.bytes(),
            static_cast<size_t>(snapshot.n_tokens) * windowed->kv_cache().token_bytes());
  ASSERT_TRUE(windowed->kv_cache().restore(1, snapshot).is_ok());
  ASSERT_TRUE(full->kv_cache().restore(1, snapshot).is_ok());
  EXPECT_TRUE(feed(*windowed, 1, next) == expected) << "restored beside its source";
  EXPECT_TRUE(feed(*full, 1, next) == expected) << "restored into a full cache";
  EXPECT_TRUE(feed(*windowed, 0, next) == expected) << "the source itself";
}

}  // namespace
}  // namespace hearth::engine
