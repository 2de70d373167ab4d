// Repetition operators (grammar.md 1.2): expansion semantics, the 2000 limits in their
// documented order, and the rule-explosion guard.
#include <gtest/gtest.h>

#include <string>

#include "grammar/compiled.h"
#include "grammar/grammar.h"

namespace hearth::grammar {
namespace {

std::shared_ptr<const Grammar> must_parse(const std::string& text) {
  auto g = parse(text);
  EXPECT_TRUE(g.is_ok()) << text << "\n" << g.status().to_string();
  return g.is_ok() ? *g : nullptr;
}

std::string parse_error(const std::string& text) {
  auto g = parse(text);
  return g.is_ok() ? "(parsed)" : g.status().message();
}

const char* const kTooMany = "number of repetitions exceeds sane defaults";
const char* const kExplosion =
    "number of rules that are going to be repeated multiplied by the new repetition exceeds "
    "sane defaults";

TEST(GrammarRepetition, Operators) {
  auto g = must_parse("root ::= \"a\"* \"b\"+ \"c\"? \"d\"{2} \"e\"{1,} \"f\"{1,3}");
  EXPECT_TRUE(accepts(g, "bddef"));
  EXPECT_TRUE(accepts(g, "aaabbbcddeeefff"));
  EXPECT_FALSE(accepts(g, "ddef"));      // b+ needs one
  EXPECT_FALSE(accepts(g, "bccddef"));   // c? at most one
  EXPECT_FALSE(accepts(g, "bdef"));      // d{2} exactly two
  EXPECT_FALSE(accepts(g, "bddf"));      // e{1,} at least one
  EXPECT_FALSE(accepts(g, "bddeffff"));  // f{1,3} at most three
  EXPECT_FALSE(accepts(g, "bdde"));      // f{1,3} at least one
}

TEST(GrammarRepetition, SpacesInsideBracesAndStrings) {
  auto g = must_parse("root ::= \"ab\"{ 2 , 3 } x{0}\nx ::= \"x\"");
  EXPECT_TRUE(accepts(g, "abab"));
  EXPECT_TRUE(accepts(g, "ababab"));
  EXPECT_FALSE(accepts(g, "aba"));
  EXPECT_FALSE(accepts(g, "abababab"));
  EXPECT_FALSE(accepts(g, "ababx"));
}

TEST(GrammarRepetition, GroupsAndStackedOperators) {
  auto g = must_parse("root ::= (\"a\" \"b\"?)+ \"c\"{2}{2}");
  EXPECT_TRUE(accepts(g, "aabcccc"));
  EXPECT_FALSE(accepts(g, "aabccc"));
  auto nested = must_parse("root ::= ((\"x\" | \"y\"){2} \",\")*");
  EXPECT_TRUE(accepts(nested, ""));
  EXPECT_TRUE(accepts(nested, "xy,yy,"));
  EXPECT_FALSE(accepts(nested, "xy,y,"));
}

TEST(GrammarRepetition, ExpansionShape) {
  // x{2,4} -> x x R1, R1 ::= x R2 |, R2 ::= x |  : two synthesized rules.
  auto g = must_parse("root ::= \"x\"{2,4}");
  EXPECT_EQ(g->rule_count(), 3u);
  auto star = must_parse("root ::= \"x\"*");
  EXPECT_EQ(star->rule_count(), 2u);
  auto exact = must_parse("root ::= \"x\"{5}");
  EXPECT_EQ(exact->rule_count(), 1u);
}

TEST(GrammarRepetition, Limits) {
  EXPECT_EQ(parse_error("root ::= \"x\"{1999}"), "(parsed)");
  EXPECT_EQ(parse_error("root ::= \"x\"{0,1999}"), "(parsed)");
  EXPECT_EQ(parse_error("root ::= \"x\"{2000}"), std::string("line 1, column 13: ") + kExplosion);
  EXPECT_EQ(parse_error("root ::= \"x\"{0,2000}"), std::string("line 1, column 13: ") + kExplosion);
  EXPECT_EQ(parse_error("root ::= \"x\"{2001}"), std::string("line 1, column 13: ") + kTooMany);
  EXPECT_EQ(parse_error("root ::= \"x\"{2001,}"), std::string("line 1, column 13: ") + kTooMany);
  EXPECT_EQ(parse_error("root ::= \"x\"{99999999999999999999999}"),
            std::string("line 1, column 13: ") + kTooMany);
  // n > 2000 silently becomes unbounded.
  auto g = must_parse("root ::= \"x\"{0,2001}");
  EXPECT_TRUE(accepts(g, std::string(3000, 'x')));
  EXPECT_EQ(g->rule_count(), 2u);
  auto min_bounded = must_parse("root ::= \"x\"{3,5000}");
  EXPECT_FALSE(accepts(min_bounded, "xx"));
  EXPECT_TRUE(accepts(min_bounded, std::string(2500, 'x')));
}

TEST(GrammarRepetition, ExplosionGuard) {
  // Stacked weights multiply: 40 * 50 = 2000.
  EXPECT_EQ(parse_error("root ::= \"x\"{40}{49}"), "(parsed)");
  EXPECT_NE(parse_error("root ::= \"x\"{40}{50}").find(kExplosion), std::string::npos);
  // A group counts the names it newly registers: its own, x's repetition rule, and y.
  // size 3: 3 * 666 = 1998 is fine, 3 * 667 = 2001 is not.
  const std::string defs = "\ny ::= \"y\"";
  EXPECT_EQ(parse_error("root ::= (\"x\"* y){666}" + defs), "(parsed)");
  EXPECT_NE(parse_error("root ::= (\"x\"* y){667}" + defs).find(kExplosion), std::string::npos);
  // A rule name already seen does not count again: size 2 (group + x*), 2 * 999 = 1998.
  EXPECT_EQ(parse_error("root ::= y (\"x\"* y){999}" + defs), "(parsed)");
  EXPECT_NE(parse_error("root ::= y (\"x\"* y){1000}" + defs).find(kExplosion), std::string::npos);
  // Weight of an unbounded repetition is its minimum; of {0} and * it is 1.
  EXPECT_EQ(parse_error("root ::= (\"x\"* y){0,}" + defs), "(parsed)");
  EXPECT_EQ(parse_error("root ::= (\"x\"* y){666,}" + defs), "(parsed)");
  EXPECT_NE(parse_error("root ::= (\"x\"* y){667,}" + defs).find(kExplosion), std::string::npos);
}

TEST(GrammarRepetition, ElementCapStopsHugeCopies) {
  // 50 KB literal * 1999 copies would be 100M elements.
  const std::string literal(50000, 'a');
  auto g = parse("root ::= \"" + literal + "\"{1999}");
  ASSERT_FALSE(g.is_ok());
  EXPECT_NE(g.status().message().find("elements after expanding repetitions"), std::string::npos);
}

TEST(GrammarRepetition, ManyOptionalCopiesHitTheRuleLimit) {
  std::string text = "root ::=";
  for (int i = 0; i < 11; ++i) text += " \"x\"{0,1999}";
  auto g = parse(text);
  ASSERT_FALSE(g.is_ok());
  EXPECT_NE(g.status().message().find("too many rules"), std::string::npos);
}

}  // namespace
}  // namespace hearth::grammar
