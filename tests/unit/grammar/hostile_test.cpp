// Hostile grammars and inputs fail cleanly and quickly; the fuzz corpus is replayed.
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <string>

#include "gbnf_exercise.h"
#include "grammar/grammar.h"
#include "support/test_paths.h"

#ifndef HEARTH_GBNF_CORPUS_DIR
#error "HEARTH_GBNF_CORPUS_DIR must name tests/fuzz/corpus/gbnf"
#endif

namespace hearth::grammar {
namespace {

TEST(GrammarHostile, DeepNestingIsAnErrorNotACrash) {
  const int depth = 100000;
  const std::string text =
      "root ::= " + std::string(depth, '(') + "\"a\"" + std::string(depth, ')');
  auto g = parse(text);
  ASSERT_FALSE(g.is_ok());
  EXPECT_NE(g.status().message().find("nested too deeply"), std::string::npos);
  // Unclosed too.
  EXPECT_FALSE(parse("root ::= " + std::string(depth, '(')).is_ok());
}

TEST(GrammarHostile, LongRuleChainsNeedNoRecursion) {
  // root -> r1 -> r2 -> ... -> r19990: validation and matching walk the chain iteratively.
  std::string text = "root ::= r1\n";
  const int n = 19990;
  for (int i = 1; i < n; ++i)
    text += "r" + std::to_string(i) + " ::= r" + std::to_string(i + 1) + "\n";
  text += "r" + std::to_string(n) + " ::= \"z\" | \"(\" r1 \")\"\n";
  auto g = parse(text);
  ASSERT_TRUE(g.is_ok()) << g.status().to_string();
  EXPECT_TRUE(accepts(*g, "((z))"));
  EXPECT_FALSE(accepts(*g, "(z"));
  // The same chain made left-recursive.
  auto looped = parse(text + "r" + std::to_string(n) + " ::= r1 \"x\"\n");
  ASSERT_FALSE(looped.is_ok());
  EXPECT_NE(looped.status().message().find("left recursion"), std::string::npos);
}

TEST(GrammarHostile, HugeRepetitionCounts) {
  EXPECT_FALSE(parse("root ::= \"a\"{18446744073709551616}").is_ok());
  EXPECT_FALSE(parse("root ::= (\"a\"{1999}){1999}{1999}").is_ok());
  // Nested groups each under the guard still stay within the element cap.
  auto g = parse("root ::= ((((\"abcdefgh\"{1999}){1999}){1999}){1999})");
  if (g.is_ok()) {
    EXPECT_FALSE(accepts(*g, "abcdefgh"));
  }
}

TEST(GrammarHostile, ExponentialAmbiguityHitsTheStackLimit) {
  // Every "a" doubles the distinct stacks (which closing letter is pending where).
  auto g = parse("root ::= x\nx ::= \"a\" x \"b\" | \"a\" x \"c\" | ");
  ASSERT_TRUE(g.is_ok()) << g.status().to_string();
  const auto start = std::chrono::steady_clock::now();
  Matcher m(*g, nullptr);
  Status status;
  for (int i = 0; i < 64 && status.is_ok(); ++i) status = m.accept_text("a");
  ASSERT_FALSE(status.is_ok());
  EXPECT_NE(status.message().find("ambiguous"), std::string::npos);
  // Milliseconds alone: the bound only says the matcher gives up instead of hanging.
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(30));
  // The matcher is still usable after the error.
  EXPECT_FALSE(m.can_end());
}

TEST(GrammarHostile, RepeatedIdenticalAlternativesDeduplicate) {
  auto g = parse("root ::= (\"a\" | \"a\" | \"a\")* \"b\"");
  ASSERT_TRUE(g.is_ok());
  EXPECT_TRUE(accepts(*g, std::string(5000, 'a') + "b"));
  // With a tiny stack limit even the initial state is too big.
  Limits tiny;
  tiny.max_stacks = 2;
  Matcher m(*g, nullptr, tiny);
  EXPECT_FALSE(m.status().is_ok());
  EXPECT_FALSE(m.accept_text("a").is_ok());
  EXPECT_FALSE(m.can_end());
}

TEST(GrammarHostile, DeepRightRecursionAndLongText) {
  auto g = parse("root ::= \"(\" root \")\" | \"x\"");
  ASSERT_TRUE(g.is_ok());
  const int depth = 50000;
  EXPECT_TRUE(accepts(*g, std::string(depth, '(') + "x" + std::string(depth, ')')));
  EXPECT_FALSE(accepts(*g, std::string(depth, '(') + "x" + std::string(depth - 1, ')')));
}

// Many small steps on a deep stack make the matcher rebuild its node store repeatedly; the
// state must survive every rebuild.
TEST(GrammarHostile, LongGenerationsCompactTheStackStore) {
  auto g = parse("root ::= \"(\" root \")\" | [a-z]");
  ASSERT_TRUE(g.is_ok());
  Matcher m(*g, nullptr);
  const int depth = 40000;
  for (int i = 0; i < depth; ++i) ASSERT_TRUE(m.accept_text("(").is_ok()) << i;
  ASSERT_TRUE(m.accept_text("q").is_ok());
  for (int i = 0; i < depth; ++i) {
    ASSERT_FALSE(m.can_end());
    ASSERT_TRUE(m.accept_text(")").is_ok()) << i;
  }
  EXPECT_TRUE(m.can_end());
  EXPECT_FALSE(m.accept_text(")").is_ok());
}

TEST(GrammarHostile, ArbitraryBytes) {
  std::string bytes;
  for (int i = 0; i < 4096; ++i) bytes.push_back(static_cast<char>((i * 131 + 7) % 256));
  EXPECT_EQ(fuzz::exercise(bytes), "");
  EXPECT_EQ(fuzz::exercise("root ::= [\\x00-\\U0010FFFF]* | <abc> !<[3]> \"\\U7FFFFFFF\""), "");
}

TEST(GrammarFuzzCorpus, EveryInputParsesOrFailsCleanly) {
  const std::filesystem::path dir = HEARTH_GBNF_CORPUS_DIR;
  ASSERT_TRUE(std::filesystem::is_directory(dir)) << dir;
  std::vector<std::filesystem::path> paths;
  for (const auto& entry : std::filesystem::directory_iterator(dir)) {
    if (entry.is_regular_file()) paths.push_back(entry.path());
  }
  std::sort(paths.begin(), paths.end());
  ASSERT_FALSE(paths.empty()) << "the corpus in " << dir << " is empty";
  for (const auto& path : paths) {
    SCOPED_TRACE(path.string());
    const std::string content = test::read_file(path.string());
    EXPECT_EQ(fuzz::exercise(content), "");
  }
}

}  // namespace
}  // namespace hearth::grammar
