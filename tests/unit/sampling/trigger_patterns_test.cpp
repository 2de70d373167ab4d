// Trigger patterns as a client writes them: the shape of catastrophic backtracking refused
// at parse time, the count capped, and the work of one token's search bounded, so a
// request whose patterns backtrack fails with a message naming the pattern instead of
// stalling the scheduler thread for every slot.
#include "sampling/trigger_patterns.h"

#include <gtest/gtest.h>

#include <string>

namespace hearth::sampling {
namespace {

TEST(TriggerPatterns, NestedUnboundedRepetitionIsFound) {
  for (const char* p : {"(( ?a| a)+)+[0-9]", "(a+)+", "(a*)*b", "(?:x+y)*", "((ab)+c)+",
                        "(\\w+\\s?)*$", "(a{2,})+", "(a+){3,}", "(?:(?:a|b)+)*?", "(a++)+"}) {
    EXPECT_TRUE(nests_unbounded_repetition(p)) << p;
  }
  for (const char* p :
       {"<tool_call>", "[\\s\\S]*?(<tool_call>)[\\s\\S]*", "(a+)?", "(a+){1,3}", "(ab)+", "(a|b)*c",
        "[(a+)+]", "\\(a+\\)+", "\\Q(a+)+\\E", "(?=a+)+b", "(?#(a+)+)x", "^\\s*(\\{\\s*\"name\")",
        "(a){2}+", "x{2,}(y)+", "\\p{L}+(\\d)+"}) {
    EXPECT_FALSE(nests_unbounded_repetition(p)) << p;
  }
}

TEST(TriggerPatterns, ParseTimeLimitsNameThePattern) {
  Status nested = check_trigger_patterns({"<a>", "(( ?a| a)+)+[0-9]"});
  ASSERT_FALSE(nested.is_ok());
  EXPECT_NE(nested.message().find("(( ?a| a)+)+[0-9]"), std::string::npos) << nested.message();
  EXPECT_NE(nested.message().find("grammar_triggers"), std::string::npos);
  std::vector<std::string> many(kMaxTriggerPatterns + 1, "x");
  Status count = check_trigger_patterns(many);
  ASSERT_FALSE(count.is_ok());
  EXPECT_NE(count.message().find("at most 64"), std::string::npos) << count.message();
  many.pop_back();
  EXPECT_TRUE(check_trigger_patterns(many).is_ok());
  Status invalid = check_trigger_patterns({"(["});
  ASSERT_FALSE(invalid.is_ok());
  EXPECT_NE(invalid.message().find("at offset"), std::string::npos);
}

TEST(TriggerPatterns, FindGivesTheConstrainedStart) {
  auto t = TriggerPatterns::create({"nope", "x(\\{)", "tool"});
  ASSERT_TRUE(t.is_ok()) << t.status().message();
  auto none = (*t)->find("abc");
  ASSERT_TRUE(none.is_ok());
  EXPECT_FALSE(none->has_value());
  auto group = (*t)->find("ab x{ tool");
  ASSERT_TRUE(group.is_ok());
  EXPECT_EQ(group->value(), 4u);  // the capture group, not the match's "x"
  auto whole = (*t)->find("a tool");
  ASSERT_TRUE(whole.is_ok());
  EXPECT_EQ(whole->value(), 2u);
  // A character split across tokens is not text yet: no match, no error.
  auto split = (*t)->find("tool\xC3");
  ASSERT_TRUE(split.is_ok());
}

TEST(TriggerPatterns, ABacktrackingSearchFailsWithinItsShareOfTheBudget) {
  // Exponential without nested quantifiers: every "a" can be either alternative, and the
  // "x" at the end lets the search start (PCRE2 skips it when the text has no "x").
  auto t = TriggerPatterns::create({"(a|a)*x"});
  ASSERT_TRUE(t.is_ok()) << t.status().message();
  auto small = (*t)->find(std::string(8, 'a') + "yx");
  ASSERT_TRUE(small.is_ok());
  EXPECT_EQ(small->value(), 9u);  // the "x" after the "y"
  auto big = (*t)->find(std::string(60, 'a') + "yx");
  ASSERT_FALSE(big.is_ok());
  EXPECT_EQ(big.status().code(), ErrorCode::kResourceExhausted);
  EXPECT_NE(big.status().message().find("(a|a)*x"), std::string::npos);
  EXPECT_NE(big.status().message().find(std::to_string(kTriggerStepsPerToken)), std::string::npos);
}

TEST(TriggerPatterns, ALinearSearchOfLongTextStaysWithinTheBudget) {
  // A lazy any-prefix costs one or two steps per byte: 60,000 bytes fit one pattern's
  // budget, and the match is found at the end.
  auto t = TriggerPatterns::create({"[\\s\\S]*?(<tool_call>)[\\s\\S]*"});
  ASSERT_TRUE(t.is_ok());
  std::string text;
  while (text.size() < 60000) text += "Once upon a time < there was a cat. ";
  auto none = (*t)->find(text);
  ASSERT_TRUE(none.is_ok()) << none.status().message();
  EXPECT_FALSE(none->has_value());
  auto found = (*t)->find(text + "<tool_call>{");
  ASSERT_TRUE(found.is_ok()) << found.status().message();
  EXPECT_EQ(found->value(), text.size());
}

}  // namespace
}  // namespace hearth::sampling
