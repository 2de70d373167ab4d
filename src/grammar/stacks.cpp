#include "grammar/stacks.h"

#include <algorithm>

namespace hearth::grammar::detail {

StackStore::StackStore(const StackStore* base)
    : base_(base), first_id_(base ? static_cast<uint32_t>(base->end_id()) : 0) {}

const uint32_t* StackStore::find(uint64_t k) const {
  if (base_) {
    if (const uint32_t* id = base_->find(k)) return id;
  }
  auto it = index_.find(k);
  return it == index_.end() ? nullptr : &it->second;
}

uint32_t StackStore::make(uint32_t position, uint32_t below) {
  const uint64_t k = key(position, below);
  if (const uint32_t* id = find(k)) return *id;
  const auto id = static_cast<uint32_t>(end_id());
  nodes_.push_back(Node{position, below});
  index_.emplace(k, id);
  return id;
}

void StackStore::compact(std::vector<uint32_t>& stacks) {
  StackStore fresh;
  std::unordered_map<uint32_t, uint32_t> renamed;
  std::vector<uint32_t> chain;
  for (uint32_t& stack : stacks) {
    // Collect the not yet copied part of this stack, then copy it bottom-up.
    chain.clear();
    uint32_t id = stack;
    while (id != kEmptyStack && !renamed.contains(id)) {
      chain.push_back(id);
      id = node(id).below;
    }
    uint32_t below = id == kEmptyStack ? kEmptyStack : renamed[id];
    for (auto it = chain.rbegin(); it != chain.rend(); ++it) {
      below = fresh.make(node(*it).position, below);
      renamed.emplace(*it, below);
    }
    if (stack != kEmptyStack) stack = renamed[stack];
  }
  *this = std::move(fresh);
}

Stepper::Stepper(const Grammar& grammar, StackStore& store, size_t max_stacks)
    : grammar_(grammar),
      store_(store),
      max_stacks_(max_stacks),
      // Expansion visits each distinct intermediate stack once; without left recursion
      // their number is bounded by the grammar, but a hostile grammar can make it large.
      expand_budget_(std::max<size_t>(max_stacks * 16, 1 << 16)) {}

bool Stepper::expand(uint32_t stack, std::vector<uint32_t>& out) {
  work_.clear();
  seen_.clear();
  work_.push_back(stack);
  const size_t out_start = out.size();
  while (!work_.empty()) {
    const uint32_t s = work_.back();
    work_.pop_back();
    if (!seen_.insert(s).second) continue;
    if (seen_.size() > expand_budget_ || out.size() - out_start > max_stacks_) return false;
    if (s == kEmptyStack) {
      out.push_back(s);
      continue;
    }
    const StackStore::Node node = store_.node(s);
    const Symbol& symbol = grammar_.symbols[node.position];
    if (symbol.kind != SymbolKind::kRuleRef) {
      out.push_back(s);
      continue;
    }
    // Replace the reference by what follows it, then push each alternative's first symbol.
    const bool last_in_sequence = grammar_.symbols[node.position + 1].kind == SymbolKind::kEnd;
    const uint32_t rest =
        last_in_sequence ? node.below : store_.make(node.position + 1, node.below);
    for (const uint32_t start : grammar_.alternatives(symbol.value)) {
      const bool empty_alternative = grammar_.symbols[start].kind == SymbolKind::kEnd;
      work_.push_back(empty_alternative ? rest : store_.make(start, rest));
    }
  }
  return out.size() - out_start <= max_stacks_;
}

const std::vector<uint32_t>* Stepper::successors(uint32_t stack) {
  auto [it, inserted] = successors_.try_emplace(stack);
  if (!inserted) return it->second.overflow ? nullptr : &it->second.stacks;
  const StackStore::Node node = store_.node(stack);
  const bool last_in_sequence = grammar_.symbols[node.position + 1].kind == SymbolKind::kEnd;
  const uint32_t rest = last_in_sequence ? node.below : store_.make(node.position + 1, node.below);
  // `it` stays valid: unordered_map never moves its elements.
  it->second.overflow = !expand(rest, it->second.stacks);
  // Sorted once here, so a step fed by a single stack needs no sort of its own.
  std::sort(it->second.stacks.begin(), it->second.stacks.end());
  return it->second.overflow ? nullptr : &it->second.stacks;
}

bool Stepper::finish_step(std::vector<uint32_t>& out, size_t n_sources) const {
  if (n_sources > 1) {
    std::sort(out.begin(), out.end());
    out.erase(std::unique(out.begin(), out.end()), out.end());
  }
  return out.size() <= max_stacks_;
}

bool Stepper::step_char(std::span<const uint32_t> in, uint32_t cp, std::vector<uint32_t>& out) {
  out.clear();
  size_t n_sources = 0;
  for (const uint32_t s : in) {
    if (s == kEmptyStack) continue;
    const Symbol& symbol = top(s);
    if (!is_char_terminal(symbol.kind) || !grammar_.char_matches(symbol, cp)) continue;
    const std::vector<uint32_t>* next = successors(s);
    if (!next) return false;
    out.insert(out.end(), next->begin(), next->end());
    ++n_sources;
  }
  return finish_step(out, n_sources);
}

bool Stepper::step_token(std::span<const uint32_t> in, int32_t token, std::vector<uint32_t>& out) {
  out.clear();
  size_t n_sources = 0;
  const auto id = static_cast<uint32_t>(token);
  for (const uint32_t s : in) {
    if (s == kEmptyStack) continue;
    const Symbol& symbol = top(s);
    const bool match = (symbol.kind == SymbolKind::kToken && symbol.value == id) ||
                       (symbol.kind == SymbolKind::kTokenNot && symbol.value != id);
    if (!match) continue;
    const std::vector<uint32_t>* next = successors(s);
    if (!next) return false;
    out.insert(out.end(), next->begin(), next->end());
    ++n_sources;
  }
  return finish_step(out, n_sources);
}

bool Stepper::any_char_top_intersects(std::span<const uint32_t> stacks, uint32_t lo,
                                      uint32_t hi) const {
  return std::any_of(stacks.begin(), stacks.end(), [&](uint32_t s) {
    if (s == kEmptyStack) return false;
    const Symbol& symbol = top(s);
    return is_char_terminal(symbol.kind) && grammar_.char_intersects(symbol, lo, hi);
  });
}

void Stepper::keep_char_tops_intersecting(std::vector<uint32_t>& stacks, uint32_t lo,
                                          uint32_t hi) const {
  std::erase_if(stacks, [&](uint32_t s) {
    return !any_char_top_intersects(std::span<const uint32_t>(&s, 1), lo, hi);
  });
}

}  // namespace hearth::grammar::detail

