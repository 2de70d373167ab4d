// The reasoning budget: tags found in the text however the vocabulary splits them, the
// block counted, the end forced when the budget is spent or the client asks, characters
// finished before forcing, and the sampler forcing exactly those tokens.
#include <gtest/gtest.h>

#include "grammar/grammar.h"
#include "sampling/greedy.h"
#include "sampling/reasoning_budget.h"
#include "sampling/sampler.h"
#include "unit/sampling/test_util.h"

namespace hearth::sampling {
namespace {

using test::FakeVocab;

// 0 "<", 1 "think", 2 ">", 3 "</", 4 "a", 5 "b", 6 " ", 7 "\xC3" (first byte of "é"),
// 8 "\xA9" (its second byte), 9 "<think>"
FakeVocab vocab() {
  return FakeVocab({"<", "think", ">", "</", "a", "b", " ", "\xC3", "\xA9", "<think>"});
}

ReasoningBudgetConfig config(int32_t budget, std::string prefix = "") {
  ReasoningBudgetConfig c;
  c.start_tag = "<think>";
  c.end_tag = "</think>";
  c.budget = budget;
  c.forced = {3, 1, 2};  // "</" "think" ">"
  c.prefix = std::move(prefix);
  return c;
}

void feed(ReasoningBudget& b, std::initializer_list<int32_t> tokens) {
  for (int32_t t : tokens) b.accept(t);
}

TEST(ReasoningBudget, TagsSplitAcrossTokensAreFound) {
  FakeVocab v = vocab();
  ReasoningBudget b(config(-1), v);
  EXPECT_EQ(b.state(), ReasoningBudget::State::kIdle);
  feed(b, {0, 1, 2});  // "<" "think" ">"
  EXPECT_EQ(b.state(), ReasoningBudget::State::kCounting);
  feed(b, {4, 5, 4});
  EXPECT_EQ(b.n_thinking(), 3);
  feed(b, {3, 1, 2});  // a natural "</think>"
  EXPECT_EQ(b.state(), ReasoningBudget::State::kDone);
  EXPECT_FALSE(b.forced_token().has_value());
}

TEST(ReasoningBudget, ThePromptOpensTheBlockAndTheBudgetForcesTheEnd) {
  FakeVocab v = vocab();
  ReasoningBudget b(config(2, "<|assistant|>\n<think>\n"), v);
  EXPECT_EQ(b.state(), ReasoningBudget::State::kCounting);
  EXPECT_FALSE(b.forced_token().has_value());
  feed(b, {4, 5});
  ASSERT_EQ(b.forced_token(), 3);
  b.accept(3);
  ASSERT_EQ(b.forced_token(), 1);
  b.accept(1);
  ASSERT_EQ(b.forced_token(), 2);
  b.accept(2);
  EXPECT_EQ(b.state(), ReasoningBudget::State::kDone);
  // Budget 0 forces from the first token.
  ReasoningBudget zero(config(0, "<think>"), v);
  EXPECT_EQ(zero.forced_token(), 3);
  // A prompt that opened and closed the block leaves nothing to do.
  ReasoningBudget closed(config(0, "<think>\n\n</think>\n\n"), v);
  EXPECT_EQ(closed.state(), ReasoningBudget::State::kDone);
}

TEST(ReasoningBudget, ACharacterIsFinishedBeforeForcing) {
  FakeVocab v = vocab();
  ReasoningBudget b(config(1, "<think>"), v);
  b.accept(7);  // half of "é": the budget is spent, but the character is not finished
  EXPECT_FALSE(b.forced_token().has_value());
  b.accept(8);
  EXPECT_EQ(b.forced_token(), 3);
}

TEST(ReasoningBudget, TheClientEndsTheBlock) {
  FakeVocab v = vocab();
  ReasoningBudgetConfig c = config(-1, "<think>");
  c.end_now = std::make_shared<std::atomic<bool>>(false);
  ReasoningBudget b(c, v);
  feed(b, {4, 4, 4});
  EXPECT_FALSE(b.forced_token().has_value());
  c.end_now->store(true);
  EXPECT_EQ(b.forced_token(), 3);
}

TEST(ReasoningBudget, TheSamplerForcesTheTokens) {
  FakeVocab v = vocab();
  Chain chain;
  chain.add(std::make_unique<GreedyStage>());
  Sampler s(std::move(chain), nullptr, std::make_unique<ReasoningBudget>(config(0, "<think>"), v));
  // Logits that favour "a" everywhere: the budget still writes "</think>".
  std::vector<float> logits(10, 0.0f);
  logits[4] = 10.0f;
  std::vector<int32_t> out;
  for (int i = 0; i < 5; ++i) {
    auto t = s.sample(logits);
    ASSERT_TRUE(t.is_ok());
    out.push_back(*t);
    ASSERT_TRUE(s.accept(*t, true).is_ok());
  }
  EXPECT_EQ(out, (std::vector<int32_t>{3, 1, 2, 4, 4}));
}

// --- The budget and a grammar in one sampler (issue 32) ------------------------------------

std::shared_ptr<const grammar::TokenTable> table(const FakeVocab& v) {
  return std::make_shared<const grammar::TokenTable>(
      v.n_vocab(), [&v](int32_t id) { return v.piece(id); }, [](int32_t) { return false; });
}

Result<Sampler> constrained(const FakeVocab& v, const std::string& gbnf, GrammarConfig config,
                            ReasoningBudgetConfig budget) {
  config.grammar = grammar::parse(gbnf).value();
  auto constraint = GrammarSampler::create(config, table(v), v);
  if (!constraint.is_ok()) return constraint.status();
  Chain chain;
  chain.add(std::make_unique<GreedyStage>());
  return Sampler(std::move(chain), std::move(constraint.value()),
                 std::make_unique<ReasoningBudget>(std::move(budget), v));
}

// Greedy steps with "a" the favourite, then "b": the tokens chosen, or the first error.
Result<std::vector<int32_t>> run(Sampler& s, int steps) {
  std::vector<float> logits(10, 0.0f);
  logits[4] = 10.0f;
  logits[5] = 5.0f;
  std::vector<int32_t> out;
  for (int i = 0; i < steps; ++i) {
    auto t = s.sample(logits);
    if (!t.is_ok()) return t.status();
    out.push_back(*t);
    HEARTH_RETURN_IF_ERROR(s.accept(*t, true));
  }
  return out;
}

TEST(ReasoningBudget, AGrammarForTheAnswerStartsAfterTheForcedEnd) {
  FakeVocab v = vocab();
  // Budget 1 after an opened block: one thought, the forced end, then the answer "bb".
  GrammarConfig g;
  g.after_reasoning = true;
  auto s = constrained(v, R"(root ::= "b" "b")", g, config(1, "<think>"));
  ASSERT_TRUE(s.is_ok()) << s.status().message();
  auto out = run(*s, 6);
  ASSERT_TRUE(out.is_ok()) << out.status().message();
  EXPECT_EQ(*out, (std::vector<int32_t>{4, 3, 1, 2, 5, 5}));
}

TEST(ReasoningBudget, AGrammarThatAcceptsTheEndTagTakesTheForcedEnd) {
  FakeVocab v = vocab();
  auto s = constrained(v, R"(root ::= "</think>" "b")", {}, config(0, "<think>"));
  ASSERT_TRUE(s.is_ok());
  auto out = run(*s, 4);
  ASSERT_TRUE(out.is_ok()) << out.status().message();
  EXPECT_EQ(*out, (std::vector<int32_t>{3, 1, 2, 5}));
}

TEST(ReasoningBudget, AForcedTokenTheGrammarRefusesIsNotForced) {
  // A client's grammar over the whole output that has no room for the end tag: the budget
  // gives way instead of making the grammar take a token it refuses (a 500 before).
  FakeVocab v = vocab();
  for (int32_t budget : {0, 1, 2}) {
    auto s = constrained(v, R"(root ::= "a" "a"? "b")", {}, config(budget, "<think>"));
    ASSERT_TRUE(s.is_ok());
    auto out = run(*s, 3);
    ASSERT_TRUE(out.is_ok()) << "budget " << budget << ": " << out.status().message();
    EXPECT_EQ(out->front(), 4);
  }
}

TEST(ReasoningBudget, AGrammarReadsTheContinuedAnswerFirst) {
  FakeVocab v = vocab();
  GrammarConfig g;
  g.prefill = "a";
  auto s = constrained(v, R"(root ::= "a" "b")", g, config(-1));
  ASSERT_TRUE(s.is_ok()) << s.status().message();
  auto out = run(*s, 1);
  ASSERT_TRUE(out.is_ok());
  EXPECT_EQ(*out, (std::vector<int32_t>{5}));  // "a" is already there: "b" follows
  g.prefill = "b";
  auto refused = constrained(v, R"(root ::= "a" "b")", g, config(-1));
  ASSERT_FALSE(refused.is_ok());
  EXPECT_NE(refused.status().message().find("does not match the grammar"), std::string::npos);
}

}  // namespace
}  // namespace hearth::sampling
