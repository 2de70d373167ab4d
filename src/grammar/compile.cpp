// ParsedGrammar -> Grammar: the load-time checks of grammar.md 1.3 and the flat layout the
// matcher walks. Everything here is iterative: a grammar may hold max_rules rules chained
// through each other, and a recursive walk of that chain could exhaust the C++ stack.
#include <algorithm>
#include <deque>

#include "grammar/compiled.h"

namespace hearth::grammar::detail {

void CharClass::normalize() {
  std::erase_if(ranges, [](const auto& r) { return r.first > r.second; });
  std::sort(ranges.begin(), ranges.end());
  std::vector<std::pair<uint32_t, uint32_t>> merged;
  for (const auto& r : ranges) {
    if (!merged.empty() && merged.back().second != UINT32_MAX &&
        r.first <= merged.back().second + 1) {
      merged.back().second = std::max(merged.back().second, r.second);
    } else {
      merged.push_back(r);
    }
  }
  ranges = std::move(merged);
}

bool CharClass::contains(uint32_t cp) const {
  // First range whose upper bound is >= cp.
  auto it = std::lower_bound(ranges.begin(), ranges.end(), cp,
                             [](const auto& r, uint32_t value) { return r.second < value; });
  const bool inside = it != ranges.end() && it->first <= cp;
  return inside != negated;
}

bool CharClass::intersects(uint32_t lo, uint32_t hi) const {
  auto it = std::lower_bound(ranges.begin(), ranges.end(), lo,
                             [](const auto& r, uint32_t value) { return r.second < value; });
  if (!negated) return it != ranges.end() && it->first <= hi;
  // Ranges are merged, so [lo, hi] is fully excluded only if a single range covers it.
  const bool covered = it != ranges.end() && it->first <= lo && hi <= it->second;
  return !covered;
}

namespace {

Status check_defined(const ParsedGrammar& g) {
  for (const ParsedRule& rule : g.rules) {
    for (const auto& alternative : rule.alternatives) {
      for (const Symbol& s : alternative) {
        if (s.kind == SymbolKind::kRuleRef && !g.rules[s.value].defined) {
          return error(ErrorCode::kInvalidArgument,
                       "Undefined rule identifier '" + g.names[s.value] + "'");
        }
      }
    }
  }
  return Status::ok();
}

// Rules that can derive the empty string, by a worklist over "symbols not yet known to be
// nullable" per alternative (linear in the grammar size).
std::vector<bool> nullable_rules(const ParsedGrammar& g) {
  const size_t n = g.rules.size();
  std::vector<bool> nullable(n, false);
  std::vector<uint32_t> pending;               // per alternative
  std::vector<uint32_t> owner;                 // per alternative
  std::vector<std::vector<uint32_t>> uses(n);  // rule -> alternatives referencing it (per use)
  std::vector<uint32_t> work;
  for (uint32_t r = 0; r < n; ++r) {
    for (const auto& alternative : g.rules[r].alternatives) {
      const bool has_terminal =
          std::any_of(alternative.begin(), alternative.end(),
                      [](const Symbol& s) { return s.kind != SymbolKind::kRuleRef; });
      if (has_terminal) continue;  // a terminal always consumes input
      const auto alt_id = static_cast<uint32_t>(pending.size());
      pending.push_back(static_cast<uint32_t>(alternative.size()));
      owner.push_back(r);
      for (const Symbol& s : alternative) uses[s.value].push_back(alt_id);
      if (alternative.empty() && !nullable[r]) {
        nullable[r] = true;
        work.push_back(r);
      }
    }
  }
  while (!work.empty()) {
    const uint32_t r = work.back();
    work.pop_back();
    for (const uint32_t alt_id : uses[r]) {
      if (--pending[alt_id] == 0 && !nullable[owner[alt_id]]) {
        nullable[owner[alt_id]] = true;
        work.push_back(owner[alt_id]);
      }
    }
  }
  return nullable;
}

// Edges r -> s where s can be the first thing r expands to without consuming input.
std::vector<std::vector<uint32_t>> left_edges(const ParsedGrammar& g,
                                              const std::vector<bool>& nullable) {
  std::vector<std::vector<uint32_t>> edges(g.rules.size());
  for (uint32_t r = 0; r < g.rules.size(); ++r) {
    for (const auto& alternative : g.rules[r].alternatives) {
      for (const Symbol& s : alternative) {
        if (s.kind != SymbolKind::kRuleRef) break;
        edges[r].push_back(s.value);
        if (!nullable[s.value]) break;
      }
    }
  }
  return edges;
}

// Iterative depth-first search for a cycle among left edges.
Status check_left_recursion(const ParsedGrammar& g) {
  const std::vector<bool> nullable = nullable_rules(g);
  const auto edges = left_edges(g, nullable);
  enum : uint8_t { kUnseen, kOnPath, kDone };
  std::vector<uint8_t> color(g.rules.size(), kUnseen);
  std::vector<std::pair<uint32_t, size_t>> path;  // rule, next edge to follow
  for (uint32_t start = 0; start < g.rules.size(); ++start) {
    if (color[start] != kUnseen) continue;
    color[start] = kOnPath;
    path.emplace_back(start, 0);
    while (!path.empty()) {
      auto& [rule, next] = path.back();
      if (next == edges[rule].size()) {
        color[rule] = kDone;
        path.pop_back();
        continue;
      }
      const uint32_t target = edges[rule][next++];
      if (color[target] == kOnPath) {
        return error(ErrorCode::kInvalidArgument,
                     "left recursion detected for rule '" + g.names[target] + "'");
      }
      if (color[target] == kUnseen) {
        color[target] = kOnPath;
        path.emplace_back(target, 0);
      }
    }
  }
  return Status::ok();
}

}  // namespace

Result<std::shared_ptr<const Grammar>> compile(ParsedGrammar parsed) {
  HEARTH_RETURN_IF_ERROR(check_defined(parsed));
  const auto root = std::find(parsed.names.begin(), parsed.names.end(), "root");
  if (root == parsed.names.end() || !parsed.rules[root - parsed.names.begin()].defined) {
    return error(ErrorCode::kInvalidArgument, "grammar does not contain a 'root' rule");
  }
  HEARTH_RETURN_IF_ERROR(check_left_recursion(parsed));

  auto g = std::make_shared<Grammar>();
  g->root = static_cast<uint32_t>(root - parsed.names.begin());
  for (const ParsedRule& rule : parsed.rules) {
    g->rule_begin.push_back(static_cast<uint32_t>(g->alternative_starts.size()));
    for (const auto& alternative : rule.alternatives) {
      g->alternative_starts.push_back(static_cast<uint32_t>(g->symbols.size()));
      g->symbols.insert(g->symbols.end(), alternative.begin(), alternative.end());
      g->symbols.push_back(Symbol{SymbolKind::kEnd, 0});
    }
  }
  g->rule_begin.push_back(static_cast<uint32_t>(g->alternative_starts.size()));
  g->classes = std::move(parsed.classes);
  g->rule_names = std::move(parsed.names);
  return std::shared_ptr<const Grammar>(std::move(g));
}

}  // namespace hearth::grammar::detail
