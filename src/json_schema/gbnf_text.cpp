#include "json_schema/gbnf_text.h"

#include <fmt/format.h>

#include <algorithm>
#include <unordered_set>

namespace hearth::json_schema::detail {

std::vector<uint32_t> decode_utf8(std::string_view text) {
  std::vector<uint32_t> out;
  out.reserve(text.size());
  size_t i = 0;
  while (i < text.size()) {
    const auto b0 = static_cast<uint8_t>(text[i]);
    int len = 0;
    uint32_t cp = 0;
    if (b0 < 0x80) {
      len = 1, cp = b0;
    } else if ((b0 & 0xE0) == 0xC0) {
      len = 2, cp = b0 & 0x1F;
    } else if ((b0 & 0xF0) == 0xE0) {
      len = 3, cp = b0 & 0x0F;
    } else if ((b0 & 0xF8) == 0xF0) {
      len = 4, cp = b0 & 0x07;
    }
    bool ok = len > 0 && i + static_cast<size_t>(len) <= text.size();
    for (int k = 1; ok && k < len; ++k) {
      const auto b = static_cast<uint8_t>(text[i + static_cast<size_t>(k)]);
      ok = (b & 0xC0) == 0x80;
      cp = (cp << 6) | (b & 0x3F);
    }
    // Overlong forms, surrogates and values past U+10FFFF are not valid code points.
    static constexpr uint32_t kMinForLen[5] = {0, 0, 0x80, 0x800, 0x10000};
    if (ok && (cp < kMinForLen[len] || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF))) {
      ok = false;
    }
    if (!ok) {
      out.push_back(0xFFFD);
      ++i;
      continue;
    }
    out.push_back(cp);
    i += static_cast<size_t>(len);
  }
  return out;
}

void append_utf8(std::string& out, uint32_t cp) {
  if (cp < 0x80) {
    out += static_cast<char>(cp);
  } else if (cp < 0x800) {
    out += static_cast<char>(0xC0 | (cp >> 6));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  } else if (cp < 0x10000) {
    out += static_cast<char>(0xE0 | (cp >> 12));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  } else {
    out += static_cast<char>(0xF0 | (cp >> 18));
    out += static_cast<char>(0x80 | ((cp >> 12) & 0x3F));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  }
}

namespace {

// Escapes shared by literals and classes; false when `cp` needs no escape.
bool append_common_escape(std::string& out, uint32_t cp) {
  switch (cp) {
    case '\\':
      out += "\\\\";
      return true;
    case '"':
      out += "\\\"";
      return true;
    case '\n':
      out += "\\n";
      return true;
    case '\r':
      out += "\\r";
      return true;
    case '\t':
      out += "\\t";
      return true;
    default:
      break;
  }
  if (cp < 0x20 || cp == 0x7F) {
    out += fmt::format("\\x{:02X}", cp);
    return true;
  }
  return false;
}

}  // namespace

std::string gbnf_literal(std::string_view text) {
  std::string out = "\"";
  for (uint32_t cp : decode_utf8(text)) {
    if (!append_common_escape(out, cp)) append_utf8(out, cp);
  }
  out += '"';
  return out;
}

std::string gbnf_literal_cp(uint32_t cp) {
  std::string out = "\"";
  if (!append_common_escape(out, cp)) append_utf8(out, cp);
  out += '"';
  return out;
}

std::string gbnf_class_member(uint32_t cp) {
  std::string out;
  if (append_common_escape(out, cp)) return out;
  if (cp == '[' || cp == ']') return std::string("\\") + static_cast<char>(cp);
  if (cp == '-' || cp == '^') return fmt::format("\\x{:02X}", cp);
  append_utf8(out, cp);
  return out;
}