namespace hearth::grammar::detail {

size_t StackSets::Hash::operator()(const std::vector<uint32_t>& v) const {
  uint64_t h = 0x9E3779B97F4A7C15ull ^ v.size();
  for (const uint32_t x : v) h = (h ^ x) * 0x100000001B3ull;
  return static_cast<size_t>(h ^ (h >> 29));
}

uint32_t StackSets::intern(std::vector<uint32_t> stacks) {
  if (stacks.empty()) return kDead;
  auto it = ids_.find(stacks);
  if (it != ids_.end()) return it->second;
  Set set;
  for (const uint32_t s : stacks) {
    if (s == kEmptyStack) continue;
    const Symbol& top = stepper_.top(s);
    if (is_char_terminal(top.kind)) set.char_tops.emplace_back(top, s);
  }
  const auto id = static_cast<uint32_t>(sets_.size());
  set.stacks = stacks;
  sets_.push_back(std::move(set));
  ids_.emplace(std::move(stacks), id);
  return id;
}

// Without a usable mask (more than 64 char terminals) every cp is computed afresh.
uint32_t StackSets::union_of_successors(const Set& set, uint64_t mask, uint32_t cp) {
  if (set.char_tops.size() > 64) {
    std::vector<uint32_t> in;
    for (const auto& [top, stack] : set.char_tops) in.push_back(stack);
    if (!stepper_.step_char(in, cp, scratch_)) {
      overflowed_ = true;
      return kDead;
    }
    return intern(scratch_);
  }
  std::vector<uint32_t> out;
  size_t n_sources = 0;
  for (size_t i = 0; i < set.char_tops.size(); ++i) {
    if (!(mask >> i & 1)) continue;
    const std::vector<uint32_t>* next = stepper_.successors(set.char_tops[i].second);
    if (!next) {
      overflowed_ = true;
      return kDead;
    }
    out.insert(out.end(), next->begin(), next->end());
    ++n_sources;
  }
  if (n_sources > 1) {
    std::sort(out.begin(), out.end());
    out.erase(std::unique(out.begin(), out.end()), out.end());
  }
  if (out.size() > stepper_.max_stacks()) {
    overflowed_ = true;
    return kDead;
  }
  return intern(std::move(out));
}

// Most pieces are ASCII text, so ASCII transitions get a direct table.
uint32_t StackSets::after_char(uint32_t set_id, uint32_t cp) {
  if (cp >= 128) return compute_after_char(set_id, cp);
  std::vector<uint32_t>& table = sets_[set_id].by_ascii;
  if (table.empty()) table.assign(128, kUnknown);
  if (table[cp] != kUnknown) return table[cp];
  const uint32_t next = compute_after_char(set_id, cp);
  sets_[set_id].by_ascii[cp] = next;  // `table` may dangle: interning can move sets_
  return next;
}

uint32_t StackSets::compute_after_char(uint32_t set_id, uint32_t cp) {
  const Grammar& grammar = stepper_.grammar();
  const Set& set = sets_[set_id];
  uint64_t mask = 0;
  const size_t n = std::min<size_t>(set.char_tops.size(), 64);
  for (size_t i = 0; i < n; ++i) {
    if (grammar.char_matches(set.char_tops[i].first, cp)) mask |= uint64_t{1} << i;
  }
  if (set.char_tops.size() > 64) return union_of_successors(set, 0, cp);
  if (mask == 0) return kDead;
  for (const auto& [known, next] : set.by_mask) {
    if (known == mask) return next;
  }
  const uint32_t next = union_of_successors(set, mask, cp);
  // `set` may have moved while interning; cache through the index. Bounded so a set with
  // many distinct masks cannot make this lookup slow.
  if (sets_[set_id].by_mask.size() < 32) sets_[set_id].by_mask.emplace_back(mask, next);
  return next;
}

bool StackSets::char_top_intersects(uint32_t set, uint32_t lo, uint32_t hi) const {
  const Grammar& grammar = stepper_.grammar();
  for (const auto& [top, stack] : sets_[set].char_tops) {
    if (grammar.char_intersects(top, lo, hi)) return true;
  }
  return false;
}

}  // namespace hearth::grammar::detail
