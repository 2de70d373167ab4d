// The dist stage and the random draws behind it.
#include "sampling/dist.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <set>
#include <vector>

#include "sampling/rng.h"
#include "unit/sampling/test_util.h"

namespace hearth::sampling {
namespace {

using test::kNegInf;

TEST(Rng, UniformDoubleIsTwoOutputsOverTwoToThe64) {
  std::mt19937 raw(99);
  std::mt19937 rng(99);
  for (int i = 0; i < 1000; ++i) {
    const double g1 = raw();
    const double g2 = raw();
    const double expected = (g1 + g2 * 4294967296.0) / 18446744073709551616.0;
    const double u = uniform_double(rng);
    ASSERT_EQ(u, expected);
    ASSERT_GE(u, 0.0);
    ASSERT_LT(u, 1.0);
  }
  std::mt19937 raw_f(5);
  std::mt19937 rng_f(5);
  for (int i = 0; i < 1000; ++i) {
    ASSERT_EQ(uniform_float(rng_f), static_cast<float>(raw_f()) / 4294967296.0f);
  }
}

// The reference's Linux builds draw through libstdc++; ours must give the same numbers.
TEST(Rng, MatchesLibstdcxxUniformRealDistribution) {
#if defined(__GLIBCXX__)
  std::mt19937 ours(1234);
  std::mt19937 theirs(1234);
  std::uniform_real_distribution<double> dist_d(0.0, 1.0);
  std::uniform_real_distribution<float> dist_f(0.0f, 1.0f);
  for (int i = 0; i < 10000; ++i) {
    ASSERT_EQ(uniform_double(ours), dist_d(theirs)) << "draw " << i;
    ASSERT_EQ(uniform_float(ours), dist_f(theirs)) << "draw " << i;
  }
#else
  GTEST_SKIP() << "not libstdc++";
#endif
}

TEST(Rng, ResolveSeed) {
  EXPECT_EQ(resolve_seed(0), 0u);
  EXPECT_EQ(resolve_seed(42), 42u);
  EXPECT_EQ(resolve_seed(0xFFFFFFFEu), 0xFFFFFFFEu);
  std::set<uint32_t> random;
  for (int i = 0; i < 4; ++i) random.insert(resolve_seed(kRandomSeed));
  EXPECT_GT(random.size(), 1u);  // fresh values (a repeat has odds of about 2^-32)
}

// The algorithm as the spec states it, written independently of DistStage: float weights
// exp(l - max), a double sum, u from std::mt19937, the first index whose running sum
// reaches sum * u.
int32_t spec_pick(const std::vector<float>& logits, std::mt19937& rng) {
  float max_l = logits[0];
  for (float l : logits) max_l = std::max(max_l, l);
  std::vector<float> weights;
  double sum = 0.0;
  for (float l : logits) {
    weights.push_back(std::exp(l - max_l));
    sum += weights.back();
  }
  const double g1 = rng();
  const double g2 = rng();
  const double u = (g1 + g2 * 4294967296.0) / 18446744073709551616.0;
  double running = 0.0;
  for (size_t i = 0; i < weights.size(); ++i) {
    running += weights[i];
    if (running >= sum * u) return static_cast<int32_t>(i);
  }
  return static_cast<int32_t>(weights.size()) - 1;
}

TEST(Dist, PicksWhatTheSpecifiedAlgorithmPicks) {
  for (uint32_t seed : {0u, 1u, 42u, 0xFFFFFFFEu}) {
    DistStage stage(seed);
    std::mt19937 mirror(seed);
    std::mt19937 logit_rng(seed + 1000);
    std::normal_distribution<float> normal(0.0f, 2.0f);
    for (int step = 0; step < 300; ++step) {
      std::vector<float> logits(50);
      for (float& l : logits) l = normal(logit_rng);
      Candidates candidates(logits);
      stage.apply(candidates);
      ASSERT_EQ(candidates.selected(), spec_pick(logits, mirror)) << "seed " << seed;
      ASSERT_EQ(candidates.selected_id(), candidates.selected());  // no reordering
    }
  }
}

std::vector<int32_t> draw_sequence(DistStage& stage, const std::vector<float>& logits, int n) {
  std::vector<int32_t> picks;
  for (int i = 0; i < n; ++i) {
    Candidates candidates(logits);
    stage.apply(candidates);
    picks.push_back(candidates.selected_id());
  }
  return picks;
}

TEST(Dist, SameSeedSameSequenceAndResetRestarts) {
  const std::vector<float> logits = {0.0f, 0.5f, 1.0f, 0.2f, -0.3f, 0.9f};
  DistStage a(1234);
  DistStage b(1234);
  DistStage c(1235);
  const auto first = draw_sequence(a, logits, 100);
  EXPECT_EQ(draw_sequence(b, logits, 100), first);
  EXPECT_NE(draw_sequence(c, logits, 100), first);
  EXPECT_NE(draw_sequence(a, logits, 100), first);  // the stream moved on
  a.reset();
  EXPECT_EQ(draw_sequence(a, logits, 100), first);
  EXPECT_EQ(a.seed(), 1234u);
  EXPECT_EQ(a.resolved_seed(), 1234u);
}

TEST(Dist, RandomSeedResolvesPerStageAndOnReset) {
  DistStage a(kRandomSeed);
  DistStage b(kRandomSeed);
  EXPECT_EQ(a.seed(), kRandomSeed);
  const uint32_t first = a.resolved_seed();
  a.reset();
  const uint32_t second = a.resolved_seed();
  // Independent fresh seeds; all three equal has odds of about 2^-64.
  EXPECT_FALSE(first == second && second == b.resolved_seed());
}

TEST(Dist, StoresNormalizedProbabilities) {
  Candidates candidates(std::vector<float>{0.0f, std::log(3.0f), kNegInf});
  DistStage(7).apply(candidates);
  EXPECT_NEAR(candidates[0].p, 0.25f, 1e-6f);
  EXPECT_NEAR(candidates[1].p, 0.75f, 1e-6f);
  EXPECT_EQ(candidates[2].p, 0.0f);
  EXPECT_NE(candidates.selected(), 2);
}

TEST(Dist, FrequenciesFollowTheDistribution) {
  const std::vector<float> logits = {std::log(0.5f), std::log(0.3f), std::log(0.2f)};
  DistStage stage(2024);
  std::vector<int> counts(3, 0);
  const int n = 20000;
  for (int32_t pick : draw_sequence(stage, logits, n)) ++counts[static_cast<size_t>(pick)];
  EXPECT_NEAR(counts[0] / double(n), 0.5, 0.015);
  EXPECT_NEAR(counts[1] / double(n), 0.3, 0.015);
  EXPECT_NEAR(counts[2] / double(n), 0.2, 0.015);
}

TEST(Dist, ASingleCandidateStillDrawsOnce) {
  const std::vector<float> logits = {0.0f, 0.1f, 0.2f, 0.3f};
  DistStage with_single(99);
  DistStage without(99);
  Candidates single(std::vector<float>{1.5f});
  with_single.apply(single);
  EXPECT_EQ(single.selected(), 0);
  EXPECT_EQ(single[0].p, 1.0f);
  Candidates discarded(logits);
  without.apply(discarded);  // uses up the same one draw
  EXPECT_EQ(draw_sequence(with_single, logits, 50), draw_sequence(without, logits, 50));
}

TEST(Dist, MaskedEntriesAreNeverChosen) {
  DistStage stage(3);
  const auto picks = draw_sequence(stage, {kNegInf, 0.0f, kNegInf, 0.0f, kNegInf}, 2000);
  const std::set<int32_t> seen(picks.begin(), picks.end());
  EXPECT_EQ(seen, (std::set<int32_t>{1, 3}));

  Candidates all_masked(std::vector<float>{kNegInf, kNegInf});
  stage.apply(all_masked);
  EXPECT_EQ(all_masked.selected(), -1);
  Candidates one_masked(std::vector<float>{kNegInf});
  stage.apply(one_masked);
  EXPECT_EQ(one_masked.selected(), -1);
  Candidates empty;
  stage.apply(empty);
  EXPECT_EQ(empty.selected(), -1);
}

TEST(Dist, ASortedArrayUsesItsOrder) {
  // dist walks the array in its current order: after a sort, index 0 is the top logit.
  Candidates candidates(std::vector<float>{0.0f, 50.0f, 1.0f});
  candidates.sort();
  DistStage(11).apply(candidates);
  EXPECT_EQ(candidates.selected(), 0);
  EXPECT_EQ(candidates.selected_id(), 1);
}

}  // namespace
}  // namespace hearth::sampling
