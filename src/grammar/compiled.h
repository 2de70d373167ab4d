// The compiled form of a grammar, shared by the parser (which builds it) and the matcher
// (which walks it). Internal to hearth_grammar and its tests.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "grammar/grammar.h"

namespace hearth::grammar::detail {

enum class SymbolKind : uint8_t {
  kEnd,       // closes an alternative
  kRuleRef,   // value: rule id
  kChar,      // value: the one code point matched (the common case, kept cheap)
  kClass,     // value: index into Grammar::classes
  kToken,     // value: token id
  kTokenNot,  // value: the token id not matched
};

struct Symbol {
  SymbolKind kind = SymbolKind::kEnd;
  uint32_t value = 0;
  bool operator==(const Symbol&) const = default;
};

inline bool is_char_terminal(SymbolKind kind) {
  return kind == SymbolKind::kChar || kind == SymbolKind::kClass;
}
inline bool is_token_terminal(SymbolKind kind) {
  return kind == SymbolKind::kToken || kind == SymbolKind::kTokenNot;
}

// A set of code points: sorted, disjoint, non-adjacent inclusive ranges, maybe negated.
struct CharClass {
  bool negated = false;
  std::vector<std::pair<uint32_t, uint32_t>> ranges;

  // Sorts and merges `ranges`, dropping empty ones (a reversed range like z-a).
  void normalize();
  bool contains(uint32_t cp) const;
  // Some code point in [lo, hi] is a member.
  bool intersects(uint32_t lo, uint32_t hi) const;
};

// One rule before flattening: alternatives of symbol sequences (no kEnd inside).
struct ParsedRule {
  bool defined = false;
  std::vector<std::vector<Symbol>> alternatives;
};

// What the parser produces; compile() validates it and lays it out for matching.
struct ParsedGrammar {
  std::vector<std::string> names;  // by rule id; synthesized ones look like "root_3"
  std::vector<ParsedRule> rules;   // by rule id
  std::vector<CharClass> classes;
};

}  // namespace hearth::grammar::detail

namespace hearth::grammar {

class Grammar {
 public:
  // Every alternative of every rule, each terminated by a kEnd symbol; a matcher position is
  // an index into this array.
  std::vector<detail::Symbol> symbols;
  // Alternatives of rule r start at alternative_starts[rule_begin[r] .. rule_begin[r + 1]).
  std::vector<uint32_t> rule_begin;
  std::vector<uint32_t> alternative_starts;
  std::vector<detail::CharClass> classes;
  std::vector<std::string> rule_names;
  uint32_t root = 0;

  size_t rule_count() const { return rule_names.size(); }
  std::span<const uint32_t> alternatives(uint32_t rule) const {
    return std::span<const uint32_t>(alternative_starts)
        .subspan(rule_begin[rule], rule_begin[rule + 1] - rule_begin[rule]);
  }
  bool char_matches(const detail::Symbol& symbol, uint32_t cp) const {
    if (symbol.kind == detail::SymbolKind::kChar) return symbol.value == cp;
    return classes[symbol.value].contains(cp);
  }
  // The char terminal `symbol` accepts some code point in [lo, hi].
  bool char_intersects(const detail::Symbol& symbol, uint32_t lo, uint32_t hi) const {
    if (symbol.kind == detail::SymbolKind::kChar) return lo <= symbol.value && symbol.value <= hi;
    return classes[symbol.value].intersects(lo, hi);
  }
};

namespace detail {

// Validates (undefined rules, missing root, left recursion) and flattens.
Result<std::shared_ptr<const Grammar>> compile(ParsedGrammar parsed);

}  // namespace detail
}  // namespace hearth::grammar
