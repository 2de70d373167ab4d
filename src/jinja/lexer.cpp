// The lexer follows Jinja2's lexer.py state machine (root text, comment, block, variable and
// raw states) rule by rule; the comments name the Jinja2 behaviour each branch reproduces.
#include "jinja/lexer.h"

#include <unicode/uchar.h>

#include <charconv>
#include <cmath>
#include <limits>

#include "jinja/pystr.h"

namespace hearth::jinja {

std::string format_position(SourcePos pos, std::string_view reason) {
  std::string out = "line " + std::to_string(pos.line) + ", column " + std::to_string(pos.column);
  out += ": ";
  out.append(reason);
  return out;
}

std::string describe_token_type(TokenType type) {
  switch (type) {
    case TokenType::kData:
      return "template data / text";
    case TokenType::kVariableBegin:
      return "begin of print statement";
    case TokenType::kVariableEnd:
      return "end of print statement";
    case TokenType::kBlockBegin:
      return "begin of statement block";
    case TokenType::kBlockEnd:
      return "end of statement block";
    case TokenType::kName:
      return "name";
    case TokenType::kString:
      return "string";
    case TokenType::kInteger:
      return "integer";
    case TokenType::kFloat:
      return "float";
    case TokenType::kOperator:
      return "operator";
    case TokenType::kEof:
      return "end of template";
  }
  return "token";
}

std::string describe_token(const Token& token) {
  if (token.type == TokenType::kName || token.type == TokenType::kOperator) return token.text;
  return describe_token_type(token.type);
}

namespace {

// Jinja2 splits the source at \r\n, \r and \n, drops one trailing empty line (unless
// keep_trailing_newline) and joins with \n: every newline in data and strings becomes \n.
std::string normalize_newlines(std::string_view source, bool keep_trailing_newline) {
  std::string out;
  out.reserve(source.size());
  for (size_t i = 0; i < source.size(); ++i) {
    const char c = source[i];
    if (c == '\r') {
      if (i + 1 < source.size() && source[i + 1] == '\n') ++i;
      out.push_back('\n');
    } else {
      out.push_back(c);
    }
  }
  if (!keep_trailing_newline && !out.empty() && out.back() == '\n') out.pop_back();
  return out;
}

bool is_ascii_digit(char c) {
  return c >= '0' && c <= '9';
}

// Line and column of byte offsets, computed incrementally (offsets mostly increase).
class PositionTracker {
 public:
  explicit PositionTracker(std::string_view text) : text_(text) {}

  SourcePos at(size_t offset) {
    if (offset < offset_) {
      offset_ = 0;
      pos_ = SourcePos{};
    }
    while (offset_ < offset && offset_ < text_.size()) {
      const auto byte = static_cast<unsigned char>(text_[offset_]);
      if (byte == '\n') {
        ++pos_.line;
        pos_.column = 1;
      } else if ((byte & 0xC0) != 0x80) {
        ++pos_.column;  // count lead bytes only: columns are code points
      }
      ++offset_;
    }
    return pos_;
  }

 private:
  std::string_view text_;
  size_t offset_ = 0;
  SourcePos pos_;
};

class Lexer {
 public:
  Lexer(std::string source, const LexOptions& options)
      : src_(std::move(source)), options_(options), tracker_(src_) {}

  Result<std::vector<Token>> run();

 private:
  enum class TagKind { kComment, kBlock, kVariable };

  Status lex_root();
  Status lex_raw(size_t body_start);
  Status lex_comment(size_t tag_start);
  Status lex_tag(TagKind kind);
  bool match_tag_end(TagKind kind);
  bool match_raw_begin(size_t at, size_t* end) const;
  bool match_endraw(size_t at, char* sign, size_t* end) const;
  Status lex_number(size_t start, bool* matched);
  Status lex_string(size_t start);
  Status lex_name(size_t start);
  Status lex_operator(size_t start);

