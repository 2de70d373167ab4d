// lfm2 (short convolutions beside attention) through the real Scheduler: its convolution
// state lives in the KV cache as windowed rows, so prefix reuse (from the slot, restored from
// the host prompt cache or from a slot file), n_cmpl copies sharing one prompt, two sequences
// in one step and self-drafting all give the bits of a cold single run.
#include <gtest/gtest.h>

#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "scheduler/scheduler.h"
#include "scheduler_fixture.h"
#include "support/hybrid_model.h"
#include "support/test_paths.h"
#include "tools/synth/synth.h"

namespace hearth::scheduler {
namespace {

using test_support::CollectSink;
using test_support::expect_same_bits;
using test_support::run_one;
using test_support::run_together;

class HybridScheduler : public test_support::SchedulerTest {
 protected:
  static void SetUpTestSuite() {
    dir_ = test::make_temp_dir("hybrid-scheduler");
    if (!std::filesystem::exists(test::shared_path("models/stories260K.gguf"))) return;
    const std::string path = dir_ + "/lfm2.gguf";
    ASSERT_TRUE(synth::synthesize(test::hybrid_model_params(), path).is_ok());
    load(path);
  }
  static void TearDownTestSuite() {
    SchedulerTest::TearDownTestSuite();
    std::filesystem::remove_all(dir_);
  }
  void SetUp() override {
    if (!model_) GTEST_SKIP() << "SKIPPED: models/stories260K.gguf (the vocabulary) is missing";
  }

  static std::vector<int32_t> text(int32_t n, int32_t salt) {
    std::vector<int32_t> t = {1};
    for (int32_t i = 1; i < n; ++i) t.push_back((5 + salt * 7 + i * 13 + i * i) % 512);
    return t;
  }

  static TaskRequest request(int32_t n, int32_t salt, int32_t n_predict = 12) {
    TaskRequest r = greedy(text(n, salt), n_predict, nullptr);
    r.params.n_probs = 5;
    return r;
  }

  std::unique_ptr<Scheduler> started(SchedulerConfig cfg) {
    auto s = make(cfg);
    if (s) s->start();
    return s;
  }

  // The first prompt, its answer and more text.
  static TaskRequest follow_up(const TaskRequest& first, const FinalResult& answer, int32_t salt) {
    TaskRequest second = first;
    second.prompt.insert(second.prompt.end(), answer.generated.begin(), answer.generated.end());
    const auto more = text(8, salt);
    second.prompt.insert(second.prompt.end(), more.begin() + 1, more.end());
    return second;
  }

