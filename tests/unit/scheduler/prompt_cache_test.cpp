// The host prompt cache: its selection and eviction rules on plain data, and restores through
// the Scheduler with the stories260K model.
#include "scheduler/prompt_cache.h"

#include <gtest/gtest.h>

#include <numeric>

#include "scheduler_fixture.h"

namespace hearth::scheduler {
namespace {

using test_support::CollectSink;

CachedPrompt entry(std::vector<int32_t> tokens, size_t bytes_per_token = 10) {
  CachedPrompt e;
  e.kv.n_tokens = static_cast<int32_t>(tokens.size());
  e.kv.data.assign(tokens.size() * bytes_per_token, 0);
  e.tokens = std::move(tokens);
  return e;
}

std::vector<int32_t> seq(int32_t first, int32_t n) {
  std::vector<int32_t> v(static_cast<size_t>(n));
  std::iota(v.begin(), v.end(), first);
  return v;
}

TEST(PromptCacheTest, SkipsContainedStatesAndDropsObsoleteOnes) {
  PromptCache cache(0, 0);
  cache.insert(entry({1, 2, 3, 4}));
  EXPECT_FALSE(cache.wants(std::vector<int32_t>{1, 2, 3}));  // a prefix of an entry
  EXPECT_FALSE(cache.wants(std::vector<int32_t>{}));
  EXPECT_TRUE(cache.wants(std::vector<int32_t>{1, 2, 3, 4, 5}));
  cache.insert(entry({1, 2, 3, 4, 5}));  // contains the first entry, which goes
  ASSERT_EQ(cache.entries().size(), 1u);
  EXPECT_EQ(cache.entries().front().tokens.size(), 5u);
}

TEST(PromptCacheTest, TakesTheEntryThatBeatsTheSlotOnBothShares) {
  PromptCache cache(0, 0);
  cache.insert(entry(seq(1, 40)));                 // long: a 5-token prompt keeps 5/40
  cache.insert(entry({1, 2, 3, 4, 5, 100, 101}));  // keeps 5/7
  const std::vector<int32_t> prompt{1, 2, 3, 4, 5};
  // The slot already holds the whole prompt: nothing beats it.
  EXPECT_FALSE(cache.take_best(std::vector<int32_t>{1, 2, 3, 4, 5, 9}, prompt).has_value());
  auto best = cache.take_best(std::vector<int32_t>{1, 200}, prompt);
  ASSERT_TRUE(best.has_value());
  EXPECT_EQ(best->tokens.size(), 7u);
  EXPECT_EQ(cache.entries().size(), 1u);  // taken out
  // The 40-token entry would keep under a quarter of itself: never used.
  EXPECT_FALSE(cache.take_best(std::vector<int32_t>{}, prompt).has_value());
}

TEST(PromptCacheTest, SizeBoundEvictsTheLeastRecentlyUsed) {
  PromptCache cache(250, 0);  // 10 bytes per token: 25 tokens
  cache.insert(entry(seq(1000, 10)));
  cache.insert(entry(seq(2000, 10)));
  // Using the first entry takes it out; stored again, it is now the most recent.
  auto used = cache.take_best(std::vector<int32_t>{}, seq(1000, 4));
  ASSERT_TRUE(used.has_value());
  cache.insert(std::move(*used));
  cache.insert(entry(seq(3000, 10)));
  cache.update();
  ASSERT_EQ(cache.entries().size(), 2u);
  EXPECT_EQ(cache.entries().front().tokens[0], 1000);
  EXPECT_EQ(cache.entries().back().tokens[0], 3000);
  EXPECT_LE(cache.size_bytes(), 250u);
  // At least one entry stays, whatever its size.
  PromptCache tiny(5, 0);
  tiny.insert(entry(seq(1, 10)));
  tiny.update();
  EXPECT_EQ(tiny.entries().size(), 1u);
  EXPECT_EQ(PromptCache::limit_from_mib(-1), 0u);
  EXPECT_EQ(PromptCache::limit_from_mib(2), 2u * 1024 * 1024);
}

TEST(PromptCacheTest, TokenLimitAppliesWithoutAByteLimit) {
  PromptCache cache(0, 15);
  cache.insert(entry(seq(1000, 10)));
  cache.insert(entry(seq(2000, 10)));
  cache.update();
  ASSERT_EQ(cache.entries().size(), 1u);
  EXPECT_EQ(cache.entries().front().tokens[0], 2000);
}

class PromptCacheSchedulerTest : public test_support::SchedulerTest {
 protected:
  FinalResult run(Scheduler& s, const std::vector<int32_t>& prompt, int32_t n_predict) {
    auto sink = std::make_shared<CollectSink>();
    EXPECT_TRUE(s.submit(greedy(prompt, n_predict, sink)).is_ok());
    EXPECT_TRUE(sink->wait(1));
    EXPECT_EQ(sink->finals.size(), 1u);
    return sink->finals.empty() ? FinalResult{} : sink->finals[0];
  }

