#include "json_schema/pattern.h"

#include <fmt/format.h>

#include <cstdint>
#include <memory>
#include <utility>
#include <vector>

#include "json_schema/gbnf_text.h"

namespace hearth::json_schema::detail {
namespace {

using Kind = PatternOutcome::Kind;

constexpr int kMaxGroupNesting = 100;  // spec 5.7: deeper nesting is unsupported

struct Alt;
struct ClassSpec {
  bool negated = false;
  std::vector<std::pair<uint32_t, uint32_t>> ranges;
};
struct Atom {
  enum class Type { kChar, kDot, kClass, kGroup } type = Type::kChar;
  uint32_t cp = 0;
  ClassSpec cls;
  std::unique_ptr<Alt> group;
};
struct Item {
  Atom atom;
  uint64_t min = 1, max = 1;
  bool unbounded = false;
  bool quantified = false;
};
struct Seq {
  std::vector<Item> items;
};
struct Alt {
  std::vector<Seq> seqs;
};

bool is_hex(uint32_t c) {
  return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
}

// Recursive descent over code points. Invalid syntax stops at once; an unsupported
// construct is remembered (first reason wins) and parsing goes on, so that a later syntax
// error still turns into an error rather than a silent downgrade.
class RegexParser {
 public:
  RegexParser(std::vector<uint32_t> p, uint64_t cap) : p_(std::move(p)), cap_(cap) {}

  PatternOutcome parse(Alt& out) {
    parse_alt(out, 0);
    if (kind_ != Kind::kInvalid && !stopped_ && i_ < p_.size()) invalid("unbalanced parentheses");
    return PatternOutcome{kind_, message_, "", false};
  }

 private:
  bool done() const { return kind_ == Kind::kInvalid || stopped_; }
  bool at_end() const { return i_ >= p_.size(); }
  uint32_t peek(size_t ahead = 0) const {
    return i_ + ahead < p_.size() ? p_[i_ + ahead] : 0xFFFFFFFFu;
  }
  void invalid(const std::string& why) {
    if (kind_ == Kind::kInvalid) return;
    kind_ = Kind::kInvalid;
    message_ = why;
  }
  void unsupported(const std::string& why) {
    if (kind_ != Kind::kOk) return;
    kind_ = Kind::kUnsupported;
    message_ = why;
  }

  void parse_alt(Alt& out, int depth) {
    for (;;) {
      out.seqs.emplace_back();
      parse_seq(out.seqs.back(), depth);
      if (done() || peek() != '|') return;
      ++i_;
    }
  }

  void parse_seq(Seq& out, int depth);
  void parse_group(Seq& out, int depth);
  void parse_class(Seq& out);
  bool parse_class_member(uint32_t& cp);
  void parse_escape(Seq& out);
  void quantify(Seq& out, uint64_t min, uint64_t max, bool unbounded);
  bool parse_braces(uint64_t& min, uint64_t& max, bool& unbounded);
  void flat_scan(int open);

