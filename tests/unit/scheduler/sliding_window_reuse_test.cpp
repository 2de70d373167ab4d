// Prompt reuse over a model with sliding-window layers. A slot that has released rows
// reuses a prefix only where those rows are still there: a follow-up continues from the
// cached conversation, a prompt that diverges early is evaluated again from its start, and
// a state restored from the host prompt cache serves the prefix it holds. The greedy
// tokens are those of a server that keeps every row (--swa-full), which reuses more.
#include <gtest/gtest.h>

#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "models/registry.h"
#include "scheduler/scheduler.h"
#include "scheduler_fixture.h"
#include "support/test_paths.h"
#include "support/windowed_model.h"
#include "tools/synth/synth.h"

namespace hearth::scheduler {
namespace {

using test_support::CollectSink;

constexpr int32_t kPromptLength = 150;

class SlidingWindowReuse : public test_support::SchedulerTest {
 protected:
  static void SetUpTestSuite() {
    dir_ = test::make_temp_dir("sliding-window-reuse");
    const std::string path = dir_ + "/gemma3.gguf";
    ASSERT_TRUE(synth::synthesize(test::windowed_model_params(), path).is_ok());
    load(path);
  }
  static void TearDownTestSuite() {
    SchedulerTest::TearDownTestSuite();
    std::filesystem::remove_all(dir_);
  }

  static std::unique_ptr<Scheduler> make_started(bool swa_full) {
    SchedulerConfig cfg;
    cfg.n_slots = 1;
    cfg.n_ctx_slot = 512;
    cfg.n_threads = 1;
    cfg.swa_full = swa_full;
    auto s = Scheduler::create(model_, tok_, cfg);
    EXPECT_TRUE(s.is_ok()) << s.status().to_string();
    if (!s.is_ok()) return nullptr;
    (*s)->start();
    return std::move(*s);
  }

  static FinalResult complete(Scheduler& s, std::vector<int32_t> prompt) {
    auto sink = std::make_shared<CollectSink>();
    TaskRequest r;
    r.prompt = std::move(prompt);
    r.params.n_predict = 12;
    r.params.sampling.temperature = 0.0f;
    r.sink = sink;
    EXPECT_TRUE(s.submit(std::move(r)).is_ok());
    EXPECT_TRUE(sink->wait(1));
    EXPECT_TRUE(sink->errors.empty());
    return sink->finals.empty() ? FinalResult{} : sink->finals.front();
  }

  static std::vector<int32_t> tokens(int32_t n, int32_t salt) {
    return test::patterned_tokens(n, salt, model_->hparams().n_vocab);
  }

  static inline std::string dir_;
};

TEST_F(SlidingWindowReuse, ReusesWhatTheWindowsStillHoldAndMatchesAFullCache) {
  auto windowed = make_started(false);
  auto full = make_started(true);
  ASSERT_TRUE(windowed && full);
  const std::vector<int32_t> first = tokens(kPromptLength, 0);
  // An early divergence: 60 tokens in common, far before what windowed layers keep.
  std::vector<int32_t> diverging(first.begin(), first.begin() + 60);
  for (int32_t t : tokens(100, 7)) diverging.push_back(t);

  const FinalResult a_win = complete(*windowed, first);
  const FinalResult a_full = complete(*full, first);
  EXPECT_EQ(a_win.generated, a_full.generated);
  // A follow-up: the conversation so far, then more.
  std::vector<int32_t> follow_up = first;
  follow_up.insert(follow_up.end(), a_full.generated.begin(), a_full.generated.end());
  for (int32_t t : tokens(10, 3)) follow_up.push_back(t);

  const FinalResult b_win = complete(*windowed, follow_up);
  const FinalResult b_full = complete(*full, follow_up);
  EXPECT_EQ(b_win.generated, b_full.generated);
  EXPECT_EQ(b_win.timings.cache_n, b_full.timings.cache_n);
  EXPECT_GE(b_win.timings.cache_n, kPromptLength) << "the follow-up reuses the slot";

  const FinalResult c_win = complete(*windowed, diverging);
  const FinalResult c_full = complete(*full, diverging);
  EXPECT_EQ(c_win.generated, c_full.generated);
  EXPECT_EQ(c_full.timings.cache_n, 60);
  EXPECT_EQ(c_win.timings.cache_n, 0) << "the windowed rows of the first 60 tokens are gone";

  // The follow-up's state went to the host prompt cache when the slot was reused; asked
  // again, it comes back with its windowed rows and serves the whole shared prefix.
  std::vector<int32_t> again = follow_up;
  for (int32_t t : tokens(5, 11)) again.push_back(t);
  const FinalResult d_win = complete(*windowed, again);
  const FinalResult d_full = complete(*full, again);
  EXPECT_EQ(d_win.generated, d_full.generated);
  EXPECT_EQ(d_win.timings.cache_n, d_full.timings.cache_n);
  EXPECT_GE(d_win.timings.cache_n, static_cast<int32_t>(follow_up.size()));
}

}  // namespace
}  // namespace hearth::scheduler
