#include "scheduler/stop_funnel.h"

#include <gtest/gtest.h>

namespace hearth::scheduler {
namespace {

TEST(StopFunnelTest, ReleasesTextWithoutStops) {
  StopFunnel f;
  EXPECT_EQ(f.push("Hello").released, "Hello");
  EXPECT_EQ(f.push(" world").released, " world");
  EXPECT_EQ(f.text(), "Hello world");
}

TEST(StopFunnelTest, HoldsBackAPossibleStopPrefixThenReleasesIt) {
  StopFunnel f({"named Lilx"});
  EXPECT_EQ(f.push(" girl").released, " girl");
  EXPECT_EQ(f.push(" named").released, "");  // " named" could start the stop string
  const FunnelStep s = f.push(" Lily");
  EXPECT_FALSE(s.matched);
  EXPECT_EQ(s.released, " named Lily");
}

TEST(StopFunnelTest, CutsAtTheMatchAndReleasesWhatPrecedesIt) {
  StopFunnel f({"named Lily"});
  f.push(" girl");
  EXPECT_EQ(f.push(" named").released, "");
  const FunnelStep s = f.push(" Lily");
  EXPECT_TRUE(s.matched);
  EXPECT_EQ(s.released, " ");
  EXPECT_EQ(f.text(), " girl ");
  EXPECT_EQ(f.stopping_word(), "named Lily");
}

TEST(StopFunnelTest, EarliestMatchWins) {
  StopFunnel f({"cd", "bc"});
  const FunnelStep s = f.push("abcde");
  EXPECT_TRUE(s.matched);
  EXPECT_EQ(f.text(), "a");
  EXPECT_EQ(f.stopping_word(), "bc");
}

TEST(StopFunnelTest, EndOfGenerationDoesNotWithholdAPrefix) {
  StopFunnel f({"xyz"});
  EXPECT_EQ(f.push("ax").released, "");
  EXPECT_EQ(f.push("", /*may_continue=*/false).released, "ax");
}

TEST(StopFunnelTest, WithholdsIncompleteUtf8) {
  StopFunnel f;
  const FunnelStep a = f.push("\xE4\xB8");
  EXPECT_TRUE(a.incomplete);
  EXPECT_EQ(a.released, "");
  const FunnelStep b = f.push("\xAD!");
  EXPECT_FALSE(b.incomplete);
  EXPECT_EQ(b.released, "\xE4\xB8\xAD!");
}

// As llama-server b10573's process_token: a piece whose complete characters are followed by
// the start of another is held whole (the check is on the whole text, and no event is sent
// for the token); its complete prefix follows with the token that completes the character.
TEST(StopFunnelTest, HoldsAWholePieceThatEndsInsideACharacter) {
  StopFunnel f;
  EXPECT_EQ(f.push("ok ").released, "ok ");
  const FunnelStep a = f.push("ab\xE4");
  EXPECT_TRUE(a.incomplete);
  EXPECT_EQ(a.released, "");
  EXPECT_EQ(f.n_released(), 3u);
  const FunnelStep b = f.push("\xB8\xAD");
  EXPECT_FALSE(b.incomplete);
  EXPECT_EQ(b.released, "ab\xE4\xB8\xAD");
  EXPECT_EQ(f.text(), "ok ab\xE4\xB8\xAD");
}

TEST(StopFunnelTest, FindsOnlyMatchesTouchingTheNewPiece) {
  // The match starts word + piece bytes before the end at the earliest.
  EXPECT_EQ(StopFunnel::find_full("abXYcdefgh", 2, {"XY"}, nullptr), std::string::npos);
  EXPECT_EQ(StopFunnel::find_full("abcdefgXYh", 1, {"XY"}, nullptr), 7u);
  EXPECT_EQ(StopFunnel::find_partial("hello wo", {"world"}), 6u);
  EXPECT_EQ(StopFunnel::find_partial("hello", {"world"}), std::string::npos);
}

TEST(StopFunnelTest, CutDropsTheTail) {
  StopFunnel f;
  f.push("line\n  x");
  f.cut(5);
  EXPECT_EQ(f.text(), "line\n");
}

}  // namespace
}  // namespace hearth::scheduler
