#include "scheduler/planner.h"

#include <gtest/gtest.h>

#include <vector>

namespace hearth::scheduler {
namespace {

using Tokens = std::vector<int32_t>;

PlanInput fresh(int32_t n_slots, const std::vector<Tokens>* cached = nullptr) {
  PlanInput in;
  for (int32_t i = 0; i < n_slots; ++i) {
    PlanSlot s;
    s.id = i;
    if (cached) s.cached = (*cached)[static_cast<size_t>(i)];
    in.slots.push_back(s);
  }
  return in;
}

TEST(PlannerTest, FreshServerTakesTheLastSlot) {
  const Tokens prompt{1, 2, 3, 4, 5};
  PlanInput in = fresh(4);
  in.queue.push_back({prompt});
  const StepPlan plan = plan_step(in);
  ASSERT_EQ(plan.admitted.size(), 1u);
  EXPECT_EQ(plan.admitted[0].slot, 3);
  EXPECT_EQ(plan.admitted[0].n_past, 0);
  EXPECT_EQ(plan.prompt_tokens[3], 5);
  EXPECT_EQ(plan.n_tokens, 5);
}

TEST(PlannerTest, SecondPromptWithoutSimilarityTakesSlotTwo) {
  const std::vector<Tokens> cached{{}, {}, {}, {1, 2, 3, 4, 5, 6, 7}};
  const Tokens once{1, 2, 3, 4, 5}, cat{1, 9, 9};
  PlanInput in = fresh(4, &cached);
  in.slots[3].t_last_used = 100;
  in.queue.push_back({once});
  in.queue.push_back({cat});
  const StepPlan plan = plan_step(in);
  ASSERT_EQ(plan.admitted.size(), 2u);
  EXPECT_EQ(plan.admitted[0].slot, 3);
  EXPECT_EQ(plan.admitted[0].n_past, 4);  // full prefix hit keeps one token to evaluate
  EXPECT_EQ(plan.admitted[1].slot, 2);
  EXPECT_EQ(plan.prompt_tokens[3], 1);
  EXPECT_EQ(plan.prompt_tokens[2], 3);
}

TEST(PlannerTest, ChildrenTakeTheFirstFreeSlots) {
  const std::vector<Tokens> cached{{}, {}, {}, {1, 2, 3, 4, 5, 6}};
  const Tokens prompt{1, 2, 3, 4, 5};
  PlanInput in = fresh(4, &cached);
  PlanTask t{prompt};
  t.n_cmpl = 3;
  in.queue.push_back(t);
  const StepPlan plan = plan_step(in);
  ASSERT_EQ(plan.admitted.size(), 1u);
  EXPECT_EQ(plan.admitted[0].slot, 3);
  EXPECT_EQ(plan.admitted[0].child_slots, (std::vector<int32_t>{0, 1}));
}

TEST(PlannerTest, NCmplWaitsForEnoughSlotsWithoutBlockingOthers) {
  const Tokens prompt{1, 2, 3};
  PlanInput in = fresh(2);
  in.slots[0].busy = true;
  in.slots[0].generating = true;
  PlanTask big{prompt};
  big.n_cmpl = 2;
  in.queue.push_back(big);
  in.queue.push_back({prompt});
  const StepPlan plan = plan_step(in);
  ASSERT_EQ(plan.admitted.size(), 1u);
  EXPECT_EQ(plan.admitted[0].task, 1u);
  EXPECT_EQ(plan.admitted[0].slot, 1);
}

TEST(PlannerTest, SimilarityAboveThresholdWinsOverLru) {
  const std::vector<Tokens> cached{{1, 2, 8, 8}, {1, 2, 3, 9}, {}, {}};
  const Tokens prompt{1, 2, 3, 4, 5, 6, 7, 8, 9, 10};
  PlanInput in = fresh(4, &cached);
  in.queue.push_back({prompt});
  EXPECT_EQ(plan_step(in).admitted[0].slot, 1);
  EXPECT_EQ(plan_step(in).admitted[0].n_past, 3);
  // 3/10 is not above a 0.3 threshold: least recently used instead.
  in.similarity = 0.3f;
  in.slots[3].t_last_used = 5;
  EXPECT_EQ(plan_step(in).admitted[0].slot, 2);
  // A threshold of 0 turns the similarity choice off.
  in.similarity = 0.0f;
  EXPECT_EQ(plan_step(in).admitted[0].slot, 2);
}

TEST(PlannerTest, SimilarityTieKeepsTheFirstSlot) {
  const std::vector<Tokens> cached{{1, 2, 7}, {1, 2, 8}};
  const Tokens prompt{1, 2, 3};
  PlanInput in = fresh(2, &cached);
  in.queue.push_back({prompt});
  EXPECT_EQ(plan_step(in).admitted[0].slot, 0);
}

TEST(PlannerTest, LruPicksOldestAndLastOnTies) {
  const Tokens prompt{5, 6};
  PlanInput in = fresh(4);
  in.slots[0].t_last_used = 30;
  in.slots[1].t_last_used = 10;
  in.slots[2].t_last_used = 10;
  in.slots[3].t_last_used = 20;
  in.queue.push_back({prompt});
  EXPECT_EQ(plan_step(in).admitted[0].slot, 2);
  PlanTask lru_only{prompt};
  lru_only.id_slot = -2;
  const std::vector<Tokens> cached{{5, 6, 7}, {}, {}, {}};
  PlanInput in2 = fresh(4, &cached);
  in2.slots[0].t_last_used = 50;
  in2.queue.push_back(lru_only);
  EXPECT_EQ(plan_step(in2).admitted[0].slot, 3);
}

TEST(PlannerTest, PinnedTaskWaitsForItsSlot) {
  const Tokens prompt{1, 2};
  PlanInput in = fresh(2);
  in.slots[1].busy = true;
  in.slots[1].generating = true;
  PlanTask pinned{prompt};
  pinned.id_slot = 3;  // 3 % 2 = slot 1
  in.queue.push_back(pinned);
  in.queue.push_back({prompt});
  StepPlan plan = plan_step(in);
  ASSERT_EQ(plan.admitted.size(), 1u);
  EXPECT_EQ(plan.admitted[0].task, 1u);
  EXPECT_EQ(plan.admitted[0].slot, 0);
  in.slots[1].busy = false;
  in.slots[1].generating = false;
  in.queue.pop_back();
  plan = plan_step(in);
  ASSERT_EQ(plan.admitted.size(), 1u);
  EXPECT_EQ(plan.admitted[0].slot, 1);
}

TEST(PlannerTest, NoCachePromptEvaluatesEverything) {
  const std::vector<Tokens> cached{{1, 2, 3, 4}};
  const Tokens prompt{1, 2, 3, 4, 5};
  PlanInput in = fresh(1, &cached);
  PlanTask t{prompt};
  t.cache_prompt = false;
  in.queue.push_back(t);
  EXPECT_EQ(plan_step(in).admitted[0].n_past, 0);
  EXPECT_EQ(plan_step(in).prompt_tokens[0], 5);
}

TEST(PlannerTest, BudgetServesGeneratorsFirstThenPromptsInStartOrder) {
  PlanInput in = fresh(4);
  in.n_batch = 10;
  in.slots[0] = {0, true, true, 0, 1, -1, {}};
  in.slots[1] = {1, true, false, 100, 3, -1, {}};  // long prompt, started later
  in.slots[2] = {2, true, false, 6, 2, -1, {}};    // started first
  in.slots[3] = {3, true, true, 0, 4, -1, {}};
  const StepPlan plan = plan_step(in);
  EXPECT_TRUE(plan.decode[0]);
  EXPECT_TRUE(plan.decode[3]);
  EXPECT_EQ(plan.prompt_tokens[2], 6);
  EXPECT_EQ(plan.prompt_tokens[1], 2);
  EXPECT_EQ(plan.n_tokens, 10);
}

TEST(PlannerTest, LongPromptNeverStarvesGenerators) {
  PlanInput in = fresh(2);
  in.n_batch = 8;
  in.slots[0] = {0, true, false, 10000, 1, -1, {}};
  in.slots[1] = {1, true, true, 0, 2, -1, {}};
  int32_t left = 10000;
  for (int step = 0; step < 5; ++step) {
    in.slots[0].prompt_left = left;
    const StepPlan plan = plan_step(in);
    EXPECT_TRUE(plan.decode[1]);
    EXPECT_EQ(plan.prompt_tokens[0], 7);
    EXPECT_LE(plan.n_tokens, in.n_batch);
    left -= plan.prompt_tokens[0];
  }
}

TEST(PlannerTest, WithoutContBatchingPromptsWaitForGenerators) {
  PlanInput in = fresh(2);
  in.cont_batching = false;
  in.slots[0] = {0, true, false, 50, 1, -1, {}};
  in.slots[1] = {1, true, true, 0, 2, -1, {}};
  StepPlan plan = plan_step(in);
  EXPECT_EQ(plan.prompt_tokens[0], 0);
  EXPECT_EQ(plan.n_tokens, 1);
  in.slots[1].generating = false;
  in.slots[1].busy = false;
  plan = plan_step(in);
  EXPECT_EQ(plan.prompt_tokens[0], 50);
}

TEST(PlannerTest, ReusablePrefixKeepsOneTokenToEvaluate) {
  const Tokens cached{1, 2, 3};
  const Tokens same{1, 2, 3};
  EXPECT_EQ(reusable_prefix(cached, {same}), 2);
  const Tokens longer{1, 2, 3, 4};
  EXPECT_EQ(reusable_prefix(cached, {longer}), 3);
  EXPECT_EQ(common_prefix(cached, Tokens{1, 5}), 1u);
}

TEST(PlannerTest, PromptCacheIsConsultedAsTheReferenceDoes) {
  const std::vector<Tokens> cached{{}, {}, {}, {1, 2, 3, 4, 5, 6}};
  const Tokens keeps_most{1, 2, 3, 4, 5, 9}, keeps_one{1, 7, 7}, unrelated{8, 8};
  PlanInput in = fresh(4, &cached);
  in.queue.push_back({keeps_most});  // similar, keeps 5 of 6: no update
  StepPlan plan = plan_step(in);
  ASSERT_EQ(plan.admitted.size(), 1u);
  EXPECT_EQ(plan.admitted[0].slot, 3);
  EXPECT_FALSE(plan.admitted[0].update_cache);
  in.queue[0] = {keeps_one};  // similarity 1/3 on slot 3, keeping 1 of 6 (f_keep < 0.5)
  plan = plan_step(in);
  EXPECT_EQ(plan.admitted[0].slot, 3);
  EXPECT_TRUE(plan.admitted[0].update_cache);
  in.queue[0] = {unrelated};  // no similarity: LRU
  plan = plan_step(in);
  EXPECT_TRUE(plan.admitted[0].update_cache);
  in.queue[0] = {unrelated, 3};  // pinned: never
  plan = plan_step(in);
  EXPECT_FALSE(plan.admitted[0].update_cache);
}

// Embedding inputs are evaluated whole in one step: one that does not fit the room left
// waits (without blocking a later, smaller one), as the reference's "will try next iter".
TEST(PlannerTest, WholePromptsWaitForRoomWithoutBlockingOthers) {
  const Tokens big(6, 7), small(2, 7);
  PlanInput in = fresh(3);
  in.n_batch = 7;
  PlanTask first{small};
  first.whole_prompt = true;
  first.cache_prompt = false;
  PlanTask second{big};
  second.whole_prompt = true;
  second.cache_prompt = false;
  PlanTask third{small};
  third.whole_prompt = true;
  third.cache_prompt = false;
  in.queue = {first, second, third};
  const StepPlan plan = plan_step(in);
  ASSERT_EQ(plan.admitted.size(), 3u);
  std::vector<int32_t> evaluated(3, 0);
  for (const Admission& a : plan.admitted)
    evaluated[a.task] = plan.prompt_tokens[static_cast<size_t>(a.slot)];
  EXPECT_EQ(evaluated, (std::vector<int32_t>{2, 0, 2})) << "the 6-token input waits for a step";
  EXPECT_EQ(plan.n_tokens, 4);
}

TEST(PlannerTest, WholePromptsReuseNoCache) {
  const std::vector<Tokens> cached{{1, 2, 3, 4}};
  PlanInput in = fresh(1, &cached);
  const Tokens prompt{1, 2, 3, 4, 5};
  PlanTask t{prompt};
  t.whole_prompt = true;
  t.cache_prompt = false;
  in.queue.push_back(t);
  const StepPlan plan = plan_step(in);
  ASSERT_EQ(plan.admitted.size(), 1u);
  EXPECT_EQ(plan.admitted[0].n_past, 0);
  EXPECT_EQ(plan.prompt_tokens[0], 5);
}

}  // namespace
}  // namespace hearth::scheduler
