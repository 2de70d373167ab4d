// The discrete draw, mirostat v1/v2, adaptive-p and infill against hand-computed results.
#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <vector>

#include "sampling/adaptive_p.h"
#include "sampling/infill.h"
#include "sampling/mirostat.h"
#include "sampling/mirostat_v2.h"
#include "sampling/rng.h"
#include "unit/sampling/test_util.h"

namespace hearth::sampling {
namespace {

using test::FakeVocab;
using test::ids;
using test::kNegInf;
using test::logits_for;
using test::logits_of;

std::vector<TokenData> with_p(const std::vector<float>& p) {
  std::vector<TokenData> out;
  for (size_t i = 0; i < p.size(); ++i) out.push_back({static_cast<int32_t>(i), 0.0f, p[i]});
  return out;
}

// The index a discrete draw over `cumulative` (normalized, last = 1) gives for `u`.
size_t index_for(double u, const std::vector<double>& cumulative) {
  size_t i = 0;
  while (i + 1 < cumulative.size() && cumulative[i] < u) ++i;
  return i;
}

TEST(DiscreteDraw, FirstCumulativeReachingOneUniformDouble) {
  for (uint32_t seed = 0; seed < 50; ++seed) {
    std::mt19937 rng(seed);
    std::mt19937 expected(seed);
    const double u = uniform_double(expected);
    // Weights 1 1 2 (not normalized): cumulative 0.25 0.5 1.
    EXPECT_EQ(discrete_draw(with_p({1.0f, 1.0f, 2.0f}), rng), index_for(u, {0.25, 0.5, 1.0}));
    EXPECT_EQ(rng, expected);  // exactly two 32-bit outputs used
  }
}

TEST(DiscreteDraw, SingleEntryDrawsNothingAndZeroWeightsAreNeverChosen) {
  std::mt19937 rng(5);
  const std::mt19937 before = rng;
  EXPECT_EQ(discrete_draw(with_p({0.7f}), rng), 0u);
  EXPECT_EQ(rng, before);
  for (int i = 0; i < 200; ++i) {
    EXPECT_EQ(discrete_draw(with_p({0.0f, 0.5f, 0.0f}), rng), 1u);
  }
}

// p proportional to 1 / (i + 1)^2: the Zipf fit gives s = 2 exactly, so with N = 4 and
// mu = 2 tau, k = (2^mu / (1 - 1/4))^(1/2).
std::vector<float> zipf2_logits() {
  return {0.0f, -2.0f * std::log(2.0f), -2.0f * std::log(3.0f), -2.0f * std::log(4.0f)};
}

TEST(Mirostat, TruncatesToTheEstimatedKAndUpdatesMu) {
  // tau 1: mu = 2, k = sqrt(4 / 0.75) = 2.31 -> top 2, p = 0.8 0.2.
  constexpr uint32_t kSeed = 77;
  MirostatStage stage(/*n_vocab=*/0, kSeed, /*tau=*/1.0f, /*eta=*/0.1f);
  EXPECT_EQ(stage.mu(), 2.0f);
  Candidates candidates(zipf2_logits());
  stage.apply(candidates);
  ASSERT_EQ(ids(candidates), (std::vector<int32_t>{0, 1}));
  EXPECT_NEAR(candidates[0].p, 0.8f, 1e-6f);
  EXPECT_NEAR(candidates[1].p, 0.2f, 1e-6f);
  std::mt19937 expected(kSeed);
  const size_t chosen = index_for(uniform_double(expected), {0.8, 1.0});
  EXPECT_EQ(candidates.selected(), static_cast<int32_t>(chosen));
  const double surprise = -std::log2(chosen == 0 ? 0.8 : 0.2);
  EXPECT_NEAR(stage.mu(), 2.0 - 0.1 * (surprise - 1.0), 1e-5);

  // tau 3: mu = 6, k = sqrt(64 / 0.75) = 9.2 -> everything (4) kept.
  MirostatStage wide(0, kSeed, 3.0f, 0.1f);
  Candidates all(zipf2_logits());
  wide.apply(all);
  EXPECT_EQ(all.size(), 4u);

  // reset(): mu back to 2 tau.
  stage.reset();
  EXPECT_EQ(stage.mu(), 2.0f);
}

TEST(Mirostat, VocabularySizeAndSingleCandidate) {
  // N = 1000: k = sqrt(4 / 0.999) = 2.001 -> still 2.
  MirostatStage big(1000, 1, 1.0f, 0.1f);
  Candidates candidates(zipf2_logits());
  big.apply(candidates);
  EXPECT_EQ(candidates.size(), 2u);
  // A single candidate: the fit is 0 / 0, k counts as 1; it is chosen without a draw.
  MirostatStage single(0, 1, 1.0f, 0.1f);
  Candidates one(std::vector<float>{0.5f});
  single.apply(one);
  EXPECT_EQ(one.selected(), 0);
  EXPECT_EQ(one[0].p, 1.0f);
  EXPECT_NEAR(single.mu(), 2.0f - 0.1f * (0.0f - 1.0f), 1e-6f);
  // Everything masked: nothing selected.
  Candidates masked(std::vector<float>{kNegInf, kNegInf});
  single.apply(masked);
  EXPECT_EQ(masked.selected(), -1);
}

TEST(MirostatV2, KeepsTokensWithinMuBits) {
  // p = 0.5 0.25 0.125 0.125: surprises 1 2 3 3 bits. tau 1.25 -> mu 2.5: keep the first two,
  // renormalized to 2/3 1/3.
  constexpr uint32_t kSeed = 9;
  MirostatV2Stage stage(kSeed, 1.25f, 0.1f);
  Candidates candidates(logits_for({0.125, 0.5, 0.125, 0.25}));
  stage.apply(candidates);
  ASSERT_EQ(ids(candidates), (std::vector<int32_t>{1, 3}));
  EXPECT_NEAR(candidates[0].p, 2.0f / 3.0f, 1e-6f);
  std::mt19937 expected(kSeed);
  const size_t chosen = index_for(uniform_double(expected), {2.0 / 3.0, 1.0});
  EXPECT_EQ(candidates.selected(), static_cast<int32_t>(chosen));
  const double p = chosen == 0 ? 2.0 / 3.0 : 1.0 / 3.0;
  EXPECT_NEAR(stage.mu(), 2.5 - 0.1 * (-std::log2(p) - 1.25), 1e-5);
}

TEST(MirostatV2, KeepsTheTopOneWhenNothingIsWithinMu) {
  // tau 0.1 -> mu 0.2 < 1 bit: only the top token; its p becomes 1 (surprise 0).
  MirostatV2Stage stage(3, 0.1f, 0.5f);
  Candidates candidates(logits_for({0.125, 0.5, 0.125, 0.25}));
  stage.apply(candidates);
  ASSERT_EQ(ids(candidates), (std::vector<int32_t>{1}));
  EXPECT_EQ(candidates.selected(), 0);
  EXPECT_NEAR(stage.mu(), 0.2f + 0.5f * 0.1f, 1e-6f);
  // No draw was made: the next step draws what a fresh stage's first step draws.
  MirostatV2Stage fresh(3, 5.0f, 0.1f);
  MirostatV2Stage used(3, 5.0f, 0.1f);
  Candidates one(std::vector<float>{1.0f});
  used.apply(one);
  for (int step = 0; step < 20; ++step) {
    Candidates a(logits_for({0.3, 0.3, 0.4}));
    Candidates b(logits_for({0.3, 0.3, 0.4}));
    fresh.apply(a);
    used.apply(b);
    ASSERT_EQ(a.selected_id(), b.selected_id());
  }
}

TEST(AdaptiveP, ReshapesAroundTheAdaptedTarget) {
  // target 0.5, decay 0.5: the average starts at 0.5, so the adapted target is 0.5.
  constexpr uint32_t kSeed = 21;
  AdaptivePStage stage(0.5f, 0.5f, kSeed);
  EXPECT_EQ(stage.weighted_sum(), 1.0f);
  EXPECT_EQ(stage.total_weight(), 2.0f);
  EXPECT_EQ(stage.adapted_target(), 0.5f);
  Candidates candidates(logits_for({0.5, 0.3, 0.2, 0.0}));
  stage.apply(candidates);
  // Distances 0, 0.2/0.3, 0.3/0.3 -> logits 5, 5 - 10 (4/9) / (5/3) = 2.333, 5 - 10/2 = 0.
  EXPECT_FLOAT_EQ(candidates[0].logit, 5.0f);
  EXPECT_NEAR(candidates[1].logit, 5.0f - 8.0f / 3.0f, 1e-5f);
  EXPECT_NEAR(candidates[2].logit, 0.0f, 1e-5f);
  EXPECT_EQ(candidates[3].logit, kNegInf);
  const double w0 = std::exp(5.0);
  const double w1 = std::exp(5.0 - 8.0 / 3.0);
  const double w2 = 1.0;
  const double sum = w0 + w1 + w2;
  EXPECT_NEAR(candidates[1].p, w1 / sum, 1e-5);
  std::mt19937 expected(kSeed);
  const size_t chosen = index_for(uniform_double(expected), {w0 / sum, (w0 + w1) / sum, 1.0, 1.0});
  ASSERT_EQ(candidates.selected(), static_cast<int32_t>(chosen));

  // Accepting the chosen token folds its original probability into the average.
  const float original[] = {0.5f, 0.3f, 0.2f};
  stage.accept(candidates.selected_id());
  EXPECT_NEAR(stage.weighted_sum(), original[chosen] + 0.5f * 1.0f, 1e-6f);
  EXPECT_EQ(stage.total_weight(), 2.0f);  // 1 + 0.5 * 2
  // The pending token is used once.
  const float after = stage.weighted_sum();
  stage.accept(candidates.selected_id());
  EXPECT_EQ(stage.weighted_sum(), after);
}

TEST(AdaptiveP, AverageMovesTheTarget) {
  AdaptivePStage stage(0.5f, 0.5f, 4);
  // The only finite candidate: chosen with original probability 1.
  Candidates candidates(logits_for({1.0, 0.0}));
  stage.apply(candidates);
  ASSERT_EQ(candidates.selected_id(), 0);
  stage.accept(0);
  // ws = 1 + 0.5 * 1 = 1.5, tw = 2: average 0.75, adapted target 2 * 0.5 - 0.75 = 0.25.
  EXPECT_FLOAT_EQ(stage.adapted_target(), 0.25f);
  // Another token than the pending one: no update.
  Candidates again(logits_for({1.0, 0.0}));
  stage.apply(again);
  stage.accept(1);
  EXPECT_FLOAT_EQ(stage.adapted_target(), 0.25f);
  stage.reset();
  EXPECT_EQ(stage.adapted_target(), 0.5f);
  // Decay is clamped to 0.99.
  AdaptivePStage clamped(0.5f, 2.0f, 4);
  EXPECT_NEAR(clamped.total_weight(), 100.0f, 1e-3f);
}

TEST(AdaptiveP, NegativeTargetSamplesTheSoftmaxAsIs) {
  constexpr uint32_t kSeed = 8;
  AdaptivePStage stage(-1.0f, 0.9f, kSeed);
  const std::vector<float> logits = logits_for({0.25, 0.25, 0.5});
  Candidates candidates(logits);
  stage.apply(candidates);
  EXPECT_EQ(logits_of(candidates), logits);
  std::mt19937 expected(kSeed);
  EXPECT_EQ(candidates.selected(),
            static_cast<int32_t>(index_for(uniform_double(expected), {0.25, 0.5, 1.0})));
  const float before = stage.weighted_sum();
  stage.accept(candidates.selected_id());
  EXPECT_EQ(stage.weighted_sum(), before);
}

// 0 "foo", 1 "fo", 2 "bar", 3 the EOG token, 4 "ba", 5 "z".
FakeVocab infill_vocab(int32_t eot = 3) {
  return FakeVocab({"foo", "fo", "bar", "<eot>", "ba", "z"}, {3}, eot);
}

TEST(Infill, LikelyEndKeepsOnlyEogTokens) {
  // 3 * P_eog * n > P_txt: with six candidates an EOG probability of 0.1 is enough.
  const FakeVocab vocab = infill_vocab();
  Candidates candidates(logits_for({0.2, 0.2, 0.2, 0.1, 0.2, 0.1}));
  InfillStage(vocab).apply(candidates);
  ASSERT_EQ(ids(candidates), (std::vector<int32_t>{3}));
  EXPECT_FLOAT_EQ(candidates[0].p, 1.0f);
}

TEST(Infill, MergesPrefixesAndDropsUnlikelyText) {
  // foo 0.4, fo 0.3, bar 0.2, ba 0.05, z 0.05, EOG 0. "fo" folds into "foo" (0.7), "ba" into
  // "bar" (0.25). Cut at 0.2: foo, bar and the EOG token stay (renormalized by 0.95: 0.737,
  // 0.263); cut at 1/3: only foo among the text tokens.
  const FakeVocab vocab = infill_vocab();
  Candidates candidates(logits_for({0.4, 0.3, 0.2, 0.0, 0.05, 0.05}));
  InfillStage(vocab).apply(candidates);
  ASSERT_EQ(ids(candidates), (std::vector<int32_t>{0, 3}));
  EXPECT_FLOAT_EQ(candidates[0].p, 1.0f);
  EXPECT_EQ(candidates[1].p, 0.0f);
  EXPECT_TRUE(candidates.sorted());

  // With "bar" more likely it survives the second cut too.
  Candidates two(logits_for({0.3, 0.1, 0.35, 0.0, 0.2, 0.05}));
  InfillStage(vocab).apply(two);
  // foo 0.4 (with fo), bar 0.55 (with ba): 0.55 / 0.95 and 0.4 / 0.95, both above 1/3.
  ASSERT_EQ(ids(two), (std::vector<int32_t>{2, 0, 3}));
  EXPECT_NEAR(two[0].p, 0.55f / 0.95f, 1e-5f);
  EXPECT_NEAR(two[1].p, 0.4f / 0.95f, 1e-5f);
  // The folded-in token was the less likely one, so the logits keep their order.
  EXPECT_TRUE(two.sorted());
}

TEST(Infill, NoTextLeftMeansEndOfText) {
  const FakeVocab vocab({"a", "b", "c", "d", "e", "f", "g", "<eot>"}, {7}, 7);
  Candidates candidates(std::vector<float>{0.0f, 0.0f, 0.0f, 0.0f, 0.0f, 0.0f, 0.0f, kNegInf});
  InfillStage(vocab).apply(candidates);  // every text token at 1/7 < 0.2
  ASSERT_EQ(ids(candidates), (std::vector<int32_t>{7}));
  EXPECT_EQ(candidates[0].logit, 1.0f);
  // No EOT/EOS in the vocabulary: nothing is left to choose.
  const FakeVocab no_end({"a", "b", "c", "d", "e", "f", "g", "<eot>"}, {7}, -1);
  Candidates none(std::vector<float>{0.0f, 0.0f, 0.0f, 0.0f, 0.0f, 0.0f, 0.0f, kNegInf});
  InfillStage(no_end).apply(none);
  EXPECT_TRUE(none.empty());
}

}  // namespace
}  // namespace hearth::sampling