std::string sanitize_rule_name(std::string_view name) {
  std::string out;
  out.reserve(name.size());
  bool in_run = false;
  for (char c : name) {
    const bool ok =
        (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-';
    if (ok) {
      out += c;
      in_run = false;
    } else if (!in_run) {
      out += '-';
      in_run = true;
    }
  }
  return out;
}

namespace {

// A dry run of the GBNF parser's bookkeeping (see src/grammar/parser.cpp and spec 1.2):
// symbol names are registered at first sight, groups and repetitions synthesize more, and
// repetition copies count as elements.
class CostChecker {
 public:
  CostChecker(std::string_view text, const Limits& limits) : text_(text), limits_(limits) {}

  Status run() {
    if (text_.size() > limits_.max_text_bytes) {
      return fail(fmt::format("the grammar would be {} bytes (limit {})", text_.size(),
                              limits_.max_text_bytes));
    }
    while (pos_ < text_.size()) {
      const size_t eol = std::min(text_.find('\n', pos_), text_.size());
      const size_t def = text_.find(" ::= ", pos_);
      if (def == std::string_view::npos || def > eol) return fail("malformed rule");
      HEARTH_RETURN_IF_ERROR(see_name(text_.substr(pos_, def - pos_)));
      pos_ = def + 5;
      line_end_ = eol;
      HEARTH_RETURN_IF_ERROR(alternatives(0));
      if (pos_ != eol) return fail("malformed rule body");
      pos_ = eol + 1;
    }
    return Status::ok();
  }

 private:
  struct Item {
    uint64_t elements = 0;  // symbols a copy of the item adds
    uint64_t size = 1;      // rule-explosion weight of the item
  };

  Status fail(const std::string& why) const {
    return error(ErrorCode::kInvalidArgument, "schema too large for a grammar: " + why);
  }
  char peek() const { return pos_ < line_end_ ? text_[pos_] : '\n'; }
  void skip_space() {
    while (peek() == ' ') ++pos_;
  }
  static bool is_name_char(char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-';
  }
  Status add_names(uint64_t n) {
    names_ += n;
    if (names_ > static_cast<uint64_t>(limits_.max_rules)) {
      return fail(fmt::format("more than {} rules after expanding repetitions", limits_.max_rules));
    }
    return Status::ok();
  }
  Status add_elements(uint64_t n) {
    elements_ += n;
    if (elements_ > static_cast<uint64_t>(limits_.max_elements)) {
      return fail(
          fmt::format("more than {} elements after expanding repetitions", limits_.max_elements));
    }
    return Status::ok();
  }
  Status see_name(std::string_view name) {
    if (seen_.insert(std::string(name)).second) return add_names(1);
    return Status::ok();
  }

  Status alternatives(int depth) {
    HEARTH_RETURN_IF_ERROR(sequence(depth));
    while (peek() == '|') {
      ++pos_;
      skip_space();
      HEARTH_RETURN_IF_ERROR(sequence(depth));
    }
    return Status::ok();
  }

  Status sequence(int depth);
  Status skip_quoted(char close, uint64_t& count);
  Status repetition(Item& last);
  uint64_t count();

  std::string_view text_;
  const Limits& limits_;
  size_t pos_ = 0;
  size_t line_end_ = 0;
  uint64_t names_ = 0;
  uint64_t elements_ = 0;
  std::unordered_set<std::string> seen_;
};

// Skips a literal or class body up to `close`, counting its code points (escapes are one).
Status CostChecker::skip_quoted(char close, uint64_t& n) {
  ++pos_;
  n = 0;
  while (peek() != close) {
    if (pos_ >= line_end_) return fail("unterminated literal");
    if (peek() == '\\') ++pos_;
    ++pos_;
    while (pos_ < line_end_ && (static_cast<uint8_t>(text_[pos_]) & 0xC0) == 0x80) ++pos_;
    ++n;
  }
  ++pos_;
  return Status::ok();
}

uint64_t CostChecker::count() {
  uint64_t v = 0;
  while (peek() >= '0' && peek() <= '9') {
    v = std::min<uint64_t>(v * 10 + static_cast<uint64_t>(peek() - '0'), 1ull << 40);
    ++pos_;
  }
  return v;
}

Status CostChecker::sequence(int depth) {
  Item last;
  for (;;) {
    const char c = peek();
    uint64_t n = 0;
    if (c == '"') {
      HEARTH_RETURN_IF_ERROR(skip_quoted('"', n));
      HEARTH_RETURN_IF_ERROR(add_elements(n));
      last = Item{n, 1};
    } else if (c == '[') {
      HEARTH_RETURN_IF_ERROR(skip_quoted(']', n));
      HEARTH_RETURN_IF_ERROR(add_elements(n + 1));
      last = Item{1, 1};
    } else if (is_name_char(c)) {
      const size_t start = pos_;
      while (is_name_char(peek())) ++pos_;
      HEARTH_RETURN_IF_ERROR(see_name(text_.substr(start, pos_ - start)));
      HEARTH_RETURN_IF_ERROR(add_elements(1));
      last = Item{1, 1};
    } else if (c == '(') {
      if (depth + 1 > limits_.max_nesting) return fail("groups nested too deeply");
      ++pos_;
      skip_space();
      const uint64_t before = names_;
      HEARTH_RETURN_IF_ERROR(add_names(1));
      HEARTH_RETURN_IF_ERROR(alternatives(depth + 1));
      if (peek() != ')') return fail("malformed group");
      ++pos_;
      HEARTH_RETURN_IF_ERROR(add_elements(1));
      last = Item{1, std::max<uint64_t>(names_ - before, 1)};
    } else if (c == '*' || c == '+' || c == '?' || c == '{') {
      HEARTH_RETURN_IF_ERROR(repetition(last));
    } else {
      return Status::ok();
    }
    skip_space();
  }
}

Status CostChecker::repetition(Item& last) {
  const char c = peek();
  ++pos_;
  uint64_t min = c == '+' ? 1 : 0, max = 1;
  bool unbounded = c != '?';
  if (c == '{') {
    min = max = count();
    unbounded = false;
    if (peek() == ',') {
      ++pos_;
      if (peek() >= '0' && peek() <= '9') {
        max = count();
      } else {
        unbounded = true;
      }
    }
    if (peek() != '}') return fail("malformed repetition");
    ++pos_;
  }
  const uint64_t cap = static_cast<uint64_t>(std::max(limits_.max_repetitions, 0));
  if (min > cap) return fail(fmt::format("a repetition of {} exceeds the limit {}", min, cap));
  if (!unbounded && max > cap) unbounded = true;
  const uint64_t weight = (!unbounded && max > 0) ? max : (min > 0 ? min : 1);
  if (last.size * weight >= cap) {
    return fail(
        fmt::format("a repetition expands to {} rules (limit {})", last.size * weight, cap));
  }
  last.size *= weight;
  const uint64_t n_optional = unbounded ? 1 : max - min;
  const uint64_t copies = (min == 0 ? 0 : min - 1) + n_optional;
  HEARTH_RETURN_IF_ERROR(add_elements(copies * last.elements + n_optional + 1));
  return add_names(n_optional);
}

}  // namespace

Status check_grammar_cost(std::string_view gbnf, const Limits& limits) {
  return CostChecker(gbnf, limits).run();
}

}  // namespace hearth::json_schema::detail
