#include "sampling/candidates.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <vector>

#include "unit/sampling/test_util.h"

namespace hearth::sampling {
namespace {

using test::ids;
using test::kNegInf;

TEST(Candidates, AssignsTheVocabularyInIdOrder) {
  const std::vector<float> logits = {0.5f, -1.0f, std::nanf(""), 3.0f};
  Candidates candidates(logits);
  ASSERT_EQ(candidates.size(), 4u);
  EXPECT_EQ(ids(candidates), (std::vector<int32_t>{0, 1, 2, 3}));
  EXPECT_EQ(candidates[1].logit, -1.0f);
  EXPECT_EQ(candidates[2].logit, kNegInf);  // NaN cannot be ordered: treated as masked
  EXPECT_EQ(candidates[3].p, 0.0f);
  EXPECT_FALSE(candidates.sorted());
  EXPECT_EQ(candidates.selected(), -1);
  EXPECT_EQ(candidates.selected_id(), -1);
  EXPECT_EQ(candidates.max_logit(), 3.0f);

  candidates.select(3);
  candidates.set_sorted(true);
  candidates.assign(logits);  // a new step starts clean
  EXPECT_EQ(candidates.selected(), -1);
  EXPECT_FALSE(candidates.sorted());
  EXPECT_EQ(Candidates().max_logit(), kNegInf);
}

TEST(Candidates, SortIsDescendingWithTiesByTokenId) {
  Candidates candidates(std::vector<float>{1.0f, 3.0f, 2.0f, 3.0f, kNegInf, 1.0f});
  candidates.sort();
  EXPECT_TRUE(candidates.sorted());
  EXPECT_EQ(ids(candidates), (std::vector<int32_t>{1, 3, 2, 0, 5, 4}));

  Candidates reversed;
  reversed.assign({{7, 1.0f, 0}, {2, 1.0f, 0}, {5, 1.0f, 0}});
  reversed.sort();
  EXPECT_EQ(ids(reversed), (std::vector<int32_t>{2, 5, 7}));
}

TEST(Candidates, PartialSortOrdersOnlyTheFront) {
  Candidates candidates(std::vector<float>{0.0f, 5.0f, 1.0f, 5.0f, 4.0f, 2.0f});
  candidates.partial_sort(3);
  EXPECT_FALSE(candidates.sorted());
  EXPECT_EQ(candidates[0].id, 1);
  EXPECT_EQ(candidates[1].id, 3);
  EXPECT_EQ(candidates[2].id, 4);
  candidates.partial_sort(100);  // clamped to the size
  EXPECT_EQ(ids(candidates), (std::vector<int32_t>{1, 3, 4, 5, 2, 0}));
}

TEST(Candidates, SoftmaxMatchesHandComputedValues) {
  Candidates candidates(std::vector<float>{1.0f, 2.0f, 3.0f, kNegInf});
  candidates.softmax();
  // e^-2, e^-1, 1 over their sum.
  EXPECT_NEAR(candidates[0].p, 0.0900306f, 1e-6f);
  EXPECT_NEAR(candidates[1].p, 0.2447285f, 1e-6f);
  EXPECT_NEAR(candidates[2].p, 0.6652410f, 1e-6f);
  EXPECT_EQ(candidates[3].p, 0.0f);
  EXPECT_EQ(ids(candidates), (std::vector<int32_t>{0, 1, 2, 3}));  // no reordering

  Candidates equal(std::vector<float>{7.0f, 7.0f, 7.0f, 7.0f});
  equal.softmax();
  for (const TokenData& entry : equal.entries()) EXPECT_EQ(entry.p, 0.25f);

  Candidates masked(std::vector<float>{kNegInf, kNegInf});
  masked.softmax();
  EXPECT_EQ(masked[0].p, 0.0f);
  EXPECT_EQ(masked[1].p, 0.0f);

  const float inf = std::numeric_limits<float>::infinity();
  Candidates infinite(std::vector<float>{inf, 0.0f, inf});
  infinite.softmax();
  EXPECT_EQ(infinite[0].p, 0.5f);
  EXPECT_EQ(infinite[1].p, 0.0f);
  EXPECT_EQ(infinite[2].p, 0.5f);
}

TEST(Candidates, SoftmaxOfASortedArrayUsesTheFirstEntryAsMaximum) {
  Candidates candidates;
  candidates.assign({{4, 2.0f, 0}, {1, 0.0f, 0}}, /*sorted=*/true);
  EXPECT_EQ(candidates.max_logit(), 2.0f);
  candidates.softmax();
  EXPECT_NEAR(candidates[0].p, 1.0f / (1.0f + std::exp(-2.0f)), 1e-7f);
}

TEST(Candidates, TruncateAndKeepIf) {
  Candidates candidates(std::vector<float>{1.0f, 2.0f, 3.0f, 4.0f});
  candidates.truncate(10);
  EXPECT_EQ(candidates.size(), 4u);
  EXPECT_EQ(candidates.keep_if([](const TokenData& e) { return e.id % 2 == 1; }), 2u);
  EXPECT_EQ(ids(candidates), (std::vector<int32_t>{1, 3}));
  candidates.truncate(1);
  EXPECT_EQ(ids(candidates), (std::vector<int32_t>{1}));
  EXPECT_EQ(candidates.first_max_index(), 0u);
}

}  // namespace
}  // namespace hearth::sampling
