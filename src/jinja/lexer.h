// Jinja2's lexer: splits template source into data and tag tokens with the whitespace rules of
// Hugging Face's environment (trim_blocks, lstrip_blocks, `-`/`+` markers, raw blocks, the
// trailing newline) and Jinja2's literal syntax (Python string escapes, 1_000, 0x1F, 1e3).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"

namespace hearth::jinja {

struct SourcePos {
  uint32_t line = 1;    // 1-based
  uint32_t column = 1;  // 1-based, in code points
};

enum class TokenType : uint8_t {
  kData,
  kVariableBegin,
  kVariableEnd,
  kBlockBegin,
  kBlockEnd,
  kName,
  kString,
  kInteger,
  kFloat,
  kOperator,
  kEof,
};

struct Token {
  TokenType type = TokenType::kEof;
  // Data text, name, decoded string literal, or operator spelling ("//", "[", ...).
  std::string text;
  int64_t int_value = 0;
  double float_value = 0;
  SourcePos pos;

  bool is_operator(std::string_view op) const { return type == TokenType::kOperator && text == op; }
  bool is_name(std::string_view name) const { return type == TokenType::kName && text == name; }
};

struct LexOptions {
  bool trim_blocks = true;
  bool lstrip_blocks = true;
  bool keep_trailing_newline = false;
};

// "line L, column C: <reason>" errors (kInvalidArgument) for malformed tags and literals. The
// returned list always ends with a kEof token.
Result<std::vector<Token>> tokenize(std::string_view source, const LexOptions& options);

// How Jinja2 names a token in syntax errors: a name's text, an operator's spelling, or a
// description ("end of print statement", "end of template").
std::string describe_token(const Token& token);
std::string describe_token_type(TokenType type);

// "line L, column C: <reason>".
std::string format_position(SourcePos pos, std::string_view reason);

}  // namespace hearth::jinja
