// penalties and DRY (with its sequence breakers) against hand-computed results.
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "sampling/dry.h"
#include "sampling/dry_breakers.h"
#include "sampling/penalties.h"
#include "unit/sampling/test_util.h"

namespace hearth::sampling {
namespace {

using test::FakeVocab;
using test::kNegInf;
using test::logits_of;

void accept_all(Stage& stage, const std::vector<int32_t>& tokens) {
  for (int32_t token : tokens) stage.accept(token);
}

TEST(Penalties, RepeatFrequencyAndPresence) {
  PenaltiesStage stage({/*last_n=*/3, /*repeat=*/2.0f, /*frequency=*/0.5f, /*presence=*/0.25f});
  accept_all(stage, {1, 2, 1});
  Candidates candidates(std::vector<float>{1.0f, 2.0f, -1.0f, 0.5f});
  candidates.set_sorted(true);  // to see that the stage clears the flag
  stage.apply(candidates);
  // Token 1 (seen twice): 2 / 2 - (2 * 0.5 + 0.25). Token 2 (once): -1 * 2 - (0.5 + 0.25).
  EXPECT_EQ(logits_of(candidates), (std::vector<float>{1.0f, -0.25f, -2.75f, 0.5f}));
  EXPECT_FALSE(candidates.sorted());
  EXPECT_EQ(candidates.size(), 4u);
}

TEST(Penalties, OldestTokenLeavesTheWindow) {
  PenaltiesStage stage({3, 2.0f, 0.0f, 0.0f});
  accept_all(stage, {1, 2, 1});
  EXPECT_EQ(stage.count(1), 2);
  stage.accept(3);  // window 2 1 3: one of the 1s left
  EXPECT_EQ(stage.count(1), 1);
  stage.accept(0);  // window 1 3 0: the 2 left
  EXPECT_EQ(stage.count(2), 0);
  EXPECT_EQ(stage.count(1), 1);
  EXPECT_EQ(stage.count(3), 1);
  EXPECT_EQ(stage.count(0), 1);
  Candidates candidates(std::vector<float>{4.0f, 4.0f, 4.0f, 4.0f});
  stage.apply(candidates);
  EXPECT_EQ(logits_of(candidates), (std::vector<float>{2.0f, 2.0f, 4.0f, 2.0f}));
  stage.reset();
  EXPECT_EQ(stage.count(0), 0);
  Candidates after_reset(std::vector<float>{4.0f, 4.0f});
  stage.apply(after_reset);
  EXPECT_EQ(logits_of(after_reset), (std::vector<float>{4.0f, 4.0f}));
}

TEST(Penalties, NeutralOrEmptyWindowIsInert) {
  for (const PenaltyParams params :
       {PenaltyParams{0, 2.0f, 1.0f, 1.0f}, PenaltyParams{-5, 2.0f, 1.0f, 1.0f},
        PenaltyParams{64, 1.0f, 0.0f, 0.0f}}) {
    PenaltiesStage stage(params);
    EXPECT_TRUE(stage.inert());
    accept_all(stage, {0, 0, 1});
    EXPECT_EQ(stage.count(0), 0);  // no history kept
    Candidates candidates(std::vector<float>{3.0f, 1.0f});
    candidates.set_sorted(true);
    stage.apply(candidates);
    EXPECT_EQ(logits_of(candidates), (std::vector<float>{3.0f, 1.0f}));
    EXPECT_TRUE(candidates.sorted());
  }
  // Presence alone is enough to make it active.
  PenaltiesStage presence({64, 1.0f, 0.0f, 1.5f});
  EXPECT_FALSE(presence.inert());
  presence.accept(1);
  Candidates candidates(std::vector<float>{3.0f, 1.0f});
  presence.apply(candidates);
  EXPECT_EQ(logits_of(candidates), (std::vector<float>{3.0f, -0.5f}));
}

TEST(Penalties, Validation) {
  EXPECT_TRUE(validate_penalty_params({}).is_ok());
  EXPECT_TRUE(validate_penalty_params({64, 0.5f, -2.0f, -2.0f}).is_ok());
  for (float repeat : {0.0f, -1.0f, INFINITY, NAN, 1e-45f}) {
    const Status status = validate_penalty_params({64, repeat, 0.0f, 0.0f});
    EXPECT_EQ(status.code(), ErrorCode::kInvalidArgument) << repeat;
    EXPECT_NE(status.message().find("repeat_penalty"), std::string::npos);
  }
  const Status frequency = validate_penalty_params({64, 1.0f, INFINITY, 0.0f});
  EXPECT_NE(frequency.message().find("frequency_penalty"), std::string::npos);
  const Status presence = validate_penalty_params({64, 1.0f, 0.0f, NAN});
  EXPECT_NE(presence.message().find("presence_penalty"), std::string::npos);
}

// Texts for the DRY tests: a b c d, two single-token breakers ("\n" and one containing ':'),
// and a plain e.
FakeVocab plain_vocab() {
  return FakeVocab({"a", "b", "c", "d", "\n", "x:", "e"});
}
const std::vector<std::string> kDefaultBreakers = {"\n", ":", "\"", "*"};

DryStage make_dry(const DryParams& params, const VocabView& vocab,
                  const std::vector<std::string>& breakers = kDefaultBreakers) {
  return DryStage(params, build_dry_breakers(vocab, breakers));
}

TEST(DryBreakers, SingleTokenBreakersContainTheString) {
  const DryBreakers breakers = build_dry_breakers(plain_vocab(), kDefaultBreakers);
  EXPECT_EQ(breakers.tails.size(), 2u);
  EXPECT_TRUE(breakers.is_single_token_breaker(4));
  EXPECT_TRUE(breakers.is_single_token_breaker(5));
  EXPECT_FALSE(breakers.is_single_token_breaker(0));
  EXPECT_TRUE(build_dry_breakers(plain_vocab(), {"", ""}).tails.empty());
}

TEST(DryBreakers, MultiTokenTailsFromProperPrefixes) {
  const FakeVocab vocab({"a", "<", "en", "d>", "x<e", "q<end>", "<en", "nd>"});
  // Duplicated breaker: each (head, tail) pair is recorded once.
  const DryBreakers breakers = build_dry_breakers(vocab, {"<end>", "<end>"});
  using Tails = std::vector<std::vector<int32_t>>;
  EXPECT_EQ(breakers.tails.size(), 4u);
  EXPECT_EQ(breakers.tails.at(1), (Tails{{2, 3}}));  // "<" then "en" "d>"
  EXPECT_EQ(breakers.tails.at(4), (Tails{{7}}));     // "x<e" ends with "<e", then "nd>"
  EXPECT_EQ(breakers.tails.at(6), (Tails{{3}}));     // "<en" then "d>"
  EXPECT_EQ(breakers.tails.at(5), (Tails{{}}));      // contains the whole breaker
  EXPECT_TRUE(breakers.is_single_token_breaker(5));
  EXPECT_FALSE(breakers.is_single_token_breaker(1));
}

TEST(DryBreakers, LongBreakersAndTailsAreCut) {
  // Only the first 40 bytes of a breaker count: a token holding exactly those contains it.
  const std::string forty(40, 'z');
  const FakeVocab vocab({forty, "y", "<"});
  const DryBreakers cut = build_dry_breakers(vocab, {forty + "END"});
  EXPECT_TRUE(cut.is_single_token_breaker(0));
  // A tail of 25 tokens keeps its first 20.
  const DryBreakers tails = build_dry_breakers(vocab, {"<" + std::string(25, 'y')});
  ASSERT_EQ(tails.tails.count(2), 1u);
  EXPECT_EQ(tails.tails.at(2), (std::vector<std::vector<int32_t>>{std::vector<int32_t>(20, 1)}));
}

TEST(Dry, WorkedExample) {
  // History "a b c d a b c": the newest three tokens repeat "a b c", which was followed by
  // "d". With allowed length 2, d gets multiplier * base^(3 - 2) = 1 * 2.
  const FakeVocab vocab = plain_vocab();
  DryStage stage = make_dry({1.0f, 2.0f, 2, 64}, vocab);
  accept_all(stage, {0, 1, 2, 3, 0, 1, 2});
  Candidates candidates(std::vector<float>(7, 1.0f));
  candidates.set_sorted(true);
  stage.apply(candidates);
  EXPECT_EQ(logits_of(candidates), (std::vector<float>{1, 1, 1, -1, 1, 1, 1}));
  EXPECT_FALSE(candidates.sorted());

  // Allowed length 3: a repeat of exactly 3 is already penalized, with exponent 0.
  DryStage exact = make_dry({1.5f, 2.0f, 3, 64}, vocab);
  accept_all(exact, {0, 1, 2, 3, 0, 1, 2});
  Candidates three(std::vector<float>(7, 1.0f));
  exact.apply(three);
  EXPECT_EQ(three[3].logit, -0.5f);

  // Allowed length 4: nothing repeats that long.
  DryStage longer = make_dry({1.0f, 2.0f, 4, 64}, vocab);
  accept_all(longer, {0, 1, 2, 3, 0, 1, 2});
  Candidates four(std::vector<float>(7, 1.0f));
  longer.apply(four);
  EXPECT_EQ(logits_of(four), std::vector<float>(7, 1.0f));
}

TEST(Dry, RepeatsStopAtTheNewestBreaker) {
  // "a x: b d a x: b": the repeat "a x: b" crosses the breaker x:, so it only counts from the
  // breaker on (length 1); with a plain token (e) in its place it counts fully (length 3).
  const FakeVocab vocab = plain_vocab();
  DryStage broken = make_dry({1.0f, 2.0f, 1, 64}, vocab);
  accept_all(broken, {0, 5, 1, 3, 0, 5, 1});
  EXPECT_EQ(broken.repeat_lengths(), (std::unordered_map<int32_t, int32_t>{{3, 1}}));
  Candidates candidates(std::vector<float>(7, 0.0f));
  broken.apply(candidates);
  EXPECT_EQ(candidates[3].logit, -1.0f);  // 2^(1 - 1)

  DryStage unbroken = make_dry({1.0f, 2.0f, 1, 64}, vocab);
  accept_all(unbroken, {0, 6, 1, 3, 0, 6, 1});
  Candidates plain(std::vector<float>(7, 0.0f));
  unbroken.apply(plain);
  EXPECT_EQ(plain[3].logit, -4.0f);  // 2^(3 - 1)

  // With allowed length 2 the breaker leaves too little: no-op, the flag untouched.
  DryStage too_short = make_dry({1.0f, 2.0f, 2, 64}, vocab);
  accept_all(too_short, {0, 5, 1, 3, 0, 5, 1});
  EXPECT_EQ(too_short.repeat_lengths(), std::nullopt);
  Candidates untouched(std::vector<float>(7, 0.0f));
  untouched.set_sorted(true);
  too_short.apply(untouched);
  EXPECT_TRUE(untouched.sorted());
  EXPECT_EQ(logits_of(untouched), std::vector<float>(7, 0.0f));
}

TEST(Dry, BreakerTokensAreNeverPenalized) {
  // "a b \n a b": the repeat "a b" was followed by "\n", a single-token breaker.
  const FakeVocab vocab = plain_vocab();
  DryStage stage = make_dry({1.0f, 2.0f, 2, 64}, vocab);
  accept_all(stage, {0, 1, 4, 0, 1});
  EXPECT_EQ(stage.repeat_lengths(), (std::unordered_map<int32_t, int32_t>{{4, 2}}));
  Candidates candidates(std::vector<float>(7, 0.0f));
  stage.apply(candidates);
  EXPECT_EQ(logits_of(candidates), std::vector<float>(7, 0.0f));
}

TEST(Dry, MultiTokenBreakerLimitsTheRepeat) {
  const FakeVocab vocab({"a", "<", "en", "d>", "x<e", "q<end>", "<en", "nd>", "A", "B"});
  // "< en d> A B < en d> A B": the breaker "<end>" spans three tokens; the newest one ends
  // two tokens back, so the 5-token repeat counts as 2.
  DryStage stage = make_dry({1.0f, 2.0f, 2, 64}, vocab, {"<end>"});
  accept_all(stage, {1, 2, 3, 8, 9, 1, 2, 3, 8, 9});
  EXPECT_EQ(stage.repeat_lengths(), (std::unordered_map<int32_t, int32_t>{{1, 2}}));
  // "< en A B < en A B": the head "<" is not followed by its tail, so no breaker.
  DryStage incomplete = make_dry({1.0f, 2.0f, 2, 64}, vocab, {"<end>"});
  accept_all(incomplete, {1, 2, 8, 9, 1, 2, 8, 9});
  EXPECT_EQ(incomplete.repeat_lengths(), (std::unordered_map<int32_t, int32_t>{{1, 4}}));
}

TEST(Dry, ExponentCapAndWindow) {
  const FakeVocab vocab = plain_vocab();
  // Eight a's: a would extend a repeat of 7. ln(1e10) = 23.03, so the exponent is capped at
  // floor(88.72 / 23.03) = 3 instead of 7 - 2 = 5.
  DryStage capped = make_dry({1.0f, 1e10f, 2, 64}, vocab);
  accept_all(capped, std::vector<int32_t>(8, 0));
  EXPECT_EQ(capped.repeat_lengths(), (std::unordered_map<int32_t, int32_t>{{0, 7}}));
  Candidates candidates(std::vector<float>{0.0f, 0.0f});
  capped.apply(candidates);
  EXPECT_FLOAT_EQ(candidates[0].logit, -1e30f);
  EXPECT_EQ(candidates[1].logit, 0.0f);

  // Base 1: no cap, and the penalty is the multiplier.
  DryStage flat = make_dry({0.75f, 1.0f, 2, 64}, vocab);
  accept_all(flat, std::vector<int32_t>(8, 0));
  Candidates flat_candidates(std::vector<float>{0.0f});
  flat.apply(flat_candidates);
  EXPECT_EQ(flat_candidates[0].logit, -0.75f);

  // A window of 4: only the last four a's count (repeat of 3).
  DryStage windowed = make_dry({1.0f, 2.0f, 2, 4}, vocab);
  accept_all(windowed, {1, 2, 3, 0, 0, 0, 0});
  EXPECT_EQ(windowed.repeat_lengths(), (std::unordered_map<int32_t, int32_t>{{0, 3}}));
  windowed.reset();
  EXPECT_EQ(windowed.repeat_lengths(), std::nullopt);
}

TEST(Dry, DisabledKeepsNoHistory) {
  const FakeVocab vocab = plain_vocab();
  for (const DryParams params : {DryParams{0.0f, 2.0f, 2, 64}, DryParams{1.0f, 0.5f, 2, 64},
                                 DryParams{1.0f, 2.0f, 2, 0}, DryParams{1.0f, 2.0f, 2, -1}}) {
    EXPECT_FALSE(dry_enabled(params));
    DryStage stage = make_dry(params, vocab);
    EXPECT_TRUE(stage.inert());
    accept_all(stage, std::vector<int32_t>(8, 0));
    EXPECT_EQ(stage.repeat_lengths(), std::nullopt);
    Candidates candidates(std::vector<float>{0.0f, 1.0f});
    stage.apply(candidates);
    EXPECT_EQ(logits_of(candidates), (std::vector<float>{0.0f, 1.0f}));
  }
  // Too little history (N <= allowed length) is a no-op too.
  DryStage short_history = make_dry({1.0f, 2.0f, 2, 64}, vocab);
  accept_all(short_history, {0, 0});
  EXPECT_EQ(short_history.repeat_lengths(), std::nullopt);
}

}  // namespace
}  // namespace hearth::sampling