  std::vector<uint32_t> p_;
  uint64_t cap_;
  size_t i_ = 0;
  Kind kind_ = Kind::kOk;
  std::string message_;
  bool stopped_ = false;
};

void RegexParser::parse_seq(Seq& out, int depth) {
  while (!at_end() && !done()) {
    const uint32_t c = peek();
    if (c == '|' || c == ')') return;
    if (c == '(') {
      parse_group(out, depth);
    } else if (c == '[') {
      parse_class(out);
    } else if (c == '\\') {
      parse_escape(out);
    } else if (c == '*' || c == '+' || c == '?') {
      ++i_;
      quantify(out, c == '+' ? 1 : 0, 1, c != '?');
    } else if (c == '{') {
      uint64_t min = 0, max = 0;
      bool unbounded = false;
      const size_t start = i_;
      if (parse_braces(min, max, unbounded)) {
        quantify(out, min, max, unbounded);
      } else {
        unsupported("malformed braces");
        i_ = start + 1;
        out.items.push_back(Item{Atom{Atom::Type::kChar, '{', {}, nullptr}});
      }
    } else {
      ++i_;
      Item item;
      if (c == '.') {
        item.atom.type = Atom::Type::kDot;
      } else {
        if (c == '^' || c == '$') unsupported("anchor inside the pattern");
        item.atom.cp = c;
      }
      out.items.push_back(std::move(item));
    }
  }
}

void RegexParser::parse_group(Seq& out, int depth) {
  ++i_;  // '('
  if (peek() == '?') {
    if (peek(1) == ':') {
      i_ += 2;
    } else {
      unsupported("lookaround, named group or inline flags");
      ++i_;
      // Skip the construct's prefix; its contents are still parsed for syntax errors.
      if (peek() == '=' || peek() == '!') {
        ++i_;
      } else if (peek() == '<' && (peek(1) == '=' || peek(1) == '!')) {
        i_ += 2;
      } else {
        while (!at_end() && peek() != ')' && peek() != ':' && peek() != '>') ++i_;
        if (peek() == ':' || peek() == '>') ++i_;
      }
    }
  }
  if (depth + 1 > kMaxGroupNesting) {
    unsupported("groups nested deeper than 100");
    flat_scan(depth + 1);
    return;
  }
  Item item;
  item.atom.type = Atom::Type::kGroup;
  item.atom.group = std::make_unique<Alt>();
  parse_alt(*item.atom.group, depth + 1);
  if (done()) return;
  if (peek() != ')') return invalid("unbalanced parentheses");
  ++i_;
  out.items.push_back(std::move(item));
}

// Past the nesting limit the rest is only checked for syntax errors, without recursion.
void RegexParser::flat_scan(int open) {
  stopped_ = true;
  while (!at_end()) {
    const uint32_t c = p_[i_++];
    if (c == '\\') {
      if (at_end()) return invalid("trailing backslash");
      ++i_;
    } else if (c == '[') {
      while (!at_end() && peek() != ']') i_ += peek() == '\\' ? 2 : 1;
      if (at_end()) return invalid("unterminated character class");
      ++i_;
    } else if (c == '(') {
      ++open;
    } else if (c == ')') {
      if (open == 0) return invalid("unbalanced parentheses");
      --open;
    }
  }
  if (open != 0) invalid("unbalanced parentheses");
}

void RegexParser::parse_escape(Seq& out) {
  ++i_;  // '\'
  if (at_end()) return invalid("trailing backslash");
  const uint32_t c = p_[i_++];
  static constexpr std::string_view kMeta = "^$.[]()|{}*+?";
  if (c >= 0x80 || kMeta.find(static_cast<char>(c)) == std::string_view::npos) {
    std::string shown;
    append_utf8(shown, c);
    unsupported("unsupported escape \\" + shown);
  }
  out.items.push_back(Item{Atom{Atom::Type::kChar, c, {}, nullptr}});
}

// GBNF's own escapes are the only ones a class may use (spec 5.7).
bool RegexParser::parse_class_member(uint32_t& cp) {
  const uint32_t c = p_[i_++];
  if (c != '\\') {
    cp = c;
    return true;
  }
  if (at_end()) return false;
  const uint32_t e = p_[i_++];
  int digits = e == 'x' ? 2 : e == 'u' ? 4 : e == 'U' ? 8 : 0;
  if (digits == 0) {
    switch (e) {
      case 't':
        cp = '\t';
        return true;
      case 'r':
        cp = '\r';
        return true;
      case 'n':
        cp = '\n';
        return true;
      case '\\':
      case '"':
      case '[':
      case ']':
        cp = e;
        return true;
      default: {
        std::string shown;
        append_utf8(shown, e);
        unsupported("unsupported escape \\" + shown + " in a character class");
        cp = e;
        return true;
      }
    }
  }
  uint64_t value = 0;
  for (int k = 0; k < digits; ++k) {
    if (!is_hex(peek())) {
      unsupported("malformed hex escape in a character class");
      cp = e;
      return true;
    }
    const uint32_t h = p_[i_++];
    value = value * 16 + (h <= '9' ? h - '0' : (h | 0x20) - 'a' + 10);
  }
  if (value > 0x10FFFF) unsupported("escape beyond U+10FFFF in a character class");
  cp = static_cast<uint32_t>(value > 0x10FFFF ? 0xFFFD : value);
  return true;
}

void RegexParser::parse_class(Seq& out) {
  ++i_;  // '['
  Item item;
  item.atom.type = Atom::Type::kClass;
  if (peek() == '^') {
    item.atom.cls.negated = true;
    ++i_;
  }
  if (peek() == ']') {
    unsupported("empty character class");
    ++i_;
    out.items.push_back(std::move(item));
    return;
  }
  while (!at_end() && peek() != ']') {
    uint32_t lo = 0, hi = 0;
    if (!parse_class_member(lo)) return invalid("trailing backslash");
    hi = lo;
    if (peek() == '-' && i_ + 1 < p_.size() && peek(1) != ']') {
      ++i_;
      if (!parse_class_member(hi)) return invalid("trailing backslash");
      if (hi < lo) return invalid("range out of order in character class");
    }
    item.atom.cls.ranges.emplace_back(lo, hi);
  }
  if (at_end()) return invalid("unterminated character class");
  ++i_;
  out.items.push_back(std::move(item));
}

// {m}, {m,}, {,n}, {m,n}; false (nothing consumed) when the braces are not a quantifier.
bool RegexParser::parse_braces(uint64_t& min, uint64_t& max, bool& unbounded) {
  size_t j = i_ + 1;
  auto number = [&](uint64_t& v) {
    const size_t start = j;
    v = 0;
    while (j < p_.size() && p_[j] >= '0' && p_[j] <= '9') {
      v = std::min<uint64_t>(v * 10 + (p_[j] - '0'), uint64_t{1} << 40);
      ++j;
    }
    return j > start;
  };
  const bool has_min = number(min);
  unbounded = false;
  if (j < p_.size() && p_[j] == ',') {
    ++j;
    const bool has_max = number(max);
    if (!has_min && !has_max) return false;
    if (!has_min) min = 0;
    unbounded = !has_max;
  } else {
    if (!has_min) return false;
    max = min;
  }
  if (j >= p_.size() || p_[j] != '}') return false;
  i_ = j + 1;
  return true;
}

void RegexParser::quantify(Seq& out, uint64_t min, uint64_t max, bool unbounded) {
  if (out.items.empty()) return invalid("nothing to repeat");
  Item& last = out.items.back();
  if (last.quantified) {
    if (min == 0 && max == 1 && !unbounded && p_[i_ - 1] == '?') {
      return unsupported("lazy quantifier");
    }
    return invalid("nothing to repeat");
  }
  if (!unbounded && max < min) return invalid("numbers out of order in {} quantifier");
  if (min >= cap_) {
    return invalid(
        fmt::format("repetition count {} exceeds the grammar limit of {}", min, cap_ - 1));
  }
  // The GBNF parser treats any upper bound over its cap as unbounded; so do we, and from
  // the cap itself on, where it would otherwise refuse the grammar.
  if (!unbounded && max >= cap_) unbounded = true;
  last.min = min;
  last.max = max;
  last.unbounded = unbounded;
  last.quantified = true;
}

bool nullable_alt(const Alt& alt);

bool nullable_item(const Item& item) {
  if (item.min == 0) return true;
  return item.atom.type == Atom::Type::kGroup && nullable_alt(*item.atom.group);
}

bool nullable_alt(const Alt& alt) {
  for (const Seq& seq : alt.seqs) {
    bool all = true;
    for (const Item& item : seq.items) all = all && nullable_item(item);
    if (all) return true;
  }
  return false;
}

// An unbounded repetition of something that can match "" expands to a left-recursive
// rule (R ::= S R | with S nullable), which the GBNF parser refuses.
bool has_nullable_loop(const Alt& alt) {
  for (const Seq& seq : alt.seqs) {
    for (const Item& item : seq.items) {
      if (item.atom.type != Atom::Type::kGroup) continue;
      if (item.unbounded && nullable_alt(*item.atom.group)) return true;
      if (has_nullable_loop(*item.atom.group)) return true;
    }
  }
  return false;
}

class Emitter {
 public:
  explicit Emitter(const std::function<std::string(const std::string&)>& add_sub_rule)
      : add_sub_rule_(add_sub_rule) {}

