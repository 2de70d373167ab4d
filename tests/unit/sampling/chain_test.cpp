// The chain and the basic chain built from request parameters.
#include "sampling/chain.h"

#include <gtest/gtest.h>

#include <cmath>
#include <memory>
#include <random>
#include <set>
#include <string_view>
#include <vector>

#include "sampling/basic_chain.h"
#include "sampling/dist.h"
#include "sampling/greedy.h"
#include "sampling/min_p.h"
#include "sampling/temperature.h"
#include "sampling/top_k.h"
#include "sampling/top_p.h"
#include "unit/sampling/test_util.h"

namespace hearth::sampling {
namespace {

using test::kNegInf;

std::vector<float> random_logits(std::mt19937& rng, size_t n_vocab, float spread) {
  std::normal_distribution<float> normal(0.0f, spread);
  std::vector<float> logits(n_vocab);
  for (float& l : logits) l = normal(rng);
  return logits;
}

// Records what the chain tells it.
class RecordingStage final : public Stage {
 public:
  std::string_view name() const override { return "recording"; }
  void apply(Candidates& candidates) override { sizes.push_back(candidates.size()); }
  void accept(int32_t token) override { accepted.push_back(token); }
  void reset() override { ++resets; }

  std::vector<size_t> sizes;
  std::vector<int32_t> accepted;
  int resets = 0;
};

TEST(BasicChain, DefaultOrderIsTheReferences) {
  const Chain chain = make_basic_chain(BasicParams{});
  EXPECT_EQ(chain.stage_names(),
            (std::vector<std::string_view>{"top_k", "top_p", "min_p", "temperature", "dist"}));
  const BasicParams params;
  EXPECT_EQ(params.temperature, 0.8f);
  EXPECT_EQ(params.top_k, 40);
  EXPECT_EQ(params.top_p, 0.95f);
  EXPECT_EQ(params.min_p, 0.05f);
  EXPECT_EQ(params.min_keep, 0);
  EXPECT_EQ(params.seed, 0xFFFFFFFFu);
}

TEST(BasicChain, InertStagesStayInPlace) {
  BasicParams params;
  params.top_k = 0;
  params.top_p = 1.0f;
  params.min_p = 0.0f;
  params.temperature = 1.0f;
  params.seed = 5;
  Chain chain = make_basic_chain(params);
  EXPECT_EQ(chain.n_stages(), 5u);
  // Pure sampling at the raw distribution: exactly what a lone dist stage picks.
  Chain lone;
  lone.add(std::make_unique<DistStage>(5));
  std::mt19937 rng(1);
  for (int step = 0; step < 200; ++step) {
    const auto logits = random_logits(rng, 64, 1.5f);
    const auto a = chain.sample(logits);
    const auto b = lone.sample(logits);
    ASSERT_TRUE(a.is_ok() && b.is_ok());
    ASSERT_EQ(*a, *b);
  }
}

TEST(BasicChain, ZeroTemperatureIsGreedyWithTheFirstMaximum) {
  BasicParams params;
  params.temperature = 0.0f;
  Chain chain = make_basic_chain(params);
  EXPECT_EQ(chain.stage_names(), (std::vector<std::string_view>{"greedy"}));
  const auto token = chain.sample(std::vector<float>{1.0f, 4.0f, -2.0f, 4.0f});
  ASSERT_TRUE(token.is_ok());
  EXPECT_EQ(*token, 1);
  ASSERT_EQ(chain.candidates().size(), 1u);
  EXPECT_EQ(chain.candidates()[0].p, 1.0f);
}

TEST(BasicChain, GreedyChoosesWhatTheReferenceChainChooses) {
  // The reference keeps the filters and masks all but the first maximum before dist.
  BasicParams params;
  params.temperature = -1.0f;
  params.top_k = 3;
  params.min_keep = 2;
  Chain greedy = make_basic_chain(params);
  Chain reference;
  reference.add(std::make_unique<TopKStage>(params.top_k))
      .add(std::make_unique<TopPStage>(params.top_p, params.min_keep))
      .add(std::make_unique<MinPStage>(params.min_p, params.min_keep))
      .add(std::make_unique<TemperatureStage>(params.temperature))
      .add(std::make_unique<DistStage>(77));
  std::mt19937 rng(2);
  for (int step = 0; step < 300; ++step) {
    auto logits = random_logits(rng, 40, 1.0f);
    for (float& l : logits) l = std::round(l * 2.0f) / 2.0f;  // many ties
    const auto a = greedy.sample(logits);
    const auto b = reference.sample(logits);
    ASSERT_TRUE(a.is_ok() && b.is_ok());
    ASSERT_EQ(*a, *b);
  }
}

TEST(BasicChain, SameSeedSameTokens) {
  BasicParams params;
  params.seed = 42;
  params.top_k = 20;
  params.top_p = 0.9f;
  params.min_p = 0.02f;
  params.temperature = 1.2f;
  std::mt19937 rng(3);
  std::vector<std::vector<float>> steps;
  for (int i = 0; i < 300; ++i) steps.push_back(random_logits(rng, 500, 2.0f));
  const auto run = [&](Chain& chain) {
    std::vector<int32_t> tokens;
    for (const auto& logits : steps) {
      const auto token = chain.sample(logits);
      EXPECT_TRUE(token.is_ok());
      tokens.push_back(token.is_ok() ? *token : -1);
      chain.accept(tokens.back());
    }
    return tokens;
  };
  Chain a = make_basic_chain(params);
  Chain b = make_basic_chain(params);
  const auto first = run(a);
  EXPECT_EQ(run(b), first);
  a.reset();
  EXPECT_EQ(run(a), first);
  params.seed = 43;
  Chain c = make_basic_chain(params);
  EXPECT_NE(run(c), first);
  EXPECT_GT(std::set<int32_t>(first.begin(), first.end()).size(), 10u);  // it does sample
}

TEST(BasicChain, TokensStayInsideTheFilters) {
  BasicParams params;
  params.seed = 9;
  params.top_k = 3;
  params.min_p = 0.0f;
  params.top_p = 1.0f;
  Chain chain = make_basic_chain(params);
  const std::vector<float> logits = {0.0f, 3.0f, 0.5f, 2.9f, 2.8f, 1.0f};
  std::set<int32_t> seen;
  for (int i = 0; i < 500; ++i) seen.insert(*chain.sample(logits));
  EXPECT_EQ(seen, (std::set<int32_t>{1, 3, 4}));
  // The post-sampling view: the three survivors, sorted, with normalized probabilities.
  const Candidates& after = chain.candidates();
  ASSERT_EQ(after.size(), 3u);
  EXPECT_TRUE(after.sorted());
  EXPECT_NEAR(after[0].p + after[1].p + after[2].p, 1.0f, 1e-6f);
  EXPECT_GE(after.selected(), 0);
}

TEST(Chain, StagesRunInTheOrderAdded) {
  // p = 0.665, 0.245, 0.090 before temperature; at T = 0.5 the top one alone has 0.867.
  const std::vector<float> logits = {3.0f, 2.0f, 1.0f};
  Chain filter_first;
  filter_first.add(std::make_unique<TopPStage>(0.85f, 0))
      .add(std::make_unique<TemperatureStage>(0.5f))
      .add(std::make_unique<DistStage>(1));
  ASSERT_TRUE(filter_first.sample(logits).is_ok());
  EXPECT_EQ(filter_first.candidates().size(), 2u);
  Chain temperature_first;
  temperature_first.add(std::make_unique<TemperatureStage>(0.5f))
      .add(std::make_unique<TopPStage>(0.85f, 0))
      .add(std::make_unique<DistStage>(1));
  ASSERT_TRUE(temperature_first.sample(logits).is_ok());
  EXPECT_EQ(temperature_first.candidates().size(), 1u);

  auto recorder = std::make_unique<RecordingStage>();
  RecordingStage* seen = recorder.get();
  Chain chain;
  chain.add(std::make_unique<TopKStage>(2)).add(std::move(recorder)).add(nullptr);
  chain.add(std::make_unique<GreedyStage>());
  EXPECT_EQ(chain.n_stages(), 3u);
  ASSERT_TRUE(chain.sample(logits).is_ok());
  EXPECT_EQ(seen->sizes, (std::vector<size_t>{2}));
}

TEST(Chain, AcceptAndResetReachEveryStage) {
  auto recorder = std::make_unique<RecordingStage>();
  RecordingStage* seen = recorder.get();
  Chain chain;
  chain.add(std::move(recorder)).add(std::make_unique<GreedyStage>());
  chain.accept(5);
  chain.accept(7);
  chain.reset();
  EXPECT_EQ(seen->accepted, (std::vector<int32_t>{5, 7}));
  EXPECT_EQ(seen->resets, 1);
  EXPECT_EQ(chain.stage(0).name(), "recording");
}

TEST(Chain, ReportsWhenNothingIsSelected) {
  Chain chain = make_basic_chain(BasicParams{});
  const auto empty = chain.sample(std::vector<float>{});
  EXPECT_EQ(empty.status().code(), ErrorCode::kInvalidArgument);
  const auto masked = chain.sample(std::vector<float>{kNegInf, kNegInf, std::nanf("")});
  EXPECT_EQ(masked.status().code(), ErrorCode::kInvalidArgument);

  Chain no_selector;
  no_selector.add(std::make_unique<TopKStage>(2));
  const auto none = no_selector.sample(std::vector<float>{1.0f, 2.0f});
  ASSERT_FALSE(none.is_ok());
  EXPECT_NE(none.status().message().find("top_k"), std::string::npos);
  EXPECT_FALSE(Chain().sample(std::vector<float>{1.0f}).is_ok());
}

TEST(Chain, SamplesACallerPreparedArray) {
  // The grammar path: refill, mask, run the chain again.
  Chain chain;
  chain.add(std::make_unique<GreedyStage>());
  Candidates candidates(std::vector<float>{1.0f, 5.0f, 3.0f});
  candidates[1].logit = kNegInf;
  const auto token = chain.sample(candidates);
  ASSERT_TRUE(token.is_ok());
  EXPECT_EQ(*token, 2);
  Candidates empty;
  EXPECT_FALSE(chain.sample(empty).is_ok());
}

}  // namespace
}  // namespace hearth::sampling