  std::string strip_before_tag(std::string_view text, char sign, bool is_variable) const;
  size_t skip_whitespace(size_t at) const;
  void emit(TokenType type, std::string text, size_t at);
  Status error_at(size_t at, std::string_view reason) {
    return Status(ErrorCode::kInvalidArgument, format_position(tracker_.at(at), reason));
  }

  std::string src_;
  LexOptions options_;
  PositionTracker tracker_;
  std::vector<Token> tokens_;
  std::vector<char> brackets_;  // expected closers of open ( [ {
  size_t pos_ = 0;
  bool line_starting_ = true;  // the previous match ended with a newline
};

size_t Lexer::skip_whitespace(size_t at) const {
  while (at < src_.size()) {
    size_t next = at;
    if (!pystr::is_space(pystr::decode_one(src_, next))) break;
    at = next;
  }
  return at;
}

void Lexer::emit(TokenType type, std::string text, size_t at) {
  Token token;
  token.type = type;
  token.text = std::move(text);
  token.pos = tracker_.at(at);
  tokens_.push_back(std::move(token));
}

// Jinja2's OptionalLStrip: `-` strips all whitespace before the tag; otherwise lstrip_blocks
// removes spaces/tabs between the start of the line and a block or comment tag.
std::string Lexer::strip_before_tag(std::string_view text, char sign, bool is_variable) const {
  if (sign == '-') {
    size_t keep = 0;
    size_t pos = 0;
    while (pos < text.size()) {
      if (!pystr::is_space(pystr::decode_one(text, pos))) keep = pos;
    }
    return std::string(text.substr(0, keep));
  }
  if (sign == '+' || !options_.lstrip_blocks || is_variable) return std::string(text);
  const size_t newline = text.rfind('\n');
  const size_t line_start = newline == std::string_view::npos ? 0 : newline + 1;
  if (line_start == 0 && !line_starting_) return std::string(text);
  if (line_start == text.size()) return std::string(text);
  size_t pos = line_start;
  while (pos < text.size()) {
    if (!pystr::is_space(pystr::decode_one(text, pos))) return std::string(text);
  }
  return std::string(text.substr(0, line_start));
}

// `{%` sign? \s* raw \s* (-%}\s* | %}) — no trim_blocks newline after a raw opening tag.
bool Lexer::match_raw_begin(size_t at, size_t* end) const {
  size_t p = at + 2;
  if (p < src_.size() && (src_[p] == '-' || src_[p] == '+')) ++p;
  p = skip_whitespace(p);
  if (src_.compare(p, 3, "raw") != 0) return false;
  p = skip_whitespace(p + 3);
  if (src_.compare(p, 3, "-%}") == 0) {
    *end = skip_whitespace(p + 3);
    return true;
  }
  if (src_.compare(p, 2, "%}") == 0) {
    *end = p + 2;
    return true;
  }
  return false;
}

bool Lexer::match_endraw(size_t at, char* sign, size_t* end) const {
  if (src_.compare(at, 2, "{%") != 0) return false;
  size_t p = at + 2;
  *sign = 0;
  if (p < src_.size() && (src_[p] == '-' || src_[p] == '+')) *sign = src_[p++];
  p = skip_whitespace(p);
  if (src_.compare(p, 6, "endraw") != 0) return false;
  p = skip_whitespace(p + 6);
  if (src_.compare(p, 3, "+%}") == 0) {
    *end = p + 3;
  } else if (src_.compare(p, 3, "-%}") == 0) {
    *end = skip_whitespace(p + 3);
  } else if (src_.compare(p, 2, "%}") == 0) {
    *end = p + 2;
    if (options_.trim_blocks && *end < src_.size() && src_[*end] == '\n') ++*end;
  } else {
    return false;
  }
  return true;
}

Status Lexer::lex_raw(size_t body_start) {
  for (size_t at = body_start; at < src_.size(); ++at) {
    char sign = 0;
    size_t end = 0;
    if (src_[at] != '{' || !match_endraw(at, &sign, &end)) continue;
    std::string body = strip_before_tag(std::string_view(src_).substr(body_start, at - body_start),
                                        sign, /*is_variable=*/false);
    if (!body.empty()) emit(TokenType::kData, std::move(body), body_start);
    line_starting_ = src_[end - 1] == '\n';
    pos_ = end;
    return Status::ok();
  }
  return error_at(body_start, "Missing end of raw directive");
}

Status Lexer::lex_comment(size_t tag_start) {
  for (size_t at = pos_; at < src_.size(); ++at) {
    size_t end = 0;
    if (src_.compare(at, 3, "+#}") == 0) {
      end = at + 3;
    } else if (src_.compare(at, 3, "-#}") == 0) {
      end = skip_whitespace(at + 3);
    } else if (src_.compare(at, 2, "#}") == 0) {
      end = at + 2;
      if (options_.trim_blocks && end < src_.size() && src_[end] == '\n') ++end;
    } else {
      continue;
    }
    line_starting_ = src_[end - 1] == '\n';
    pos_ = end;
    return Status::ok();
  }
  return error_at(tag_start, "Missing end of comment tag");
}

Status Lexer::lex_root() {
  const size_t text_start = pos_;
  size_t at = src_.find('{', pos_);
  while (at != std::string::npos && at + 1 < src_.size() && src_[at + 1] != '{' &&
         src_[at + 1] != '%' && src_[at + 1] != '#') {
    at = src_.find('{', at + 1);
  }
  if (at == std::string::npos || at + 1 >= src_.size()) {
    if (text_start < src_.size()) emit(TokenType::kData, src_.substr(text_start), text_start);
    pos_ = src_.size();
    return Status::ok();
  }
  const char kind_char = src_[at + 1];
  const char sign =
      at + 2 < src_.size() && (src_[at + 2] == '-' || src_[at + 2] == '+') ? src_[at + 2] : 0;
  const std::string_view text = std::string_view(src_).substr(text_start, at - text_start);
  size_t raw_end = 0;
  const bool is_raw = kind_char == '%' && match_raw_begin(at, &raw_end);
  std::string data = strip_before_tag(text, sign, kind_char == '{');
  if (!data.empty()) emit(TokenType::kData, std::move(data), text_start);
  if (is_raw) {
    line_starting_ = src_[raw_end - 1] == '\n';
    return lex_raw(raw_end);
  }
  line_starting_ = false;
  pos_ = at + 2 + (sign != 0 ? 1 : 0);
  if (kind_char == '#') return lex_comment(at);
  if (kind_char == '%') {
    emit(TokenType::kBlockBegin, "", at);
    return lex_tag(TagKind::kBlock);
  }
  emit(TokenType::kVariableBegin, "", at);
  return lex_tag(TagKind::kVariable);
}

bool Lexer::match_tag_end(TagKind kind) {
  const size_t start = pos_;
  size_t end = 0;
  if (kind == TagKind::kBlock) {
    if (src_.compare(start, 3, "+%}") == 0) {
      end = start + 3;
    } else if (src_.compare(start, 3, "-%}") == 0) {
      end = skip_whitespace(start + 3);
    } else if (src_.compare(start, 2, "%}") == 0) {
      end = start + 2;
      if (options_.trim_blocks && end < src_.size() && src_[end] == '\n') ++end;
    } else {
      return false;
    }
  } else {
    if (src_.compare(start, 3, "-}}") == 0) {
      end = skip_whitespace(start + 3);
    } else if (src_.compare(start, 2, "}}") == 0) {
      end = start + 2;
    } else {
      return false;
    }
  }
  emit(kind == TagKind::kBlock ? TokenType::kBlockEnd : TokenType::kVariableEnd, "", start);
  line_starting_ = src_[end - 1] == '\n';
  pos_ = end;
  return true;
}

Status Lexer::lex_tag(TagKind kind) {
  brackets_.clear();
  while (pos_ < src_.size()) {
    // Like Jinja2, an end marker only closes the tag while brackets are balanced.
    if (brackets_.empty() && match_tag_end(kind)) return Status::ok();
    const size_t start = pos_;
    const size_t after_space = skip_whitespace(start);
    if (after_space != start) {
      pos_ = after_space;
      continue;
    }
    const char c = src_[start];
    bool matched = false;
    HEARTH_RETURN_IF_ERROR(lex_number(start, &matched));
    if (matched) continue;
    if (c == '\'' || c == '"') {
      HEARTH_RETURN_IF_ERROR(lex_string(start));
      if (pos_ != start) continue;
    }
    const auto byte = static_cast<unsigned char>(c);
    if (byte >= 0x80 || c == '_' || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z')) {
      HEARTH_RETURN_IF_ERROR(lex_name(start));
      if (pos_ != start) continue;
    }
    HEARTH_RETURN_IF_ERROR(lex_operator(start));
  }
  return Status::ok();  // end of source inside a tag: the parser reports it
}

// (\d+_)*\d+ : digit runs joined by single underscores; returns the end or `at` on no match.
size_t match_digits(std::string_view s, size_t at, bool (*is_digit)(char)) {
  if (at >= s.size() || !is_digit(s[at])) return at;
  size_t p = at;
  while (p < s.size() && is_digit(s[p])) ++p;
  while (p + 1 < s.size() && s[p] == '_' && is_digit(s[p + 1])) {
    p += 1;
    while (p < s.size() && is_digit(s[p])) ++p;
  }
  return p;
}

bool is_bin_digit(char c) {
  return c == '0' || c == '1';
}
bool is_oct_digit(char c) {
  return c >= '0' && c <= '7';
}
bool is_hex_digit(char c) {
  return is_ascii_digit(c) || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
}
bool is_dec_digit(char c) {
  return is_ascii_digit(c);
}

// Python's float literal grammar as Jinja2's float_re spells it; returns the end or `at`.
size_t match_float(std::string_view s, size_t at) {
  if (at > 0 && s[at - 1] == '.') return at;  // (?<!\.)
  const size_t int_end = match_digits(s, at, is_dec_digit);
  if (int_end == at) return at;
  size_t p = int_end;
  size_t fraction_end = p;
  if (p < s.size() && s[p] == '.') {
    const size_t digits_end = match_digits(s, p + 1, is_dec_digit);
    if (digits_end != p + 1) fraction_end = digits_end;
  }
  p = fraction_end;
  if (p < s.size() && (s[p] == 'e' || s[p] == 'E')) {
    size_t q = p + 1;
    if (q < s.size() && (s[q] == '+' || s[q] == '-')) ++q;
    const size_t exp_end = match_digits(s, q, is_dec_digit);
    if (exp_end != q) return exp_end;
  }
  return fraction_end != int_end ? fraction_end : at;
}

// 0b.., 0o.., 0x.. (underscore allowed before each digit), [1-9](_?\d)*, 0(_?0)*.
size_t match_integer(std::string_view s, size_t at, int* base) {
  if (s[at] == '0' && at + 1 < s.size()) {
    const char prefix = static_cast<char>(s[at + 1] | 0x20);
    bool (*digit)(char) = nullptr;
    if (prefix == 'b') digit = is_bin_digit, *base = 2;
    if (prefix == 'o') digit = is_oct_digit, *base = 8;
    if (prefix == 'x') digit = is_hex_digit, *base = 16;
    if (digit != nullptr) {
      size_t p = at + 2;
      while (p < s.size()) {
        if (digit(s[p])) {
          ++p;
        } else if (s[p] == '_' && p + 1 < s.size() && digit(s[p + 1])) {
          p += 2;
        } else {
          break;
        }
      }
      if (p != at + 2) return p;
    }
  }
  *base = 10;
  if (s[at] == '0') {
    size_t p = at + 1;
    while (p < s.size()) {
      if (s[p] == '0') {
        ++p;
      } else if (s[p] == '_' && p + 1 < s.size() && s[p + 1] == '0') {
        p += 2;
      } else {
        break;
      }
    }
    return p;
  }
  if (s[at] < '1' || s[at] > '9') return at;
  size_t p = at + 1;
  while (p < s.size()) {
    if (is_ascii_digit(s[p])) {
      ++p;
    } else if (s[p] == '_' && p + 1 < s.size() && is_ascii_digit(s[p + 1])) {
      p += 2;
    } else {
      break;
    }
  }
  return p;
}

std::string without_underscores(std::string_view text) {
  std::string out;
  for (char c : text) {
    if (c != '_') out.push_back(c);
  }
  return out;
}

Status Lexer::lex_number(size_t start, bool* matched) {
  *matched = false;
  if (!is_ascii_digit(src_[start])) return Status::ok();
  const size_t float_end = match_float(src_, start);
  if (float_end != start) {
    const std::string digits = without_underscores(src_.substr(start, float_end - start));
    double value = 0;
    const auto [ptr, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), value);
    (void)ptr;
    if (ec == std::errc::result_out_of_range) {
      // Python's float() saturates: 1e400 is inf, 1e-400 is 0.0.
      const size_t e = digits.find_first_of("eE");
      const bool negative_exponent = e != std::string::npos && digits[e + 1] == '-';
      value = negative_exponent ? 0.0 : std::numeric_limits<double>::infinity();
    }
    emit(TokenType::kFloat, src_.substr(start, float_end - start), start);
    tokens_.back().float_value = value;
    pos_ = float_end;
    *matched = true;
    return Status::ok();
  }
  int base = 10;
  const size_t int_end = match_integer(src_, start, &base);
  if (int_end == start) return Status::ok();
  std::string digits = without_underscores(src_.substr(start, int_end - start));
  if (base != 10) digits = digits.substr(2);
  uint64_t value = 0;
  const auto [ptr, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), value, base);
  (void)ptr;
  if (ec != std::errc() || value > static_cast<uint64_t>(std::numeric_limits<int64_t>::max())) {
    return error_at(start, "integer literal too large");
  }
  emit(TokenType::kInteger, src_.substr(start, int_end - start), start);
  tokens_.back().int_value = static_cast<int64_t>(value);
  pos_ = int_end;
  *matched = true;
  return Status::ok();
}

