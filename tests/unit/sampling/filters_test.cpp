// top_k, top_p, min_p, temperature and greedy against hand-computed results.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <vector>

#include "sampling/greedy.h"
#include "sampling/min_p.h"
#include "sampling/temperature.h"
#include "sampling/top_k.h"
#include "sampling/top_p.h"
#include "unit/sampling/test_util.h"

namespace hearth::sampling {
namespace {

using test::ids;
using test::kNegInf;
using test::logits_of;

TEST(TopK, KeepsTheKHighestSortedWithTiesByTokenId) {
  Candidates candidates(std::vector<float>{1.0f, 5.0f, 3.0f, 5.0f, 2.0f});
  TopKStage(2).apply(candidates);
  EXPECT_EQ(ids(candidates), (std::vector<int32_t>{1, 3}));
  EXPECT_TRUE(candidates.sorted());

  Candidates three(std::vector<float>{1.0f, 5.0f, 3.0f, 5.0f, 2.0f});
  TopKStage(3).apply(three);
  EXPECT_EQ(ids(three), (std::vector<int32_t>{1, 3, 2}));
}

TEST(TopK, NonPositiveKIsANoOp) {
  for (int32_t k : {0, -1, -40}) {
    Candidates candidates(std::vector<float>{1.0f, 5.0f, 3.0f});
    TopKStage(k).apply(candidates);
    EXPECT_EQ(ids(candidates), (std::vector<int32_t>{0, 1, 2}));
    EXPECT_FALSE(candidates.sorted());
  }
}

TEST(TopK, KAboveTheSizeKeepsAllSorted) {
  Candidates candidates(std::vector<float>{1.0f, 5.0f, 3.0f});
  TopKStage(40).apply(candidates);
  EXPECT_EQ(ids(candidates), (std::vector<int32_t>{1, 2, 0}));
  EXPECT_TRUE(candidates.sorted());
}

TEST(TopK, SortedInputIsOnlyCut) {
  Candidates candidates;
  // Marked sorted (as an earlier stage would leave it): the order is trusted, not redone.
  candidates.assign({{9, 3.0f, 0}, {2, 2.0f, 0}, {4, 1.0f, 0}}, /*sorted=*/true);
  TopKStage(2).apply(candidates);
  EXPECT_EQ(ids(candidates), (std::vector<int32_t>{9, 2}));
}

TEST(TopP, KeepsTheShortestPrefixReachingP) {
  // Four equal logits: p = 0.25 each, exactly.
  Candidates half(std::vector<float>{0.0f, 0.0f, 0.0f, 0.0f});
  TopPStage(0.5f, 0).apply(half);
  EXPECT_EQ(ids(half), (std::vector<int32_t>{0, 1}));  // cum 0.5 >= 0.5: inclusive
  EXPECT_TRUE(half.sorted());
  EXPECT_EQ(half[0].p, 0.25f);  // probabilities of the softmax before the cut

  Candidates above(std::vector<float>{0.0f, 0.0f, 0.0f, 0.0f});
  TopPStage(0.51f, 0).apply(above);
  EXPECT_EQ(above.size(), 3u);

  // p = 0.665, 0.245, 0.090 for logits 3, 2, 1.
  Candidates skewed(std::vector<float>{1.0f, 3.0f, 2.0f});
  TopPStage(0.9f, 0).apply(skewed);
  EXPECT_EQ(ids(skewed), (std::vector<int32_t>{1, 2}));
  Candidates skewed_low(std::vector<float>{1.0f, 3.0f, 2.0f});
  TopPStage(0.6f, 0).apply(skewed_low);
  EXPECT_EQ(ids(skewed_low), (std::vector<int32_t>{1}));
}

TEST(TopP, EdgeValuesOfPAndMinKeep) {
  Candidates off(std::vector<float>{1.0f, 3.0f, 2.0f});
  TopPStage(1.0f, 0).apply(off);
  EXPECT_EQ(ids(off), (std::vector<int32_t>{0, 1, 2}));
  EXPECT_FALSE(off.sorted());
  EXPECT_EQ(off[0].p, 0.0f);  // a no-op does not even compute probabilities

  Candidates zero(std::vector<float>{1.0f, 3.0f, 2.0f, 3.0f});
  TopPStage(0.0f, 0).apply(zero);
  EXPECT_EQ(ids(zero), (std::vector<int32_t>{1}));  // the arg-max, first by id

  Candidates zero_keep(std::vector<float>{1.0f, 3.0f, 2.0f, 3.0f});
  TopPStage(0.0f, 3).apply(zero_keep);
  EXPECT_EQ(ids(zero_keep), (std::vector<int32_t>{1, 3, 2}));

  Candidates keep_more(std::vector<float>{1.0f, 3.0f, 2.0f});
  TopPStage(0.1f, 10).apply(keep_more);  // min_keep above the size: everything stays
  EXPECT_EQ(ids(keep_more), (std::vector<int32_t>{1, 2, 0}));
  EXPECT_TRUE(keep_more.sorted());
}

TEST(TopP, ProbabilitiesAreRelativeToTheSurvivors) {
  // After top_k(2) only two equal logits remain: each has p = 0.5, so p = 0.5 keeps one.
  Candidates candidates(std::vector<float>{0.0f, 5.0f, 5.0f, 4.9f});
  TopKStage(2).apply(candidates);
  TopPStage(0.5f, 0).apply(candidates);
  EXPECT_EQ(ids(candidates), (std::vector<int32_t>{1}));
  EXPECT_EQ(candidates[0].p, 0.5f);
}

// The nucleus by a plain full sort and walk, for comparison with the partial-sort path.
std::vector<int32_t> naive_nucleus(const std::vector<float>& logits, float p) {
  Candidates candidates(logits);
  candidates.softmax();
  candidates.sort();
  float cumulative = 0.0f;
  size_t keep = candidates.size();
  for (size_t i = 0; i < candidates.size(); ++i) {
    cumulative += candidates[i].p;
    if (cumulative >= p) {
      keep = i + 1;
      break;
    }
  }
  candidates.truncate(keep);
  return ids(candidates);
}

TEST(TopP, LargeVocabularyGivesTheSameResultAsAFullSort) {
  std::mt19937 rng(7);
  for (float spread : {8.0f, 0.01f}) {  // peaked (short nucleus) and flat (longer than 256)
    std::normal_distribution<float> normal(0.0f, spread);
    std::vector<float> logits(5000);
    for (float& logit : logits) logit = std::round(normal(rng) * 4.0f) / 4.0f;  // with ties
    for (float p : {0.5f, 0.9f, 0.95f}) {
      Candidates candidates(logits);
      TopPStage(p, 0).apply(candidates);
      EXPECT_EQ(ids(candidates), naive_nucleus(logits, p)) << "spread " << spread << " p " << p;
    }
  }
}

TEST(MinP, KeepsEntriesAboveAFractionOfTheMaximumInPlace) {
  // Relative probabilities 0.1, 1, 0.04, 0.5.
  const std::vector<float> logits = {std::log(0.1f), 0.0f, std::log(0.04f), std::log(0.5f)};
  Candidates candidates(logits);
  MinPStage(0.05f, 0).apply(candidates);
  EXPECT_EQ(ids(candidates), (std::vector<int32_t>{0, 1, 3}));  // order kept
  EXPECT_FALSE(candidates.sorted());

  Candidates strict(logits);
  MinPStage(0.2f, 0).apply(strict);
  EXPECT_EQ(ids(strict), (std::vector<int32_t>{1, 3}));
}

TEST(MinP, TheThresholdIsInclusive) {
  // max + ln(0.5) is exactly the second logit.
  Candidates candidates(std::vector<float>{std::log(0.5f), 0.0f, -5.0f});
  MinPStage(0.5f, 0).apply(candidates);
  EXPECT_EQ(ids(candidates), (std::vector<int32_t>{0, 1}));
}

TEST(MinP, MinKeepFallsBackToTheSortedPrefix) {
  const std::vector<float> logits = {std::log(0.1f), 0.0f, std::log(0.04f), std::log(0.5f)};
  Candidates candidates(logits);
  MinPStage(0.6f, 3).apply(candidates);  // only id 1 passes; min_keep 3 tops it up
  EXPECT_EQ(ids(candidates), (std::vector<int32_t>{1, 3, 0}));
  EXPECT_TRUE(candidates.sorted());

  Candidates sorted_input(logits);
  sorted_input.sort();
  MinPStage(0.05f, 0).apply(sorted_input);  // sorted path: walk the prefix
  EXPECT_EQ(ids(sorted_input), (std::vector<int32_t>{1, 3, 0}));
  Candidates sorted_keep(logits);
  sorted_keep.sort();
  MinPStage(0.9f, 2).apply(sorted_keep);
  EXPECT_EQ(ids(sorted_keep), (std::vector<int32_t>{1, 3}));
}

TEST(MinP, EdgeValuesOfP) {
  const std::vector<float> logits = {1.0f, 3.0f, 3.0f, 2.0f};
  Candidates off(logits);
  MinPStage(0.0f, 0).apply(off);
  EXPECT_EQ(off.size(), 4u);
  Candidates negative(logits);
  MinPStage(-1.0f, 0).apply(negative);
  EXPECT_EQ(negative.size(), 4u);
  Candidates one(logits);
  MinPStage(1.0f, 0).apply(one);  // the maxima only, ties included
  EXPECT_EQ(ids(one), (std::vector<int32_t>{1, 2}));
  Candidates above_one(logits);
  MinPStage(2.0f, 0).apply(above_one);  // would remove everything: the top entry stays
  EXPECT_EQ(ids(above_one), (std::vector<int32_t>{1}));
  Candidates masked(std::vector<float>{kNegInf, kNegInf});
  MinPStage(0.5f, 0).apply(masked);
  EXPECT_EQ(masked.size(), 2u);
}

TEST(Temperature, DividesLogits) {
  Candidates candidates(std::vector<float>{2.0f, -4.0f, kNegInf});
  TemperatureStage(0.5f).apply(candidates);
  EXPECT_EQ(logits_of(candidates), (std::vector<float>{4.0f, -8.0f, kNegInf}));
  TemperatureStage(2.0f).apply(candidates);
  EXPECT_EQ(logits_of(candidates), (std::vector<float>{2.0f, -4.0f, kNegInf}));
  TemperatureStage(1.0f).apply(candidates);
  EXPECT_EQ(logits_of(candidates), (std::vector<float>{2.0f, -4.0f, kNegInf}));
}

TEST(Temperature, ZeroOrLessMasksAllButTheFirstMaximum) {
  for (float t : {0.0f, -1.0f}) {
    Candidates candidates(std::vector<float>{1.0f, 3.0f, 2.0f, 3.0f});
    TemperatureStage(t).apply(candidates);
    EXPECT_EQ(logits_of(candidates), (std::vector<float>{kNegInf, 3.0f, kNegInf, kNegInf}));
    EXPECT_EQ(candidates.size(), 4u);
  }
  // "First" is in the current order, which after a sort is by token id among ties.
  Candidates sorted;
  sorted.assign({{2, 3.0f, 0}, {0, 3.0f, 0}, {1, 1.0f, 0}}, /*sorted=*/true);
  TemperatureStage(0.0f).apply(sorted);
  EXPECT_EQ(logits_of(sorted), (std::vector<float>{3.0f, kNegInf, kNegInf}));
  EXPECT_TRUE(sorted.sorted());
}

TEST(Greedy, PicksTheFirstMaximum) {
  Candidates candidates(std::vector<float>{1.0f, 3.0f, 2.0f, 3.0f});
  GreedyStage().apply(candidates);
  EXPECT_EQ(candidates.selected_id(), 1);
  ASSERT_EQ(candidates.size(), 1u);
  EXPECT_EQ(candidates[0].p, 1.0f);

  Candidates masked(std::vector<float>{kNegInf, kNegInf});
  GreedyStage().apply(masked);
  EXPECT_EQ(masked.selected(), -1);
  Candidates empty;
  GreedyStage().apply(empty);
  EXPECT_EQ(empty.selected(), -1);
}

}  // namespace
}  // namespace hearth::sampling
