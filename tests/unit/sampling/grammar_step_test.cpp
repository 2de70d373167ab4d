// The grammar inside a sampling step: the chain's pick is checked first and the masked
// second pass runs only on a rejection; lazy grammars wait for a token or pattern trigger.
#include <gtest/gtest.h>

#include <limits>
#include <memory>

#include "sampling/chain_builder.h"
#include "sampling/greedy.h"
#include "sampling/sampler.h"
#include "unit/sampling/test_util.h"

namespace hearth::sampling {
namespace {

using test::FakeVocab;

// Tokens: 0 "a", 1 "b", 2 "ab", 3 "{", 4 "}", 5 "x", 6 "<eos>" (EOG), 7 "tool:".
FakeVocab& vocab() {
  static FakeVocab v({"a", "b", "ab", "{", "}", "x", "<eos>", "tool:"}, {6}, 6);
  return v;
}

std::shared_ptr<const grammar::TokenTable> table() {
  static auto t = std::make_shared<const grammar::TokenTable>(
      vocab().n_vocab(), [](int32_t id) { return vocab().piece(id); },
      [](int32_t id) { return vocab().is_eog(id); });
  return t;
}

Sampler greedy_sampler(const std::string& gbnf, GrammarConfig config = {}) {
  config.grammar = grammar::parse(gbnf).value();
  auto constraint = GrammarSampler::create(config, table(), vocab());
  EXPECT_TRUE(constraint.is_ok()) << constraint.status().message();
  Chain chain;
  chain.add(std::make_unique<GreedyStage>());
  return Sampler(std::move(chain), std::move(constraint.value()));
}

// Logits preferring tokens in the given order (first = most likely).
std::vector<float> prefer(std::initializer_list<int32_t> order) {
  std::vector<float> logits(static_cast<size_t>(vocab().n_vocab()), -10.0f);
  float value = 10.0f;
  for (int32_t id : order) logits[static_cast<size_t>(id)] = value--;
  return logits;
}

TEST(GrammarStep, AllowedPickNeedsNoSecondPass) {
  Sampler s = greedy_sampler(R"(root ::= "a" "b")");
  EXPECT_EQ(*s.sample(prefer({0, 1})), 0);
  EXPECT_EQ(s.n_resampled(), 0);
}

TEST(GrammarStep, RejectedPickIsResampledUnderTheMask) {
  Sampler s = greedy_sampler(R"(root ::= "{" "x"* "}")");
  // "x" is the model's favourite but the grammar needs "{" first.
  EXPECT_EQ(*s.sample(prefer({5, 3})), 3);
  EXPECT_EQ(s.n_resampled(), 1);
  ASSERT_TRUE(s.accept(3, true).is_ok());
  EXPECT_EQ(*s.sample(prefer({5, 4})), 5);
  ASSERT_TRUE(s.accept(5, true).is_ok());
  // End of generation only once the grammar is complete.
  EXPECT_EQ(*s.sample(prefer({6, 4})), 4);
  ASSERT_TRUE(s.accept(4, true).is_ok());
  EXPECT_EQ(*s.sample(prefer({0, 6})), 6);
  // The post-sampling view is the masked pass.
  EXPECT_EQ(s.candidates().selected_id(), 6);
}

TEST(GrammarStep, PromptTokensDoNotAdvanceTheGrammar) {
  Sampler s = greedy_sampler(R"(root ::= "a")");
  ASSERT_TRUE(s.accept(5, false).is_ok());  // "x" in the prompt: not checked
  EXPECT_EQ(*s.sample(prefer({5, 0})), 0);
  EXPECT_FALSE(s.accept(5, true).is_ok());  // a generated "x" cannot be accepted
}

TEST(GrammarStep, LazyGrammarWaitsForATriggerToken) {
  GrammarConfig config;
  config.lazy = true;
  config.trigger_tokens = {7};
  Sampler s = greedy_sampler(R"(root ::= "tool:" "{" "}")", config);
  EXPECT_EQ(*s.sample(prefer({5})), 5);  // unconstrained before the trigger
  ASSERT_TRUE(s.accept(5, true).is_ok());
  ASSERT_TRUE(s.accept(7, true).is_ok());  // the trigger token is fed to the grammar
  EXPECT_EQ(*s.sample(prefer({5, 3})), 3);
}

TEST(GrammarStep, LazyGrammarReplaysTextFromAPatternTrigger) {
  GrammarConfig config;
  config.lazy = true;
  config.trigger_patterns = {"x(\\{)"};  // constrained text starts at the capture group
  Sampler s = greedy_sampler(R"(root ::= "{" "a"+ "}")", config);
  for (int32_t t : {0, 5, 3}) ASSERT_TRUE(s.accept(t, true).is_ok());  // "a", "x", "{"
  // The grammar has seen "{": "b" is now refused and "a" chosen.
  EXPECT_EQ(*s.sample(prefer({1, 0})), 0);
}

TEST(GrammarStep, InvalidTriggerPatternIsAnError) {
  EXPECT_FALSE(check_trigger_patterns({"(["}).is_ok());
  EXPECT_TRUE(check_trigger_patterns({"^tool$", "a+"}).is_ok());
  GrammarConfig config;
  config.grammar = grammar::parse(R"(root ::= "a")").value();
  config.trigger_patterns = {"(["};
  auto made = GrammarSampler::create(config, table(), vocab());
  ASSERT_FALSE(made.is_ok());
  EXPECT_NE(made.status().message().find("(["), std::string::npos);
}

// ignore_eos bans the end of generation; once the grammar is complete nothing else may
// follow: the sampler says the output is finished (kOutOfRange), not that nothing fits.
TEST(GrammarStep, ACompleteGrammarWithEndOfGenerationBannedFinishes) {
  Sampler s = greedy_sampler(R"(root ::= "a")");
  EXPECT_EQ(*s.sample(prefer({5, 0})), 0);
  ASSERT_TRUE(s.accept(0, true).is_ok());
  std::vector<float> banned = prefer({5, 1});
  banned[6] = -std::numeric_limits<float>::infinity();  // <eos>, as ignore_eos sets it
  auto finished = s.sample(banned);
  ASSERT_FALSE(finished.is_ok());
  EXPECT_EQ(finished.status().code(), ErrorCode::kOutOfRange);
  // A grammar that is not complete yet still reports that no token fits.
  Sampler open = greedy_sampler(R"(root ::= "a" "b")");
  std::vector<float> no_b = prefer({5, 0});
  no_b[1] = no_b[2] = -std::numeric_limits<float>::infinity();
  ASSERT_TRUE(open.accept(*open.sample(no_b), true).is_ok());
  auto stuck = open.sample(no_b);
  ASSERT_FALSE(stuck.is_ok());
  EXPECT_EQ(stuck.status().code(), ErrorCode::kInvalidArgument);
}

TEST(GrammarStep, FullChainWithGrammarKeepsSeededReproducibility) {
  SamplerParams params;
  params.seed = 99;
  params.top_k = 0;
  params.temperature = 1.5f;
  auto run = [&] {
    GrammarConfig config;
    config.grammar = grammar::parse(R"(root ::= ("a" | "b" | "ab"){1,6} "x")").value();
    Sampler s(make_chain(params, &vocab()).value(),
              GrammarSampler::create(config, table(), vocab()).value());
    std::vector<int32_t> out;
    for (int i = 0; i < 8; ++i) {
      const int32_t t = *s.sample(prefer({5, 6, 0, 1, 2, 3, 4}));
      out.push_back(t);
      if (vocab().is_eog(t)) break;
      EXPECT_TRUE(s.accept(t, true).is_ok());
    }
    return out;
  };
  const std::vector<int32_t> first = run();
  EXPECT_EQ(run(), first);
  EXPECT_EQ(first.back(), 6) << "the grammar ends with x, then only EOG is allowed";
}

}  // namespace
}  // namespace hearth::sampling
