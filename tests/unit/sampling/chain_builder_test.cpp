// The request chain built from SamplerParams: order, placeholders, mirostat chains,
// validation, seeds and greedy decoding.
#include "sampling/chain_builder.h"

#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "unit/sampling/test_util.h"

namespace hearth::sampling {
namespace {

using test::FakeVocab;
using test::kNegInf;
using Names = std::vector<std::string_view>;

Names names_for(const SamplerParams& params, const VocabView* vocab = nullptr) {
  Result<Chain> chain = make_chain(params, vocab);
  EXPECT_TRUE(chain.is_ok()) << chain.status().message();
  return chain.is_ok() ? chain->stage_names() : Names{};
}

SamplerParams with_samplers(std::string_view letters) {
  SamplerParams params;
  params.samplers = samplers_from_chars(letters);
  return params;
}

std::vector<float> random_logits(std::mt19937& rng, size_t n_vocab, float spread) {
  std::normal_distribution<float> normal(0.0f, spread);
  std::vector<float> logits(n_vocab);
  for (float& l : logits) l = normal(rng);
  return logits;
}

TEST(MakeChain, DefaultOrderKeepsInertPlaceholders) {
  EXPECT_EQ(names_for(SamplerParams{}), (Names{"penalties", "dry", "top_n_sigma", "top_k", "typ_p",
                                               "top_p", "min_p", "xtc", "temperature", "dist"}));
}

TEST(MakeChain, FollowsTheSamplersList) {
  EXPECT_EQ(names_for(with_samplers("kt")), (Names{"top_k", "temperature", "dist"}));
  EXPECT_EQ(names_for(with_samplers("tkkp")),
            (Names{"temperature", "top_k", "top_k", "top_p", "dist"}));
  SamplerParams by_name;
  by_name.samplers = samplers_from_names({"min_p", "Temp", "typical", "typ"});
  EXPECT_EQ(names_for(by_name), (Names{"min_p", "temperature", "typ_p", "dist"}));
  // adaptive_p makes no stage where it is listed; it replaces dist at the end.
  EXPECT_EQ(names_for(with_samplers("kat")), (Names{"top_k", "temperature", "adaptive_p"}));
  EXPECT_EQ(names_for(with_samplers("aa")), (Names{"adaptive_p"}));
}

TEST(MakeChain, EmptyListIsBiasThenDist) {
  SamplerParams params = with_samplers("");
  EXPECT_EQ(names_for(params), (Names{"dist"}));
  params.logit_bias = {{1, kNegInf}};
  EXPECT_EQ(names_for(params), (Names{"logit_bias", "dist"}));
  // Pure sampling at the raw distribution, minus the ban.
  params.seed = 3;
  Result<Chain> chain = make_chain(params, nullptr);
  ASSERT_TRUE(chain.is_ok());
  std::set<int32_t> seen;
  for (int i = 0; i < 300; ++i) seen.insert(*chain->sample(std::vector<float>{0.0f, 5.0f, 0.0f}));
  EXPECT_EQ(seen, (std::set<int32_t>{0, 2}));
}

TEST(MakeChain, MirostatSkipsTheConfigurableSamplers) {
  SamplerParams params;
  params.samplers = samplers_from_chars("edkt");
  params.dry_multiplier = 1.0f;   // would need a vocabulary, but DRY is skipped
  params.repeat_penalty = -1.0f;  // would be rejected, but penalties are skipped
  params.mirostat = 1;
  EXPECT_EQ(names_for(params), (Names{"temperature", "mirostat"}));
  params.mirostat = 2;
  EXPECT_EQ(names_for(params), (Names{"temperature", "mirostat_v2"}));
  params.logit_bias = {{0, 1.0f}};
  EXPECT_EQ(names_for(params), (Names{"logit_bias", "temperature", "mirostat_v2"}));
  // top_k = 1 would make it deterministic; mirostat still samples several tokens.
  params.top_k = 1;
  params.seed = 11;
  params.temperature = 1.0f;
  Result<Chain> chain = make_chain(params, nullptr);
  ASSERT_TRUE(chain.is_ok());
  std::set<int32_t> seen;
  for (int i = 0; i < 200; ++i) {
    seen.insert(*chain->sample(std::vector<float>{0.0f, 0.1f, 0.2f, 0.1f}));
  }
  EXPECT_GT(seen.size(), 1u);
}

TEST(MakeChain, ValidationErrors) {
  for (int32_t mirostat : {-1, 3, 100}) {
    SamplerParams params;
    params.mirostat = mirostat;
    Result<Chain> chain = make_chain(params, nullptr);
    ASSERT_FALSE(chain.is_ok());
    EXPECT_EQ(chain.status().code(), ErrorCode::kInvalidArgument);
    EXPECT_NE(chain.status().message().find("mirostat"), std::string::npos);
  }
  SamplerParams bad_repeat;
  bad_repeat.repeat_penalty = 0.0f;
  Result<Chain> repeat = make_chain(bad_repeat, nullptr);
  ASSERT_FALSE(repeat.is_ok());
  EXPECT_NE(repeat.status().message().find("repeat_penalty"), std::string::npos);
  SamplerParams bad_presence;
  bad_presence.presence_penalty = INFINITY;
  EXPECT_EQ(make_chain(bad_presence, nullptr).status().code(), ErrorCode::kInvalidArgument);
  // Not checked when no penalties stage is built.
  bad_repeat.samplers = samplers_from_chars("kt");
  EXPECT_TRUE(make_chain(bad_repeat, nullptr).is_ok());
}

TEST(MakeChain, TextSamplersNeedTheVocabulary) {
  const FakeVocab vocab({"a", "b", "\n"}, {}, -1);
  SamplerParams dry;
  dry.dry_multiplier = 0.8f;
  Result<Chain> missing = make_chain(dry, nullptr);
  ASSERT_FALSE(missing.is_ok());
  EXPECT_NE(missing.status().message().find("dry"), std::string::npos);
  EXPECT_TRUE(make_chain(dry, &vocab).is_ok());
  SamplerParams infill = with_samplers("ki");
  EXPECT_EQ(make_chain(infill, nullptr).status().code(), ErrorCode::kInvalidArgument);
  EXPECT_EQ(names_for(infill, &vocab), (Names{"top_k", "infill", "dist"}));
}

TEST(MakeChain, HistoryStagesSeeAcceptedTokens) {
  // penalties then DRY then dist, greedy-free: the post-sampling logits show both penalties.
  const FakeVocab vocab({"a", "b", "c", "d"});
  SamplerParams params = with_samplers("ed");
  params.repeat_penalty = 2.0f;
  params.dry_multiplier = 1.0f;
  params.dry_base = 2.0f;
  params.seed = 1;
  Result<Chain> chain = make_chain(params, &vocab);
  ASSERT_TRUE(chain.is_ok());
  chain->reset();
  for (int32_t token : {0, 1, 2, 0, 1}) chain->accept(token);
  ASSERT_TRUE(chain->sample(std::vector<float>{2.0f, 2.0f, 2.0f, 2.0f}).is_ok());
  const Candidates& after = chain->candidates();
  ASSERT_EQ(after.size(), 4u);
  // a, b, c were seen: 2 / 2 = 1. "a b" repeats and was followed by c: DRY takes 1 * 2^0.
  EXPECT_EQ(after[0].logit, 1.0f);
  EXPECT_EQ(after[1].logit, 1.0f);
  EXPECT_EQ(after[2].logit, 0.0f);
  EXPECT_EQ(after[3].logit, 2.0f);
  // reset() forgets the history.
  chain->reset();
  ASSERT_TRUE(chain->sample(std::vector<float>{2.0f, 2.0f, 2.0f, 2.0f}).is_ok());
  EXPECT_EQ(chain->candidates()[2].logit, 2.0f);
}

std::vector<int32_t> run_steps(Chain& chain, const std::vector<std::vector<float>>& steps) {
  std::vector<int32_t> tokens;
  for (const auto& logits : steps) {
    const Result<int32_t> token = chain.sample(logits);
    EXPECT_TRUE(token.is_ok());
    tokens.push_back(token.is_ok() ? *token : -1);
    chain.accept(tokens.back());
  }
  return tokens;
}

TEST(MakeChain, SameSeedSameTokensForEveryStochasticStage) {
  std::mt19937 rng(4);
  std::vector<std::vector<float>> steps;
  for (int i = 0; i < 200; ++i) steps.push_back(random_logits(rng, 300, 2.0f));
  const FakeVocab vocab(std::vector<std::string>(300, "t"));
  std::vector<SamplerParams> variants(4);
  variants[0].xtc_probability = 0.5f;  // dist + XTC
  variants[0].repeat_penalty = 1.3f;
  variants[1].mirostat = 1;
  variants[2].mirostat = 2;
  variants[3].samplers = samplers_from_chars("ka");
  variants[3].adaptive_target = 0.3f;
  for (SamplerParams& params : variants) {
    params.seed = 42;
    Chain a = make_chain(params, &vocab).value();
    Chain b = make_chain(params, &vocab).value();
    const std::vector<int32_t> first = run_steps(a, steps);
    EXPECT_EQ(run_steps(b, steps), first);
    a.reset();
    EXPECT_EQ(run_steps(a, steps), first);
    EXPECT_GT(std::set<int32_t>(first.begin(), first.end()).size(), 5u);
    params.seed = 43;
    Chain c = make_chain(params, &vocab).value();
    EXPECT_NE(run_steps(c, steps), first);
  }
}

TEST(MakeChain, ZeroTemperatureIsTheArgmaxAfterEarlierStages) {
  // Penalties run before temperature: token 0 (seen) drops from 5 to 2.5, so 1 wins.
  SamplerParams params = with_samplers("ekt");
  params.temperature = 0.0f;
  params.repeat_penalty = 2.0f;
  Result<Chain> chain = make_chain(params, nullptr);
  ASSERT_TRUE(chain.is_ok());
  chain->accept(0);
  const Result<int32_t> token = chain->sample(std::vector<float>{5.0f, 4.9f, 1.0f, 4.9f});
  ASSERT_TRUE(token.is_ok());
  EXPECT_EQ(*token, 1);  // ties go to the lower id
  const Candidates& after = chain->candidates();
  ASSERT_EQ(after.size(), 4u);
  EXPECT_EQ(after[0].id, 1);
  EXPECT_EQ(after[0].p, 1.0f);
  for (size_t i = 1; i < after.size(); ++i) EXPECT_EQ(after[i].p, 0.0f);
}

TEST(MakeChain, ZeroTemperatureMatchesArgmaxOnRandomTies) {
  SamplerParams params;  // the default chain, greedy
  params.temperature = -0.5f;
  params.seed = 5;
  Result<Chain> chain = make_chain(params, nullptr);
  ASSERT_TRUE(chain.is_ok());
  std::mt19937 rng(6);
  for (int step = 0; step < 200; ++step) {
    auto logits = random_logits(rng, 50, 1.0f);
    for (float& l : logits) l = std::round(l * 2.0f) / 2.0f;  // many ties
    size_t best = 0;
    for (size_t i = 1; i < logits.size(); ++i) {
      if (logits[i] > logits[best]) best = i;
    }
    const Result<int32_t> token = chain->sample(logits);
    ASSERT_TRUE(token.is_ok());
    ASSERT_EQ(*token, static_cast<int32_t>(best));
    int ones = 0;
    for (const TokenData& entry : chain->candidates().entries()) {
      ASSERT_TRUE(entry.p == 0.0f || entry.p == 1.0f);
      ones += entry.p == 1.0f ? 1 : 0;
    }
    ASSERT_EQ(ones, 1);
  }
}

}  // namespace
}  // namespace hearth::sampling
