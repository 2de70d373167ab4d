// The lexer on its own: token kinds, values and positions, Jinja2's whitespace rules under
// each option, literal syntax and the lexer's error messages (the reasons are Jinja2's).
#include "jinja/lexer.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace hearth::jinja {
namespace {

std::vector<Token> lex(std::string_view source, const LexOptions& options = {}) {
  Result<std::vector<Token>> tokens = tokenize(source, options);
  EXPECT_TRUE(tokens.is_ok()) << tokens.status().message();
  return tokens.is_ok() ? *tokens : std::vector<Token>{};
}

// Compact rendering of a token list: D"text" V{ V} B{ B} N:name S"str" I:1 F:1.5 O:op $.
std::string describe(const std::vector<Token>& tokens) {
  std::string out;
  for (const Token& token : tokens) {
    if (!out.empty()) out += ' ';
    switch (token.type) {
      case TokenType::kData:
        out += "D\"" + token.text + "\"";
        break;
      case TokenType::kVariableBegin:
        out += "V{";
        break;
      case TokenType::kVariableEnd:
        out += "V}";
        break;
      case TokenType::kBlockBegin:
        out += "B{";
        break;
      case TokenType::kBlockEnd:
        out += "B}";
        break;
      case TokenType::kName:
        out += "N:" + token.text;
        break;
      case TokenType::kString:
        out += "S\"" + token.text + "\"";
        break;
      case TokenType::kInteger:
        out += "I:" + std::to_string(token.int_value);
        break;
      case TokenType::kFloat:
        out += "F:" + token.text;
        break;
      case TokenType::kOperator:
        out += "O:" + token.text;
        break;
      case TokenType::kEof:
        out += "$";
        break;
    }
  }
  return out;
}

// Only the data the template outputs verbatim, joined.
std::string data_of(std::string_view source, const LexOptions& options = {}) {
  std::string out;
  for (const Token& token : lex(source, options)) {
    if (token.type == TokenType::kData) out += token.text;
  }
  return out;
}

std::string error_of(std::string_view source) {
  Result<std::vector<Token>> tokens = tokenize(source, LexOptions{});
  if (tokens.is_ok()) return "no error";
  EXPECT_EQ(tokens.status().code(), ErrorCode::kInvalidArgument);
  return tokens.status().message();
}

TEST(LexerTest, SplitsDataAndTags) {
  EXPECT_EQ(describe(lex("Hello {{ name }}!{% if x %}{# note #}")),
            "D\"Hello \" V{ N:name V} D\"!\" B{ N:if N:x B} $");
}

TEST(LexerTest, TracksLinesAndColumns) {
  const std::vector<Token> tokens = lex("ab\n  {{ x }}\n{% if y %}");
  ASSERT_EQ(tokens.size(), 10u);
  EXPECT_EQ(tokens[0].pos.line, 1u);  // data "ab\n  "
  EXPECT_EQ(tokens[0].pos.column, 1u);
  EXPECT_EQ(tokens[1].type, TokenType::kVariableBegin);
  EXPECT_EQ(tokens[1].pos.line, 2u);
  EXPECT_EQ(tokens[1].pos.column, 3u);
  EXPECT_EQ(tokens[2].text, "x");
  EXPECT_EQ(tokens[2].pos.column, 6u);
  EXPECT_EQ(tokens[5].type, TokenType::kBlockBegin);
  EXPECT_EQ(tokens[5].pos.line, 3u);
  EXPECT_EQ(tokens[7].text, "y");
  EXPECT_EQ(tokens[7].pos.column, 7u);
}

TEST(LexerTest, ColumnsCountCodePoints) {
  const std::vector<Token> tokens = lex("é😀{{ x }}");
  ASSERT_GE(tokens.size(), 2u);
  EXPECT_EQ(tokens[1].type, TokenType::kVariableBegin);
  EXPECT_EQ(tokens[1].pos.column, 3u);
}

TEST(LexerTest, OperatorsTakeTheLongestMatch) {
  EXPECT_EQ(describe(lex("{{ a//b**c==d!=e>=f<=g<h>i~j|k }}")),
            "V{ N:a O:// N:b O:** N:c O:== N:d O:!= N:e O:>= N:f O:<= N:g O:< N:h O:> N:i O:~ "
            "N:j O:| N:k V} $");
}

TEST(LexerTest, Numbers) {
  EXPECT_EQ(describe(lex("{{ 42 1_000 0x1F 0o17 0B101 00 }}")),
            "V{ I:42 I:1000 I:31 I:15 I:5 I:0 V} $");
  const std::vector<Token> floats = lex("{{ 1.5 1e3 1_0.5 2.5E-3 }}");
  ASSERT_EQ(floats.size(), 7u);
  EXPECT_DOUBLE_EQ(floats[1].float_value, 1.5);
  EXPECT_DOUBLE_EQ(floats[2].float_value, 1000.0);
  EXPECT_DOUBLE_EQ(floats[3].float_value, 10.5);
  EXPECT_DOUBLE_EQ(floats[4].float_value, 0.0025);
}

TEST(LexerTest, NumberAfterDotIsAnInteger) {
  // Jinja2's float rule refuses to start right after a dot, so x.0.1 is two subscripts.
  EXPECT_EQ(describe(lex("{{ x.0.1 }}")), "V{ N:x O:. I:0 O:. I:1 V} $");
  EXPECT_EQ(describe(lex("{{ 1.e3 }}")), "V{ I:1 O:. N:e3 V} $");
}

TEST(LexerTest, StringEscapes) {
  EXPECT_EQ(describe(lex(R"({{ 'a\'b' "c\"d" 'e\nf' }})")), "V{ S\"a'b\" S\"c\"d\" S\"e\nf\" V} $");
  EXPECT_EQ(lex(R"({{ '\x41\u00e9\U0001F600\N{BULLET}' }})")[1].text, "Aé😀•");
  EXPECT_EQ(lex(R"({{ '\d\q' }})")[1].text, "\\d\\q");  // unknown escapes stay
  EXPECT_EQ(lex(R"({{ '\101\0' }})")[1].text, std::string("A\0", 2));
  EXPECT_EQ(lex("{{ '\\\xC3\xA9' }}")[1].text, "\\xe9");  // backslash before é
  EXPECT_EQ(lex("{{ 'a\\\nb' }}")[1].text, "ab");         // line continuation
}

TEST(LexerTest, Identifiers) {
  EXPECT_EQ(describe(lex("{{ _a1 été }}")), "V{ N:_a1 N:été V} $");
}

TEST(LexerTest, BracesInsideTagsDoNotCloseIt) {
  EXPECT_EQ(describe(lex("{{ {'a': {'b': 1}} }}")),
            "V{ O:{ S\"a\" O:: O:{ S\"b\" O:: I:1 O:} O:} V} $");
  EXPECT_EQ(describe(lex("{% set x = {} %}")), "B{ N:set N:x O:= O:{ O:} B} $");
}

TEST(LexerTest, MinusMarkerIsNotAnOperator) {
  // Like Jinja2, `{{-1}}` reads as whitespace control followed by 1.
  EXPECT_EQ(describe(lex("{{-1}}{{ -1 }}")), "V{ I:1 V} V{ O:- I:1 V} $");
}

TEST(LexerTest, TrimBlocksAndLstripBlocks) {
  EXPECT_EQ(data_of("a\n  {% if x %}\n  b\n  {% endif %}\nc"), "a\n  b\nc");
  EXPECT_EQ(data_of("  {# comment #}\nx"), "x");
  // Neither applies to variables.
  EXPECT_EQ(data_of("  {{ x }}\ny"), "  \ny");
  // lstrip only when the tag is the first thing on its line.
  EXPECT_EQ(data_of("a  {% if x %}"), "a  ");
}

TEST(LexerTest, OptionsOff) {
  LexOptions options;
  options.trim_blocks = false;
  options.lstrip_blocks = false;
  EXPECT_EQ(data_of("a\n  {% if x %}\n  b\n  {% endif %}\nc", options), "a\n  \n  b\n  \nc");
}

TEST(LexerTest, WhitespaceControl) {
  EXPECT_EQ(data_of("a \n {%- if x -%} \n b \n {%- endif %}"), "ab");
  EXPECT_EQ(data_of("a \n {{- x -}} \n b"), "ab");
  EXPECT_EQ(data_of("a \n {#- c -#} \n b"), "ab");
  // `+` keeps what lstrip_blocks / trim_blocks would remove.
  EXPECT_EQ(data_of("  {%+ if x +%}\nb"), "  \nb");
  EXPECT_EQ(data_of("a{# c +#}\nb"), "a\nb");
  // `-` also strips Unicode whitespace, as Python's str.rstrip() does.
  EXPECT_EQ(data_of("a\xE3\x80\x80{%- if x %}"), "a");
}

TEST(LexerTest, TrimBlocksRemovesOnlyOneNewline) {
  EXPECT_EQ(data_of("{% if x %}\n\nb"), "\nb");
}

TEST(LexerTest, RawBlocks) {
  EXPECT_EQ(describe(lex("{% raw %}{{ x }}{% if %}{% endraw %}!")),
            "D\"{{ x }}{% if %}\" D\"!\" $");
  // Markers on raw tags strip around the raw text.
  EXPECT_EQ(data_of("a {%- raw -%} b {%- endraw -%} c"), "abc");
  // No trim_blocks newline after the opening raw tag, one after the closing tag.
  EXPECT_EQ(data_of("{% raw %}\nx{% endraw %}\ny"), "\nxy");
}

TEST(LexerTest, TrailingNewline) {
  EXPECT_EQ(data_of("line\n"), "line");
  EXPECT_EQ(data_of("line\n\n"), "line\n");
  LexOptions keep;
  keep.keep_trailing_newline = true;
  EXPECT_EQ(data_of("line\n", keep), "line\n");
}

TEST(LexerTest, NewlinesAreNormalized) {
  // Jinja2 splits the source at \r\n, \r and \n and joins it with \n.
  EXPECT_EQ(data_of("a\r\nb\rc\r\n"), "a\nb\nc");
  EXPECT_EQ(lex("{{ 'x\r\ny' }}")[1].text, "x\ny");
  EXPECT_EQ(data_of("a\r\n{% if x %}\r\nb"), "a\nb");
}

TEST(LexerTest, Errors) {
  EXPECT_EQ(error_of("{# open"), "line 1, column 1: Missing end of comment tag");
  EXPECT_EQ(error_of("{% raw %} open"), "line 1, column 10: Missing end of raw directive");
  EXPECT_EQ(error_of("{{ a ! b }}"), "line 1, column 6: unexpected char '!' at 5");
  EXPECT_EQ(error_of("x\n{{ 'open }}"), "line 2, column 4: unexpected char \"'\" at 5");
  EXPECT_EQ(error_of("{{ a ) }}"), "line 1, column 6: unexpected ')'");
  EXPECT_EQ(error_of("{{ (a ] }}"), "line 1, column 7: unexpected ']', expected ')'");
  EXPECT_EQ(error_of(R"({{ '\x4' }})"), "line 1, column 4: truncated \\xXX escape");
  EXPECT_EQ(error_of(R"({{ '\N{NO SUCH NAME}' }})"),
            "line 1, column 4: unknown Unicode character name");
  EXPECT_EQ(error_of("{{ \xCC\x81x }}"), "line 1, column 4: Invalid character in identifier");
}

}  // namespace
}  // namespace hearth::jinja
