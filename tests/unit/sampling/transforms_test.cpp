// top_n_sigma, typical, XTC, dynamic temperature and logit bias against hand-computed results.
#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <vector>

#include "sampling/logit_bias.h"
#include "sampling/rng.h"
#include "sampling/temperature.h"
#include "sampling/top_n_sigma.h"
#include "sampling/typical.h"
#include "sampling/xtc.h"
#include "unit/sampling/test_util.h"

namespace hearth::sampling {
namespace {

using test::ids;
using test::kNegInf;
using test::logits_for;
using test::logits_of;

TEST(TopNSigma, MasksBelowMaxMinusNSigma) {
  // Finite logits 0 1 2 3: mean 1.5, sigma sqrt(1.25) = 1.118.
  Candidates one(std::vector<float>{0.0f, 1.0f, 2.0f, 3.0f, kNegInf});
  TopNSigmaStage(1.0f).apply(one);  // threshold 1.88
  EXPECT_EQ(logits_of(one), (std::vector<float>{kNegInf, kNegInf, 2.0f, 3.0f, kNegInf}));
  Candidates two(std::vector<float>{0.0f, 1.0f, 2.0f, 3.0f, kNegInf});
  TopNSigmaStage(2.0f).apply(two);  // threshold 0.76
  EXPECT_EQ(logits_of(two), (std::vector<float>{kNegInf, 1.0f, 2.0f, 3.0f, kNegInf}));
  EXPECT_EQ(ids(two), (std::vector<int32_t>{0, 1, 2, 3, 4}));
}

TEST(TopNSigma, NoOps) {
  for (float n : {0.0f, -1.0f}) {
    Candidates candidates(std::vector<float>{0.0f, 5.0f});
    TopNSigmaStage(n).apply(candidates);
    EXPECT_EQ(logits_of(candidates), (std::vector<float>{0.0f, 5.0f}));
  }
  Candidates single(std::vector<float>{-3.0f});
  TopNSigmaStage(0.1f).apply(single);
  EXPECT_EQ(single[0].logit, -3.0f);
  // Equal logits: sigma 0 and nothing is strictly below the maximum.
  Candidates equal(std::vector<float>{2.0f, 2.0f, 2.0f});
  TopNSigmaStage(1.0f).apply(equal);
  EXPECT_EQ(logits_of(equal), (std::vector<float>{2.0f, 2.0f, 2.0f}));
  // A masked entry 0 does not hide the real maximum.
  Candidates masked_first(std::vector<float>{kNegInf, 0.0f, 10.0f});
  TopNSigmaStage(0.5f).apply(masked_first);  // mean 5, sigma 5, threshold 7.5
  EXPECT_EQ(logits_of(masked_first), (std::vector<float>{kNegInf, kNegInf, 10.0f}));
}

// p = 0.5 0.25 0.125 0.125: entropy 1.75 ln 2; surprises ln 2, 2 ln 2, 3 ln 2, 3 ln 2, so the
// typicality order is 1 (|2 - 1.75|), 0 (0.75), then 2 and 3 (1.25).
std::vector<float> typical_logits() {
  return logits_for({0.5, 0.25, 0.125, 0.125});
}

std::vector<int32_t> typical_ids(float p, int32_t min_keep) {
  Candidates candidates(typical_logits());
  TypicalStage(p, min_keep).apply(candidates);
  EXPECT_FALSE(candidates.sorted());
  return ids(candidates);
}

TEST(Typical, KeepsTheMostTypicalUntilTheMassExceedsP) {
  EXPECT_EQ(typical_ids(0.5f, 0), (std::vector<int32_t>{1, 0}));  // 0.25, then 0.75 > 0.5
  EXPECT_EQ(typical_ids(0.2f, 0), (std::vector<int32_t>{1}));
  EXPECT_EQ(typical_ids(0.9f, 0), (std::vector<int32_t>{1, 0, 2, 3}));
  // p <= 0 keeps one token: the most typical one, not the most likely.
  EXPECT_EQ(typical_ids(0.0f, 0), (std::vector<int32_t>{1}));
  EXPECT_EQ(typical_ids(0.7f, 0), (std::vector<int32_t>{1, 0}));
  EXPECT_EQ(typical_ids(0.8f, 0), (std::vector<int32_t>{1, 0, 2}));
}

TEST(Typical, MinKeepAndNoOp) {
  EXPECT_EQ(typical_ids(0.2f, 3), (std::vector<int32_t>{1, 0, 2}));
  EXPECT_EQ(typical_ids(0.2f, 1), (std::vector<int32_t>{1}));
  Candidates candidates(typical_logits());
  TypicalStage(1.0f, 0).apply(candidates);
  EXPECT_EQ(logits_of(candidates), typical_logits());
  // The probabilities stay the softmax of the whole array.
  Candidates kept(typical_logits());
  TypicalStage(0.5f, 0).apply(kept);
  EXPECT_NEAR(kept[0].p, 0.25f, 1e-6f);
  EXPECT_NEAR(kept[1].p, 0.5f, 1e-6f);
}

// p = 0.4 0.3 0.2 0.1, listed in a shuffled order.
std::vector<float> xtc_logits() {
  return logits_for({0.1, 0.3, 0.4, 0.2});
}

TEST(Xtc, RemovesTheTopChoicesButTheLeastLikelyOfThem) {
  Candidates candidates(xtc_logits());
  XtcStage(1.0f, 0.15f, 0, 1).apply(candidates);  // 0.4 0.3 0.2 qualify: drop 0.4 0.3
  EXPECT_EQ(ids(candidates), (std::vector<int32_t>{3, 0}));
  EXPECT_TRUE(candidates.sorted());

  Candidates min_keep(xtc_logits());
  XtcStage(1.0f, 0.15f, 3, 1).apply(min_keep);  // would leave 2 < 3
  EXPECT_EQ(ids(min_keep), (std::vector<int32_t>{2, 1, 3, 0}));

  Candidates one_above(xtc_logits());
  XtcStage(1.0f, 0.35f, 0, 1).apply(one_above);  // only the top one qualifies
  EXPECT_EQ(one_above.size(), 4u);

  Candidates run_breaks(logits_for({0.3, 0.05, 0.3, 0.35}));
  XtcStage(1.0f, 0.25f, 0, 1).apply(run_breaks);  // 0.35 0.3 0.3 qualify: keep from the last
  EXPECT_EQ(ids(run_breaks), (std::vector<int32_t>{2, 1}));
}

TEST(Xtc, InertParametersChangeNothing) {
  for (const auto& [probability, threshold] :
       std::vector<std::pair<float, float>>{{0.0f, 0.1f}, {-1.0f, 0.1f}, {1.0f, 0.51f}}) {
    XtcStage stage(probability, threshold, 0, 1);
    EXPECT_TRUE(stage.inert());
    Candidates candidates(xtc_logits());
    stage.apply(candidates);
    EXPECT_EQ(ids(candidates), (std::vector<int32_t>{0, 1, 2, 3}));
    EXPECT_FALSE(candidates.sorted());
  }
  EXPECT_FALSE(XtcStage(0.5f, 0.5f, 0, 1).inert());
}

TEST(Xtc, DrawsOneFloatPerEligibleStepFromItsSeed) {
  // With P = 0.5 the stage acts exactly when its own uniform float is <= 0.5; single-entry
  // arrays in between draw nothing, so the decisions follow mt19937(seed) step by step.
  constexpr uint32_t kSeed = 1234;
  std::mt19937 expected_rng(kSeed);
  XtcStage stage(0.5f, 0.15f, 0, kSeed);
  int acted = 0;
  for (int step = 0; step < 64; ++step) {
    Candidates single(std::vector<float>{1.0f});
    stage.apply(single);
    ASSERT_EQ(single.size(), 1u);
    const bool expect_act = uniform_float(expected_rng) <= 0.5f;
    Candidates candidates(xtc_logits());
    stage.apply(candidates);
    ASSERT_EQ(candidates.size() == 2u, expect_act) << step;
    acted += expect_act ? 1 : 0;
  }
  EXPECT_GT(acted, 10);
  EXPECT_LT(acted, 54);
  // reset() re-seeds with the same value: the same first decision again.
  stage.reset();
  std::mt19937 again(kSeed);
  Candidates candidates(xtc_logits());
  stage.apply(candidates);
  EXPECT_EQ(candidates.size() == 2u, uniform_float(again) <= 0.5f);
  EXPECT_EQ(stage.resolved_seed(), kSeed);
}

// The dynamic temperature computed independently, in double.
double expected_dynamic_temperature(const std::vector<float>& logits, double t, double range,
                                    double exponent) {
  double max_l = -INFINITY;
  for (float l : logits) max_l = std::max(max_l, static_cast<double>(l));
  double sum = 0.0;
  for (float l : logits) sum += std::exp(l - max_l);
  double entropy = 0.0;
  for (float l : logits) {
    const double p = std::exp(l - max_l) / sum;
    if (p > 0.0) entropy -= p * std::log(p);
  }
  const double h = entropy / std::log(static_cast<double>(logits.size()));
  const double t_min = std::max(0.0, t - range);
  return t_min + (t + range - t_min) * std::pow(h, exponent);
}

TEST(DynamicTemperature, ScalesByTheNormalizedEntropy) {
  const std::vector<float> logits = {0.0f, 2.0f, 1.0f};
  for (const double exponent : {1.0, 2.0, 0.5}) {
    const double t_dyn = expected_dynamic_temperature(logits, 1.0, 0.5, exponent);
    Candidates candidates(logits);
    TemperatureStage(1.0f, 0.5f, static_cast<float>(exponent)).apply(candidates);
    EXPECT_TRUE(candidates.sorted());
    ASSERT_EQ(ids(candidates), (std::vector<int32_t>{1, 2, 0}));
    EXPECT_NEAR(candidates[0].logit, 2.0 / t_dyn, 1e-5);
    EXPECT_NEAR(candidates[1].logit, 1.0 / t_dyn, 1e-5);
    EXPECT_EQ(candidates[2].logit, 0.0f);
    // Probabilities of the scaled logits.
    const double w1 = std::exp(-1.0 / t_dyn);
    const double w2 = std::exp(-2.0 / t_dyn);
    EXPECT_NEAR(candidates[0].p, 1.0 / (1.0 + w1 + w2), 1e-6);
    EXPECT_NEAR(candidates[2].p, w2 / (1.0 + w1 + w2), 1e-6);
  }
  // h = 0.7577 for these logits: T_dyn = 0.5 + 0.7577 for exponent 1.
  EXPECT_NEAR(expected_dynamic_temperature(logits, 1.0, 0.5, 1.0), 1.2577, 1e-3);
}

TEST(DynamicTemperature, FlatIsHottestPeakedIsColdest) {
  // Uniform: h = 1, T_dyn = T + d = 1.5.
  Candidates flat(std::vector<float>{3.0f, 3.0f, 3.0f, 3.0f});
  TemperatureStage(1.0f, 0.5f, 1.0f).apply(flat);
  EXPECT_FLOAT_EQ(flat[0].logit, 2.0f);
  EXPECT_FLOAT_EQ(flat[0].p, 0.25f);
  // One finite entry: h = 0, T_dyn = max(0, 0.3 - 0.5) = 0, the greedy rule: nothing divided.
  Candidates peaked(std::vector<float>{kNegInf, 3.0f, kNegInf});
  TemperatureStage(0.3f, 0.5f, 1.0f).apply(peaked);
  EXPECT_EQ(peaked[0].id, 1);
  EXPECT_EQ(peaked[0].logit, 3.0f);
  EXPECT_EQ(peaked[0].p, 1.0f);
  // A single candidate: no temperature at all.
  Candidates single(std::vector<float>{3.0f});
  TemperatureStage(2.0f, 1.0f, 1.0f).apply(single);
  EXPECT_EQ(single[0].logit, 3.0f);
}

TEST(DynamicTemperature, InertOnlyAtOneWithoutRange) {
  EXPECT_TRUE(TemperatureStage(1.0f, 0.0f, 1.0f).inert());
  EXPECT_TRUE(TemperatureStage(1.0f, -1.0f, 1.0f).inert());
  EXPECT_FALSE(TemperatureStage(1.0f, 0.1f, 1.0f).inert());
  // A non-positive range is the static rule.
  Candidates candidates(std::vector<float>{1.0f, 4.0f});
  TemperatureStage(2.0f, -0.5f, 1.0f).apply(candidates);
  EXPECT_EQ(logits_of(candidates), (std::vector<float>{0.5f, 2.0f}));
  EXPECT_FALSE(candidates.sorted());
}

TEST(LogitBias, AppliesEveryPairInVocabularyOrder) {
  Candidates candidates(std::vector<float>{0.0f, 0.0f, 0.0f, 0.0f});
  LogitBiasStage({{1, 1.0f}, {1, 2.0f}, {3, kNegInf}, {7, 5.0f}, {-1, 1.0f}, {0, -0.5f}})
      .apply(candidates);
  EXPECT_EQ(logits_of(candidates), (std::vector<float>{-0.5f, 3.0f, 0.0f, kNegInf}));
}

TEST(LogitBias, OtherArraysGetTheFirstPairPerToken) {
  Candidates candidates;
  candidates.assign({{3, 1.0f, 0.0f}, {1, 1.0f, 0.0f}, {9, 1.0f, 0.0f}}, /*sorted=*/true);
  LogitBiasStage({{1, 1.0f}, {1, 2.0f}, {3, kNegInf}}).apply(candidates);
  EXPECT_EQ(logits_of(candidates), (std::vector<float>{kNegInf, 2.0f, 1.0f}));
  EXPECT_EQ(ids(candidates), (std::vector<int32_t>{3, 1, 9}));
  EXPECT_FALSE(candidates.sorted());
}

}  // namespace
}  // namespace hearth::sampling