  std::string alt(const Alt& a) {
    std::string out;
    for (size_t k = 0; k < a.seqs.size(); ++k) out += (k ? " | " : "") + seq(a.seqs[k]);
    return out;
  }
  bool uses_dot = false;

 private:
  std::string seq(const Seq& s) {
    std::string out, pending;
    auto flush = [&] {
      if (pending.empty()) return;
      append(out, gbnf_literal(pending));
      pending.clear();
    };
    for (const Item& item : s.items) {
      if (item.atom.type == Atom::Type::kChar && !item.quantified) {
        append_utf8(pending, item.atom.cp);
        continue;
      }
      flush();
      append(out, this->item(item));
    }
    flush();
    return out.empty() ? "\"\"" : out;
  }

  static void append(std::string& out, const std::string& part) {
    if (part.empty()) return;
    if (!out.empty()) out += ' ';
    out += part;
  }

  std::string atom(const Atom& a, bool quantified) {
    switch (a.type) {
      case Atom::Type::kChar:
        return gbnf_literal_cp(a.cp);
      case Atom::Type::kDot:
        uses_dot = true;
        return "dot";
      case Atom::Type::kClass: {
        std::string out = a.cls.negated ? "[^" : "[";
        for (const auto& [lo, hi] : a.cls.ranges) {
          out += gbnf_class_member(lo);
          if (hi != lo) out += "-" + gbnf_class_member(hi);
        }
        return out + "]";
      }
      case Atom::Type::kGroup:
        // A repeated group becomes its own rule so that the parser's rule-explosion
        // weight of the repeated item is 1.
        if (quantified) return add_sub_rule_(alt(*a.group));
        return "(" + alt(*a.group) + ")";
    }
    return "";
  }