  static inline std::string dir_;
};

TEST_F(HybridScheduler, AFollowUpReusingThePrefixMatchesAColdRun) {
  SchedulerConfig cfg;
  cfg.n_slots = 1;
  auto warm = started(cfg);
  ASSERT_TRUE(warm);
  const TaskRequest first = request(40, 1);
  const FinalResult answer = run_one(*warm, first);
  ASSERT_EQ(answer.generated.size(), 12u);
  const TaskRequest second = follow_up(first, answer, 9);
  const FinalResult reused = run_one(*warm, second);
  EXPECT_GE(reused.timings.cache_n, static_cast<int32_t>(first.prompt.size()));
  auto cold = started(cfg);
  ASSERT_TRUE(cold);
  const FinalResult fresh = run_one(*cold, second);
  EXPECT_EQ(fresh.timings.cache_n, 0);
  expect_same_bits(reused, fresh);
}

// After another prompt took the slot, the rows come back from the host prompt cache.
TEST_F(HybridScheduler, AFollowUpRestoredFromTheHostCacheMatchesAColdRun) {
  SchedulerConfig cfg;
  cfg.n_slots = 1;
  auto warm = started(cfg);
  ASSERT_TRUE(warm);
  const TaskRequest first = request(50, 2);
  const FinalResult answer = run_one(*warm, first);
  const FinalResult other = run_one(*warm, request(20, 30, 4));
  EXPECT_EQ(other.timings.cache_n, 0);
  const TaskRequest second = follow_up(first, answer, 11);
  const FinalResult restored = run_one(*warm, second);
  EXPECT_GE(restored.timings.cache_n, static_cast<int32_t>(first.prompt.size()));
  auto cold = started(cfg);
  ASSERT_TRUE(cold);
  expect_same_bits(restored, run_one(*cold, second));
}

// The slot saved to a file (its convolution rows from window_first on) and restored into a
// fresh scheduler continues as a cold run does.
TEST_F(HybridScheduler, AFollowUpFromARestoredSlotFileMatchesAColdRun) {
  SchedulerConfig cfg;
  cfg.n_slots = 1;
  auto warm = started(cfg);
  ASSERT_TRUE(warm);
  const TaskRequest first = request(60, 12);
  const FinalResult answer = run_one(*warm, first);
  const std::string file = dir_ + "/slot.bin";
  auto saved = warm->save_slot(0, file);
  ASSERT_TRUE(saved.is_ok()) << saved.status().to_string();
  warm->stop();
  auto fresh = started(cfg);
  ASSERT_TRUE(fresh);
  auto restored = fresh->restore_slot(0, file);
  ASSERT_TRUE(restored.is_ok()) << restored.status().to_string();
  EXPECT_EQ(restored->n_tokens, saved->n_tokens);
  const TaskRequest second = follow_up(first, answer, 13);
  const FinalResult continued = run_one(*fresh, second);
  EXPECT_GE(continued.timings.cache_n, static_cast<int32_t>(first.prompt.size()));
  auto cold = started(cfg);
  ASSERT_TRUE(cold);
  expect_same_bits(continued, run_one(*cold, second));
}

TEST_F(HybridScheduler, TwoSequencesInOneStepMatchEachAlone) {
  SchedulerConfig cfg;
  cfg.n_slots = 2;
  const TaskRequest first = request(33, 3);
  TaskRequest second = request(21, 4);
  second.index = 1;
  const auto alone = [&](const TaskRequest& r) {
    auto s = started(cfg);
    return run_one(*s, r);
  };
  const FinalResult a = alone(first);
  const FinalResult b = alone(second);
  auto s = started(cfg);
  ASSERT_TRUE(s);
  const std::vector<FinalResult> finals = run_together(*s, {first, second});
  ASSERT_EQ(finals.size(), 2u);
  expect_same_bits(finals[0], a);
  expect_same_bits(finals[1], b);
}

// n_cmpl copies share the prompt's rows, convolution rows included.
TEST_F(HybridScheduler, CopiesOfAPromptMatchASingleRun) {
  SchedulerConfig cfg;
  cfg.n_slots = 3;
  const TaskRequest single = request(45, 5);
  auto s = started(cfg);
  ASSERT_TRUE(s);
  const FinalResult alone = run_one(*s, single);
  auto fresh = started(cfg);
  ASSERT_TRUE(fresh);
  auto sink = std::make_shared<CollectSink>();
  TaskRequest copies = single;
  copies.n_cmpl = 3;
  copies.sink = sink;
  ASSERT_TRUE(fresh->submit(std::move(copies)).is_ok());
  ASSERT_TRUE(sink->wait(3));
  const auto finals = sink->sorted_finals();
  ASSERT_EQ(finals.size(), 3u);
  for (const FinalResult& f : finals) expect_same_bits(f, alone);
}

// The target as its own draft model: drafts are written and read back through the same
// windowed rows, each is the target's greedy token, and the output is unchanged.
TEST_F(HybridScheduler, SelfDraftingKeepsTheOutput) {
  const auto run = [&](bool draft) {
    SchedulerConfig cfg;
    cfg.n_slots = 1;
    cfg.spec.draft_simple = draft;
    cfg.spec.draft.model = model_;
    cfg.spec.draft.n_max = 4;
    cfg.spec.step_seconds = [](int32_t rows) { return 0.010 + 0.0002 * rows; };
    auto s = started(cfg);
    EXPECT_TRUE(s);
    TaskRequest r = request(30, 6, 24);
    r.params.n_probs = 0;
    return run_one(*s, std::move(r));
  };
  const FinalResult plain = run(false);
  const FinalResult drafted = run(true);
  ASSERT_EQ(plain.generated.size(), 24u);
  EXPECT_EQ(drafted.generated, plain.generated);
  EXPECT_GT(drafted.timings.draft_n, 0);
  EXPECT_EQ(drafted.timings.draft_n_accepted, drafted.timings.draft_n);
}

}  // namespace
}  // namespace hearth::scheduler
