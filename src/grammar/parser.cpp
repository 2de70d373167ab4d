// GBNF text -> ParsedGrammar (grammar.md 1.1-1.2): a recursive-descent parser whose only
// recursion is into parenthesized groups, bounded by Limits::max_nesting.
#include <algorithm>
#include <charconv>
#include <string>
#include <unordered_map>

#include "grammar/compiled.h"
#include "grammar/grammar.h"
#include "grammar/utf8.h"

namespace hearth::grammar {
namespace {

using detail::CharClass;
using detail::ParsedGrammar;
using detail::Symbol;
using detail::SymbolKind;

bool is_name_char(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-';
}
bool is_digit(char c) {
  return c >= '0' && c <= '9';
}

int hex_value(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

// The element a repetition operator applies to: the tail of the current sequence from
// `start`, and its size for the rule-explosion guard (grammar.md 1.2).
struct LastItem {
  size_t start = 0;
  uint64_t size = 1;
};

class Parser {
 public:
  Parser(std::string_view text, const TokenizeFn& tokenize, const Limits& limits)
      : text_(text), tokenize_(tokenize), limits_(limits) {
    out_.classes.push_back(CharClass{.negated = true, .ranges = {}});  // `.`
  }

  Result<ParsedGrammar> run() {
    skip_space(true);
    while (!at_end()) HEARTH_RETURN_IF_ERROR(parse_rule());
    return std::move(out_);
  }

 private:
  static constexpr uint32_t kAnyClass = 0;

  bool at_end() const { return pos_ >= text_.size(); }
  // The byte `offset` ahead, or NUL past the end (the text never contains NUL, see parse()).
  char peek(size_t offset = 0) const {
    return pos_ + offset < text_.size() ? text_[pos_ + offset] : '\0';
  }

  Status fail_at(size_t at, const std::string& reason) const {
    size_t line = 1, line_start = 0;
    for (size_t i = 0; i < at && i < text_.size(); ++i) {
      const char c = text_[i];
      if (c == '\n' || (c == '\r' && (i + 1 >= text_.size() || text_[i + 1] != '\n'))) {
        ++line;
        line_start = i + 1;
      }
    }
    return error(ErrorCode::kInvalidArgument, "line " + std::to_string(line) + ", column " +
                                                  std::to_string(at - line_start + 1) + ": " +
                                                  reason);
  }
  Status fail(const std::string& reason) const { return fail_at(pos_, reason); }

  // Spaces, tabs and comments; newlines too where the syntax allows them.
  void skip_space(bool newlines) {
    while (!at_end()) {
      const char c = peek();
      if (c == ' ' || c == '\t') {
        ++pos_;
      } else if (c == '#') {
        while (!at_end() && peek() != '\n' && peek() != '\r') ++pos_;
      } else if (newlines && (c == '\n' || c == '\r')) {
        ++pos_;
      } else {
        break;
      }
    }
  }

  std::string_view parse_name() {
    const size_t start = pos_;
    while (is_name_char(peek())) ++pos_;
    return text_.substr(start, pos_ - start);
  }

  Result<uint32_t> add_symbol(std::string name) {
    if (out_.names.size() >= static_cast<size_t>(std::max(limits_.max_rules, 0))) {
      return fail("too many rules (limit " + std::to_string(limits_.max_rules) + ")");
    }
    const auto id = static_cast<uint32_t>(out_.names.size());
    ids_.emplace(name, id);
    out_.names.push_back(std::move(name));
    out_.rules.emplace_back();
    return id;
  }
  Result<uint32_t> symbol_id(std::string_view name) {
    auto it = ids_.find(std::string(name));
    if (it != ids_.end()) return it->second;
    return add_symbol(std::string(name));
  }
  // Names of synthesized rules contain '_', which a user rule name cannot.
  Result<uint32_t> synthesize_symbol(const std::string& base) {
    return add_symbol(base + "_" + std::to_string(out_.names.size()));
  }

  Status count_elements(uint64_t added) {
    n_elements_ += added;
    if (n_elements_ > limits_.max_elements) {
      return fail("grammar too large: more than " + std::to_string(limits_.max_elements) +
                  " elements after expanding repetitions");
    }
    return Status::ok();
  }
  Status push(std::vector<Symbol>& out, Symbol symbol) {
    HEARTH_RETURN_IF_ERROR(count_elements(1));
    out.push_back(symbol);
    return Status::ok();
  }

  Status parse_rule() {
    const std::string_view name = parse_name();
    if (name.empty()) return fail("expecting name");
    HEARTH_ASSIGN_OR_RETURN(const uint32_t rule_id, symbol_id(name));
    skip_space(false);
    if (text_.substr(pos_, 3) != "::=") return fail("expecting ::=");
    pos_ += 3;
    skip_space(true);
    HEARTH_RETURN_IF_ERROR(parse_alternatives(rule_id, std::string(name), false, 0));
    if (peek() == '\r') {
      pos_ += peek(1) == '\n' ? 2 : 1;
    } else if (peek() == '\n') {
      ++pos_;
    } else if (!at_end()) {
      return fail("expecting newline or end");
    }
    skip_space(true);
    return Status::ok();
  }

  Status parse_alternatives(uint32_t rule_id, const std::string& rule_name, bool nested,
                            int depth) {
    std::vector<std::vector<Symbol>> alternatives(1);
    HEARTH_RETURN_IF_ERROR(parse_sequence(rule_name, alternatives.back(), nested, depth));
    while (peek() == '|') {
      ++pos_;
      skip_space(true);
      alternatives.emplace_back();
      HEARTH_RETURN_IF_ERROR(parse_sequence(rule_name, alternatives.back(), nested, depth));
    }
    // A rule defined twice keeps its last definition.
    out_.rules[rule_id].defined = true;
    out_.rules[rule_id].alternatives = std::move(alternatives);
    return Status::ok();
  }

  Status parse_sequence(const std::string& rule_name, std::vector<Symbol>& out, bool nested,
                        int depth);
  Status parse_literal(std::vector<Symbol>& out, LastItem& last);
  Status parse_class(std::vector<Symbol>& out, LastItem& last);
  Status parse_group(const std::string& rule_name, std::vector<Symbol>& out, LastItem& last,
                     int depth);
  Status parse_token(std::vector<Symbol>& out, LastItem& last);
  Status parse_braces(const std::string& rule_name, std::vector<Symbol>& out, LastItem& last,
                      bool nested);
  Result<uint64_t> parse_count();
  // `at`: the operator's position, for errors.
  Status repeat(const std::string& rule_name, std::vector<Symbol>& out, LastItem& last,
                uint64_t min, uint64_t max, bool unbounded, size_t at);
  Result<uint32_t> parse_char();
  Result<uint32_t> parse_hex(int digits);

  std::string_view text_;
  const TokenizeFn& tokenize_;
  const Limits& limits_;
  size_t pos_ = 0;
  uint64_t n_elements_ = 0;
  ParsedGrammar out_;
  std::unordered_map<std::string, uint32_t> ids_;
};

Status Parser::parse_sequence(const std::string& rule_name, std::vector<Symbol>& out, bool nested,
                              int depth) {
  LastItem last{.start = out.size(), .size = 1};
  while (!at_end()) {
    const char c = peek();
    if (c == '"') {
      HEARTH_RETURN_IF_ERROR(parse_literal(out, last));
    } else if (c == '[') {
      HEARTH_RETURN_IF_ERROR(parse_class(out, last));
    } else if (is_name_char(c)) {
      const std::string_view name = parse_name();
      HEARTH_ASSIGN_OR_RETURN(const uint32_t id, symbol_id(name));
      last = LastItem{.start = out.size(), .size = 1};
      HEARTH_RETURN_IF_ERROR(push(out, Symbol{SymbolKind::kRuleRef, id}));
    } else if (c == '(') {
      HEARTH_RETURN_IF_ERROR(parse_group(rule_name, out, last, depth));
    } else if (c == '.') {
      ++pos_;
      last = LastItem{.start = out.size(), .size = 1};
      HEARTH_RETURN_IF_ERROR(push(out, Symbol{SymbolKind::kClass, kAnyClass}));
    } else if (c == '<' || c == '!') {
      HEARTH_RETURN_IF_ERROR(parse_token(out, last));
    } else if (c == '*' || c == '+' || c == '?') {
      const uint64_t min = c == '+' ? 1 : 0;
      HEARTH_RETURN_IF_ERROR(repeat(rule_name, out, last, min, 1, c != '?', pos_));
      ++pos_;
    } else if (c == '{') {
      HEARTH_RETURN_IF_ERROR(parse_braces(rule_name, out, last, nested));
      continue;  // parse_braces skipped the space after '}'
    } else {
      break;
    }
    skip_space(nested);
  }
  return Status::ok();
}

Status Parser::parse_literal(std::vector<Symbol>& out, LastItem& last) {
  ++pos_;  // opening quote
  last = LastItem{.start = out.size(), .size = 1};
  while (peek() != '"') {
    if (at_end()) return fail("unexpected end of input");
    HEARTH_ASSIGN_OR_RETURN(const uint32_t cp, parse_char());
    HEARTH_RETURN_IF_ERROR(push(out, Symbol{SymbolKind::kChar, cp}));
  }
  ++pos_;
  return Status::ok();
}

Status Parser::parse_class(std::vector<Symbol>& out, LastItem& last) {
  ++pos_;  // '['
  CharClass cls;
  if (peek() == '^') {
    cls.negated = true;
    ++pos_;
  }
  size_t n_items = 0;
  while (peek() != ']') {
    if (at_end()) return fail("unexpected end of input");
    HEARTH_ASSIGN_OR_RETURN(const uint32_t low, parse_char());
    uint32_t high = low;
    // '-' is a range operator only when something other than ']' follows it.
    if (peek() == '-' && peek(1) != ']') {
      ++pos_;
      if (at_end()) return fail("unexpected end of input");
      HEARTH_ASSIGN_OR_RETURN(high, parse_char());
    }
    cls.ranges.emplace_back(low, high);
    ++n_items;
  }
  ++pos_;
  last = LastItem{.start = out.size(), .size = 1};
  // An empty class produces no element at all (observed upstream behaviour).
  if (n_items == 0) return Status::ok();
  HEARTH_RETURN_IF_ERROR(count_elements(n_items));
  cls.normalize();
  if (!cls.negated && cls.ranges.size() == 1 && cls.ranges[0].first == cls.ranges[0].second) {
    return push(out, Symbol{SymbolKind::kChar, cls.ranges[0].first});
  }
  out_.classes.push_back(std::move(cls));
  return push(out, Symbol{SymbolKind::kClass, static_cast<uint32_t>(out_.classes.size() - 1)});
}

Status Parser::parse_group(const std::string& rule_name, std::vector<Symbol>& out, LastItem& last,
                           int depth) {
  if (depth + 1 > limits_.max_nesting) {
    return fail("groups nested too deeply (limit " + std::to_string(limits_.max_nesting) + ")");
  }
  ++pos_;  // '('
  skip_space(true);
  const size_t n_symbols_before = out_.names.size();
  HEARTH_ASSIGN_OR_RETURN(const uint32_t group_id, synthesize_symbol(rule_name));
  HEARTH_RETURN_IF_ERROR(parse_alternatives(group_id, rule_name, true, depth + 1));
  if (peek() != ')') return fail("expecting ')'");
  ++pos_;
  const uint64_t n_new = out_.names.size() - n_symbols_before;
  last = LastItem{.start = out.size(), .size = std::max<uint64_t>(n_new, 1)};
  return push(out, Symbol{SymbolKind::kRuleRef, group_id});
}

Status Parser::parse_token(std::vector<Symbol>& out, LastItem& last) {
  SymbolKind kind = SymbolKind::kToken;
  if (peek() == '!') {
    kind = SymbolKind::kTokenNot;
    ++pos_;
    if (peek() != '<') return fail("expecting '<' after '!'");
  }
  const size_t start = pos_;
  int64_t token = 0;
  if (peek(1) == '[') {
    pos_ += 2;
    if (!is_digit(peek())) return fail("expecting a token id");
    while (is_digit(peek())) {
      token = token * 10 + (peek() - '0');
      if (token > INT32_MAX) return fail("token id out of range");
      ++pos_;
    }
    if (peek() != ']' || peek(1) != '>') return fail("expecting ']>'");
    pos_ += 2;
  } else {
    const size_t close = text_.find('>', start + 1);
    if (close == std::string_view::npos) return fail("expecting '>'");
    const std::string_view token_text = text_.substr(start, close - start + 1);
    if (!tokenize_) return fail("token " + std::string(token_text) + " needs a vocabulary");
    const std::vector<int32_t> ids = tokenize_(token_text);
    if (ids.size() != 1) {
      return fail("token " + std::string(token_text) + " is not exactly one token");
    }
    token = ids[0];
    pos_ = close + 1;
  }
  last = LastItem{.start = out.size(), .size = 1};
  return push(out, Symbol{kind, static_cast<uint32_t>(token)});
}

Status Parser::parse_braces(const std::string& rule_name, std::vector<Symbol>& out, LastItem& last,
                            bool nested) {
  const size_t brace = pos_;
  ++pos_;  // '{'
  skip_space(nested);
  HEARTH_ASSIGN_OR_RETURN(const uint64_t min, parse_count());
  skip_space(nested);
  uint64_t max = min;
  bool unbounded = false;
  if (peek() == ',') {
    ++pos_;
    skip_space(nested);
    if (is_digit(peek())) {
      HEARTH_ASSIGN_OR_RETURN(max, parse_count());
      skip_space(nested);
    } else {
      unbounded = true;
    }
  }
  if (peek() != '}') return fail("expecting '}'");
  const size_t brace_end = pos_;
  ++pos_;
  skip_space(nested);
  if (!unbounded && max < min) {
    return fail_at(brace_end, "the maximum number of repetitions is below the minimum");
  }
  return repeat(rule_name, out, last, min, max, unbounded, brace);
}

// Saturates instead of overflowing: any count this large is rejected later anyway.
Result<uint64_t> Parser::parse_count() {
  if (!is_digit(peek())) return fail("expecting an integer");
  uint64_t value = 0;
  while (is_digit(peek())) {
    value = std::min<uint64_t>(value * 10 + static_cast<uint64_t>(peek() - '0'), 1ull << 40);
    ++pos_;
  }
  return value;
}

// S{m,n} -> S x m, then R1 ::= S R2 | ... R(n-m) ::= S | ; S{m,} -> S x m, then R ::= S R |
Status Parser::repeat(const std::string& rule_name, std::vector<Symbol>& out, LastItem& last,
                      uint64_t min, uint64_t max, bool unbounded, size_t at) {
  if (last.start >= out.size()) return fail_at(at, "expecting preceding item to */+/?/{");
  const auto cap = static_cast<uint64_t>(std::max(limits_.max_repetitions, 0));
  if (min > cap) return fail_at(at, "number of repetitions exceeds sane defaults");
  if (!unbounded && max > cap) unbounded = true;
  const uint64_t weight = (!unbounded && max > 0) ? max : (min > 0 ? min : 1);
  if (last.size * weight >= cap) {
    return fail_at(at,
                   "number of rules that are going to be repeated multiplied by the new repetition "
                   "exceeds sane defaults");
  }
  last.size *= weight;

  const std::vector<Symbol> item(out.begin() + static_cast<ptrdiff_t>(last.start), out.end());
  const uint64_t n_optional = unbounded ? 1 : max - min;
  const uint64_t n_copies = (min == 0 ? 0 : min - 1) + n_optional;
  HEARTH_RETURN_IF_ERROR(count_elements(n_copies * item.size() + n_optional + 1));
  if (min == 0) out.resize(last.start);
  for (uint64_t i = 1; i < min; ++i) out.insert(out.end(), item.begin(), item.end());

  uint32_t previous_optional = 0;
  for (uint64_t i = 0; i < n_optional; ++i) {
    HEARTH_ASSIGN_OR_RETURN(const uint32_t id, synthesize_symbol(rule_name));
    std::vector<Symbol> once = item;
    if (unbounded) once.push_back(Symbol{SymbolKind::kRuleRef, id});
    if (i > 0) once.push_back(Symbol{SymbolKind::kRuleRef, previous_optional});
    out_.rules[id].defined = true;
    out_.rules[id].alternatives = {std::move(once), {}};
    previous_optional = id;
  }
  if (n_optional > 0) out.push_back(Symbol{SymbolKind::kRuleRef, previous_optional});
  return Status::ok();
}

Result<uint32_t> Parser::parse_hex(int digits) {
  uint32_t value = 0;
  for (int i = 0; i < digits; ++i) {
    const int digit = hex_value(peek());
    if (digit < 0) return fail("expecting " + std::to_string(digits) + " hex digits");
    value = (value << 4) | static_cast<uint32_t>(digit);
    ++pos_;
  }
  return value;
}

// One code point of a literal or class: an escape, or UTF-8 decoded from the text.
Result<uint32_t> Parser::parse_char() {
  const size_t start = pos_;
  if (peek() == '\\') {
    ++pos_;
    const char c = peek();
    ++pos_;
    switch (c) {
      case 'x':
        return parse_hex(2);
      case 'u':
        return parse_hex(4);
      case 'U':
        return parse_hex(8);
      case 't':
        return uint32_t{'\t'};
      case 'r':
        return uint32_t{'\r'};
      case 'n':
        return uint32_t{'\n'};
      case '\\':
      case '"':
      case '[':
      case ']':
        return static_cast<uint32_t>(c);
      default:
        return fail_at(start, "unknown escape");
    }
  }
  detail::Utf8Partial partial;
  uint32_t cp = 0;
  while (!at_end()) {
    const auto step = detail::utf8_push(partial, static_cast<uint8_t>(peek()), cp);
    ++pos_;
    if (step == detail::Utf8Step::kComplete) return cp;
    if (step == detail::Utf8Step::kInvalid) break;
  }
  return fail_at(start, "invalid UTF-8");
}

}  // namespace

Result<std::shared_ptr<const Grammar>> parse(std::string_view gbnf, const TokenizeFn& tokenize,
                                             const Limits& limits) {
  if (gbnf.size() > limits.max_text_bytes) {
    return error(ErrorCode::kInvalidArgument, "grammar too large: " + std::to_string(gbnf.size()) +
                                                  " bytes (limit " +
                                                  std::to_string(limits.max_text_bytes) + ")");
  }
  // Upstream reads the grammar as a C string: a NUL byte ends it.
  gbnf = gbnf.substr(0, gbnf.find('\0'));
  Parser parser(gbnf, tokenize, limits);
  HEARTH_ASSIGN_OR_RETURN(detail::ParsedGrammar parsed, parser.run());
  return detail::compile(std::move(parsed));
}

}  // namespace hearth::grammar