  std::string item(const Item& it) {
    if (!it.quantified) return atom(it.atom, false);
    if (!it.unbounded && it.max == 0) return "";
    std::string out = atom(it.atom, true);
    if (it.unbounded) {
      if (it.min == 0) return out + "*";
      if (it.min == 1) return out + "+";
      return out + fmt::format("{{{},}}", it.min);
    }
    if (it.min == 0 && it.max == 1) return out + "?";
    if (it.min == it.max) return it.min == 1 ? out : out + fmt::format("{{{}}}", it.min);
    return out + fmt::format("{{{},{}}}", it.min, it.max);
  }

  const std::function<std::string(const std::string&)>& add_sub_rule_;
};

}  // namespace

PatternOutcome convert_pattern(std::string_view pattern,
                               const std::function<std::string(const std::string&)>& add_sub_rule,
                               int max_repetitions) {
  if (pattern.size() < 2 || pattern.front() != '^' || pattern.back() != '$') {
    return PatternOutcome{Kind::kUnsupported, "pattern must start with '^' and end with '$'", "",
                          false};
  }
  const uint64_t cap = static_cast<uint64_t>(max_repetitions > 1 ? max_repetitions : 2);
  Alt tree;
  PatternOutcome outcome =
      RegexParser(decode_utf8(pattern.substr(1, pattern.size() - 2)), cap).parse(tree);
  if (outcome.kind != Kind::kOk) return outcome;
  if (has_nullable_loop(tree)) {
    return PatternOutcome{Kind::kUnsupported,
                          "unbounded repetition of a group that can match the empty string", "",
                          false};
  }
  Emitter emitter(add_sub_rule);
  outcome.body = "\"\\\"\" (" + emitter.alt(tree) + ") \"\\\"\"";
  outcome.uses_dot = emitter.uses_dot;
  return outcome;
}

}  // namespace hearth::json_schema::detail
