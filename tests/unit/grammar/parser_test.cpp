// GBNF syntax (grammar.md 1.1, 1.3): every feature parses, every error names its position.
#include <gtest/gtest.h>

#include "grammar/compiled.h"
#include "grammar/grammar.h"

namespace hearth::grammar {
namespace {

std::shared_ptr<const Grammar> must_parse(std::string_view text) {
  auto g = parse(text);
  EXPECT_TRUE(g.is_ok()) << text << "\n" << g.status().to_string();
  return g.is_ok() ? *g : nullptr;
}

std::string parse_error(std::string_view text, const TokenizeFn& tokenize = nullptr) {
  auto g = parse(text, tokenize);
  if (g.is_ok()) return "(parsed)";
  EXPECT_EQ(g.status().code(), ErrorCode::kInvalidArgument);
  return g.status().message();
}

TEST(GrammarParse, SyntaxErrorsNameLineAndColumn) {
  EXPECT_EQ(parse_error("root ::= \"a\" )"), "line 1, column 14: expecting newline or end");
  EXPECT_EQ(parse_error("root ::= \"a\"\nx ::= \"b\" ]"),
            "line 2, column 11: expecting newline or end");
  EXPECT_EQ(parse_error("root := \"a\""), "line 1, column 6: expecting ::=");
  EXPECT_EQ(parse_error("::= \"a\""), "line 1, column 1: expecting name");
  EXPECT_EQ(parse_error("root ::= \"abc"), "line 1, column 14: unexpected end of input");
  EXPECT_EQ(parse_error("root ::= [abc"), "line 1, column 14: unexpected end of input");
  EXPECT_EQ(parse_error("root ::= [a-"), "line 1, column 13: unexpected end of input");
  EXPECT_EQ(parse_error("root ::= \"a\\qb\""), "line 1, column 12: unknown escape");
  EXPECT_EQ(parse_error("root ::= [\\0]"), "line 1, column 11: unknown escape");
  EXPECT_EQ(parse_error("root ::= \"\\x4\""), "line 1, column 14: expecting 2 hex digits");
  EXPECT_EQ(parse_error("root ::= \"\\u12G4\""), "line 1, column 15: expecting 4 hex digits");
  EXPECT_EQ(parse_error("root ::= (\"a\""), "line 1, column 14: expecting ')'");
  EXPECT_EQ(parse_error("root ::= \"a\"{,3}"), "line 1, column 14: expecting an integer");
  EXPECT_EQ(parse_error("root ::= \"a\"{2"), "line 1, column 15: expecting '}'");
  EXPECT_EQ(parse_error("root ::= \"a\"{3,1}"),
            "line 1, column 17: the maximum number of "
            "repetitions is below the minimum");
  EXPECT_EQ(parse_error("root ::= * \"a\""),
            "line 1, column 10: expecting preceding item to */+/?/{");
  EXPECT_EQ(parse_error("root ::= \"a\" | +"),
            "line 1, column 16: expecting preceding item to */+/?/{");
  EXPECT_EQ(parse_error("root ::= <[12"), "line 1, column 14: expecting ']>'");
  EXPECT_EQ(parse_error("root ::= <think"), "line 1, column 10: expecting '>'");
  EXPECT_EQ(parse_error("root ::= !\"a\""), "line 1, column 11: expecting '<' after '!'");
  EXPECT_EQ(parse_error("root ::= \"\xff\""), "line 1, column 11: invalid UTF-8");
  EXPECT_EQ(parse_error("root ::= \"a\"\r\n\r\nx ::= y z ::= \"b\""),
            "line 3, column 11: expecting newline or end");
}

TEST(GrammarParse, LoadErrors) {
  EXPECT_EQ(parse_error("root ::= foo"), "Undefined rule identifier 'foo'");
  EXPECT_EQ(parse_error("other ::= \"a\""), "grammar does not contain a 'root' rule");
  EXPECT_EQ(parse_error(""), "grammar does not contain a 'root' rule");
  EXPECT_EQ(parse_error("  # only a comment\n\n"), "grammar does not contain a 'root' rule");
  EXPECT_EQ(parse_error("root ::= <think>"), "line 1, column 10: token <think> needs a vocabulary");
  auto two_tokens = [](std::string_view) { return std::vector<int32_t>{1, 2}; };
  EXPECT_EQ(parse_error("root ::= <think>", two_tokens),
            "line 1, column 10: token <think> is not exactly one token");
}

TEST(GrammarParse, LeftRecursionIsRejected) {
  EXPECT_EQ(parse_error("root ::= a\na ::= a \"x\" | \"y\""),
            "left recursion detected for rule 'a'");
  EXPECT_EQ(parse_error("root ::= root \"x\""), "left recursion detected for rule 'root'");
  // Through a nullable rule.
  EXPECT_EQ(parse_error("root ::= a\na ::= b a \"x\" | \"y\"\nb ::= \"b\" | "),
            "left recursion detected for rule 'a'");
  // Through a nullable group and a repetition.
  EXPECT_NE(parse_error("root ::= \"b\"* root \"x\" | \"y\""), "(parsed)");
  // Mutual recursion.
  EXPECT_NE(parse_error("root ::= a\na ::= b \"x\"\nb ::= a | \"y\""), "(parsed)");
  // Right recursion and recursion after a terminal are fine.
  must_parse("root ::= \"x\" root | \"y\"");
  must_parse("root ::= a\na ::= b a | \"y\"\nb ::= \"b\"");
}

TEST(GrammarParse, WhitespaceNewlinesAndComments) {
  auto g = must_parse(
      "# leading comment\n"
      "root   ::=   a   b # trailing comment\n"
      "\n\n"
      "a ::=\n   \"a\"\n"
      "b ::= \"b\" |\n   \"c\"\n"
      "c ::= ( \"x\"\n  \"y\" # inside\n  | \"z\" )\r\n"
      "d ::= \"d\"\r"
      "e\t::=\t\"e\"");
  EXPECT_TRUE(accepts(g, "ab"));
  EXPECT_TRUE(accepts(g, "ac"));
  EXPECT_FALSE(accepts(g, "a b"));
  // Outside parentheses a newline ends the rule.
  EXPECT_EQ(parse_error("root ::= \"a\"\n  \"b\""), "line 2, column 3: expecting name");
}

TEST(GrammarParse, LiteralsAndEscapes) {
  auto g = must_parse(R"g(root ::= "\x41\u00e9\U0001F600\t\r\n\\\"\[\]" "é")g");
  EXPECT_TRUE(accepts(g, "A\u00e9\U0001F600\t\r\n\\\"[]\u00e9"));
  EXPECT_FALSE(accepts(g, "A"));
}

TEST(GrammarParse, CharacterClasses) {
  auto g = must_parse(R"g(root ::= [a-c] [^0-9] [a-] [-a] [\]x] [\x30-\x32ab] .)g");
  EXPECT_TRUE(accepts(g, "bxa-]0\n"));
  EXPECT_TRUE(accepts(g, "a!-a]a\xe4\xb8\xad"));
  EXPECT_FALSE(accepts(g, "d!a-]0x"));
  EXPECT_FALSE(accepts(g, "a5a-]0x"));
  EXPECT_FALSE(accepts(g, "axb-]0x"));
  EXPECT_FALSE(accepts(g, "axa-]3x"));
  // An empty class produces no element at all.
  auto empty = must_parse(R"g(root ::= "a" [] "b")g");
  EXPECT_TRUE(accepts(empty, "ab"));
  EXPECT_EQ(parse_error("root ::= []*"), "line 1, column 12: expecting preceding item to */+/?/{");
  // A reversed range matches nothing.
  auto reversed = must_parse(R"g(root ::= [z-a] | "q")g");
  EXPECT_FALSE(accepts(reversed, "m"));
  EXPECT_TRUE(accepts(reversed, "q"));
}

TEST(GrammarParse, GroupsAlternationAndReferences) {
  auto g = must_parse("root ::= (\"a\" | \"b\" | ) x\nx ::= \"x\" | \"y\" ( \"z\" )");
  EXPECT_TRUE(accepts(g, "ax"));
  EXPECT_TRUE(accepts(g, "x"));
  EXPECT_TRUE(accepts(g, "byz"));
  EXPECT_FALSE(accepts(g, "y"));
  auto names = must_parse("root ::= Rule-2\nRule-2 ::= \"ok\"");
  EXPECT_TRUE(accepts(names, "ok"));
  auto empty = must_parse("root ::= ");
  EXPECT_TRUE(accepts(empty, ""));
  EXPECT_FALSE(accepts(empty, "a"));
}

TEST(GrammarParse, LastDefinitionWins) {
  auto g = must_parse("root ::= \"a\"\nroot ::= \"b\"");
  EXPECT_FALSE(accepts(g, "a"));
  EXPECT_TRUE(accepts(g, "b"));
}

TEST(GrammarParse, TokenReferences) {
  auto tokenize = [](std::string_view text) {
    if (text == "<think>") return std::vector<int32_t>{7};
    return std::vector<int32_t>{1, 2, 3};
  };
  auto g = parse("root ::= <think> <[12]> !<[3]> !<think>", tokenize);
  ASSERT_TRUE(g.is_ok()) << g.status().to_string();
  const auto& symbols = (*g)->symbols;
  using detail::SymbolKind;
  ASSERT_GE(symbols.size(), 4u);
  EXPECT_EQ(symbols[0], (detail::Symbol{SymbolKind::kToken, 7}));
  EXPECT_EQ(symbols[1], (detail::Symbol{SymbolKind::kToken, 12}));
  EXPECT_EQ(symbols[2], (detail::Symbol{SymbolKind::kTokenNot, 3}));
  EXPECT_EQ(symbols[3], (detail::Symbol{SymbolKind::kTokenNot, 7}));
  EXPECT_EQ(parse_error("root ::= <[99999999999]>"), "line 1, column 21: token id out of range");
}

TEST(GrammarParse, LimitsAreEnforced) {
  Limits small;
  small.max_text_bytes = 10;
  auto big = parse("root ::= \"abcdefgh\"", nullptr, small);
  ASSERT_FALSE(big.is_ok());
  EXPECT_NE(big.status().message().find("too large"), std::string::npos);

  Limits few_rules;
  few_rules.max_rules = 3;
  auto many = parse("root ::= a b c\na ::= \"a\"\nb ::= \"b\"\nc ::= \"c\"", nullptr, few_rules);
  ASSERT_FALSE(many.is_ok());
  EXPECT_EQ(many.status().message(), "line 1, column 15: too many rules (limit 3)");

  Limits shallow;
  shallow.max_nesting = 2;
  EXPECT_TRUE(parse("root ::= ((\"a\"))", nullptr, shallow).is_ok());
  auto deep = parse("root ::= (((\"a\")))", nullptr, shallow);
  ASSERT_FALSE(deep.is_ok());
  EXPECT_EQ(deep.status().message(), "line 1, column 12: groups nested too deeply (limit 2)");
}

TEST(GrammarParse, NulEndsTheText) {
  auto g = parse(std::string_view("root ::= \"a\"\0garbage", 20));
  ASSERT_TRUE(g.is_ok()) << g.status().to_string();
  EXPECT_TRUE(accepts(*g, "a"));
}

}  // namespace
}  // namespace hearth::grammar