// The escape text Python's "backslashreplace" gives a non-ASCII code point.
std::string backslash_escape(char32_t cp) {
  static const char kHex[] = "0123456789abcdef";
  std::string out = "\\";
  int digits = 8;
  if (cp < 0x100) {
    out += 'x';
    digits = 2;
  } else if (cp < 0x10000) {
    out += 'u';
    digits = 4;
  } else {
    out += 'U';
  }
  for (int i = digits - 1; i >= 0; --i) out += kHex[(cp >> (4 * i)) & 0xF];
  return out;
}

int hex_value(char c) {
  if (is_ascii_digit(c)) return c - '0';
  c = static_cast<char>(c | 0x20);
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  return -1;
}

void append_code_point(std::string& out, uint32_t cp) {
  // Lone surrogates cannot be encoded in UTF-8; Python would fail when writing them out.
  if (cp >= 0xD800 && cp <= 0xDFFF) cp = 0xFFFD;
  pystr::append_utf8(out, static_cast<char32_t>(cp));
}

// \N{NAME}: the character ICU knows by that Unicode name (or alias).
bool lookup_char_name(const std::string& name, uint32_t* cp) {
  UErrorCode status = U_ZERO_ERROR;
  UChar32 c = u_charFromName(U_EXTENDED_CHAR_NAME, name.c_str(), &status);
  if (U_FAILURE(status) || c < 0) {
    status = U_ZERO_ERROR;
    c = u_charFromName(U_CHAR_NAME_ALIAS, name.c_str(), &status);
  }
  if (U_FAILURE(status) || c < 0) return false;
  *cp = static_cast<uint32_t>(c);
  return true;
}