  // A (long), B (unrelated) on the same slot, then A again: returns the third result and
  // checks it generated what the first did.
  FinalResult replay_aba(SchedulerConfig cfg) {
    auto sched = make(cfg);
    EXPECT_TRUE(sched);
    if (!sched) return {};
    sched->start();
    const auto a = tok_->tokenize(
        "Once upon a time there was a little girl named Lily who loved to play outside in the "
        "park with her friends",
        true, true);
    const auto b = tok_->tokenize("The dog ran", true, true);
    const FinalResult first = run(*sched, a, 8);
    const FinalResult other = run(*sched, b, 8);
    EXPECT_EQ(other.id_slot, first.id_slot);
    EXPECT_EQ(other.timings.cache_n, 1);
    const FinalResult again = run(*sched, a, 8);
    EXPECT_EQ(again.generated, first.generated);
    EXPECT_EQ(sched->slots()[static_cast<size_t>(again.id_slot)].n_prompt_tokens, again.n_cached);
    sched->stop();
    n_prompt_ = static_cast<int32_t>(a.size());
    return again;
  }

  int32_t n_prompt_ = 0;
};

TEST_F(PromptCacheSchedulerTest, UnifiedCacheRestoresAnEvictedPrompt) {
  SchedulerConfig cfg;
  cfg.n_slots = 1;
  cfg.kv_unified = true;
  const FinalResult again = replay_aba(cfg);
  EXPECT_EQ(again.timings.cache_n, n_prompt_ - 1);
  EXPECT_EQ(again.timings.prompt_n, 1);
}

TEST_F(PromptCacheSchedulerTest, UnifiedIdleSlotsAreStoredAndCleared) {
  SchedulerConfig cfg;
  cfg.n_slots = 2;
  cfg.kv_unified = true;
  auto sched = make(cfg);
  ASSERT_TRUE(sched);
  sched->start();
  const auto a = tok_->tokenize("Once upon a time there was a little girl named Lily", true, true);
  const FinalResult first = run(*sched, a, 4);
  // An unrelated task (too long to be similar) takes the other slot; once it is launched,
  // the idle slot's state moves to the host cache.
  const FinalResult other = run(
      *sched, tok_->tokenize("The dog ran to the big tree and barked at the cat", true, true), 4);
  EXPECT_NE(other.id_slot, first.id_slot);
  EXPECT_EQ(sched->slots()[static_cast<size_t>(first.id_slot)].n_prompt_tokens, 0);
  const FinalResult again = run(*sched, a, 4);
  EXPECT_EQ(again.timings.cache_n, static_cast<int32_t>(a.size()) - 1);
  EXPECT_EQ(again.generated, first.generated);
  sched->stop();
}

TEST_F(PromptCacheSchedulerTest, NoRestoreWithTheCacheOff) {
  SchedulerConfig cfg;
  cfg.n_slots = 1;
  cfg.kv_unified = true;
  cfg.cache_ram_mib = 0;
  EXPECT_EQ(replay_aba(cfg).timings.cache_n, 1);
}

TEST_F(PromptCacheSchedulerTest, SeparateSlotCachesUseTheCacheToo) {
  // The reference consults the cache whatever the KV layout (see slot_cache.cpp).
  SchedulerConfig cfg;
  cfg.n_slots = 1;
  const FinalResult again = replay_aba(cfg);
  EXPECT_EQ(again.timings.cache_n, n_prompt_ - 1);
}

}  // namespace
}  // namespace hearth::scheduler

namespace hearth::scheduler {
namespace {

// A unified cache is one KV pool for every slot: a task that needs room the idle slots still
// hold gets it (their tokens are dropped), instead of failing.
TEST_F(PromptCacheSchedulerTest, UnifiedPoolEvictsIdleSlotsForRoom) {
  SchedulerConfig cfg;
  cfg.n_slots = 2;
  cfg.n_ctx_slot = 64;
  cfg.kv_unified = true;
  cfg.cache_ram_mib = 0;
  cfg.cache_idle_slots = false;
  auto sched = make(cfg);
  ASSERT_TRUE(sched);
  sched->start();
  const auto a = tok_->tokenize("Once upon a time there was a little girl named Lily", true, true);
  const FinalResult first = run(*sched, a, 30);
  EXPECT_GT(sched->slots()[static_cast<size_t>(first.id_slot)].n_prompt_tokens, 30);
  const auto b = tok_->tokenize("The dog ran to the big tree and barked at the cat", true, true);
  const FinalResult second = run(*sched, b, 40);
  EXPECT_NE(second.id_slot, first.id_slot);
  EXPECT_EQ(second.n_predicted, 40);
  EXPECT_EQ(sched->slots()[static_cast<size_t>(first.id_slot)].n_prompt_tokens, 0);
  sched->stop();
}

}  // namespace
}  // namespace hearth::scheduler