// Python's one-character escapes (\n, \t, ...); 0 when `e` is not one.
char simple_escape(char e) {
  switch (e) {
    case '\\':
      return '\\';
    case '\'':
      return '\'';
    case '"':
      return '"';
    case 'a':
      return '\a';
    case 'b':
      return '\b';
    case 'f':
      return '\f';
    case 'n':
      return '\n';
    case 'r':
      return '\r';
    case 't':
      return '\t';
    case 'v':
      return '\v';
    default:
      return 0;
  }
}

// `count` hex digits at ascii[*i], advancing *i; the error names the escape (\xXX, ...).
bool read_hex(std::string_view ascii, size_t* i, int count, const char* what, uint32_t* value,
              std::string* error) {
  *value = 0;
  for (int k = 0; k < count; ++k) {
    const size_t at = *i + static_cast<size_t>(k);
    const int digit = at < ascii.size() ? hex_value(ascii[at]) : -1;
    if (digit < 0) {
      *error = std::string("truncated ") + what + " escape";
      return false;
    }
    *value = *value * 16 + static_cast<uint32_t>(digit);
  }
  *i += static_cast<size_t>(count);
  return true;
}

// Decodes the escape whose letter is ascii[*i - 1] (the backslash precedes it).
bool decode_escape(std::string_view ascii, size_t* i, std::string* out, std::string* error) {
  const char e = ascii[*i - 1];
  uint32_t cp = 0;
  if (e == '\n') return true;  // line continuation
  if (const char simple = simple_escape(e); simple != 0) {
    out->push_back(simple);
    return true;
  }
  if (e == 'x' || e == 'u' || e == 'U') {
    const int digits = e == 'x' ? 2 : e == 'u' ? 4 : 8;
    const char* name = e == 'x' ? "\\xXX" : e == 'u' ? "\\uXXXX" : "\\UXXXXXXXX";
    if (!read_hex(ascii, i, digits, name, &cp, error)) return false;
    if (cp > 0x10FFFF) {
      *error = "illegal Unicode character";
      return false;
    }
  } else if (e == 'N') {
    const size_t close = ascii.find('}', *i);
    if (*i >= ascii.size() || ascii[*i] != '{' || close == std::string_view::npos ||
        close == *i + 1) {
      *error = "malformed \\N character escape";
      return false;
    }
    if (!lookup_char_name(std::string(ascii.substr(*i + 1, close - *i - 1)), &cp)) {
      *error = "unknown Unicode character name";
      return false;
    }
    *i = close + 1;
  } else if (is_oct_digit(e)) {
    cp = static_cast<uint32_t>(e - '0');
    for (int k = 0; k < 2 && *i < ascii.size() && is_oct_digit(ascii[*i]); ++k) {
      cp = cp * 8 + static_cast<uint32_t>(ascii[(*i)++] - '0');
    }
  } else {
    out->push_back('\\');  // unknown escapes stay as written
    out->push_back(e);
    return true;
  }
  append_code_point(*out, cp);
  return true;
}

// Decodes the body of a string literal as Jinja2 does: encode("ascii", "backslashreplace")
// then decode("unicode-escape"). Returns the Python error text on failure.
bool decode_python_escapes(std::string_view body, std::string* out, std::string* error) {
  // Non-ASCII code points first become their \x/\u/\U escape text, then everything is decoded;
  // so a backslash before a non-ASCII character escapes the backslash of that escape.
  std::string ascii;
  ascii.reserve(body.size());
  for (size_t pos = 0; pos < body.size();) {
    if (static_cast<unsigned char>(body[pos]) < 0x80) {
      ascii += body[pos++];
    } else {
      ascii += backslash_escape(pystr::decode_one(body, pos));
    }
  }
  out->clear();
  size_t i = 0;
  while (i < ascii.size()) {
    const char c = ascii[i++];
    if (c != '\\') {
      out->push_back(c);
      continue;
    }
    if (i >= ascii.size()) {
      *error = "\\ at end of string";
      return false;
    }
    ++i;
    if (!decode_escape(ascii, &i, out, error)) return false;
  }
  return true;
}

Status Lexer::lex_string(size_t start) {
  const char quote = src_[start];
  size_t p = start + 1;
  while (p < src_.size() && src_[p] != quote) {
    if (src_[p] == '\\') {
      if (p + 1 >= src_.size()) return Status::ok();  // no match: reported as unexpected char
      ++p;
    }
    ++p;
  }
  if (p >= src_.size()) return Status::ok();
  std::string decoded;
  std::string reason;
  if (!decode_python_escapes(std::string_view(src_).substr(start + 1, p - start - 1), &decoded,
                             &reason)) {
    return error_at(start, reason);
  }
  emit(TokenType::kString, std::move(decoded), start);
  pos_ = p + 1;
  return Status::ok();
}

bool is_identifier_continue(char32_t cp) {
  if (cp < 0x80) {
    return cp == '_' || is_ascii_digit(static_cast<char>(cp)) || (cp >= 'a' && cp <= 'z') ||
           (cp >= 'A' && cp <= 'Z');
  }
  return u_hasBinaryProperty(static_cast<UChar32>(cp), UCHAR_XID_CONTINUE) ||
         pystr::is_word_char(cp);
}

bool is_identifier_start(char32_t cp) {
  if (cp < 0x80) return cp == '_' || (cp >= 'a' && cp <= 'z') || (cp >= 'A' && cp <= 'Z');
  return u_hasBinaryProperty(static_cast<UChar32>(cp), UCHAR_XID_START);
}

Status Lexer::lex_name(size_t start) {
  size_t p = start;
  while (p < src_.size()) {
    size_t next = p;
    if (!is_identifier_continue(pystr::decode_one(src_, next))) break;
    p = next;
  }
  if (p == start) return Status::ok();
  size_t first = start;
  if (!is_identifier_start(pystr::decode_one(src_, first))) {
    return error_at(start, "Invalid character in identifier");
  }
  emit(TokenType::kName, src_.substr(start, p - start), start);
  pos_ = p;
  return Status::ok();
}

Status Lexer::lex_operator(size_t start) {
  static constexpr std::string_view kTwoChar[] = {"//", "**", "==", "!=", ">=", "<="};
  static constexpr std::string_view kOneChar = "+-/*%~[](){}><=.:|,;";
  std::string_view sv(src_);
  size_t length = 0;
  for (std::string_view op : kTwoChar) {
    if (sv.substr(start, 2) == op) length = 2;
  }
  if (length == 0 && kOneChar.find(src_[start]) != std::string_view::npos) length = 1;
  if (length == 0) {
    size_t next = start;
    const char32_t cp = pystr::decode_one(src_, next);
    const size_t index = pystr::code_point_count(sv.substr(0, start));
    return error_at(start, "unexpected char " + pystr::repr_string(pystr::encode({&cp, 1})) +
                               " at " + std::to_string(index));
  }
  const char c = src_[start];
  if (length == 1 && (c == '(' || c == '[' || c == '{')) {
    brackets_.push_back(c == '(' ? ')' : c == '[' ? ']' : '}');
  } else if (length == 1 && (c == ')' || c == ']' || c == '}')) {
    if (brackets_.empty()) return error_at(start, std::string("unexpected '") + c + "'");
    const char expected = brackets_.back();
    brackets_.pop_back();
    if (expected != c) {
      return error_at(start, std::string("unexpected '") + c + "', expected '" + expected + "'");
    }
  }
  emit(TokenType::kOperator, src_.substr(start, length), start);
  pos_ = start + length;
  return Status::ok();
}

Result<std::vector<Token>> Lexer::run() {
  while (pos_ < src_.size()) HEARTH_RETURN_IF_ERROR(lex_root());
  emit(TokenType::kEof, "", src_.size());
  return std::move(tokens_);
}

}  // namespace

Result<std::vector<Token>> tokenize(std::string_view source, const LexOptions& options) {
  Lexer lexer(normalize_newlines(source, options.keep_trailing_newline), options);
  return lexer.run();
}

}  // namespace hearth::jinja
