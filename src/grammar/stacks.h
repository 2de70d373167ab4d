// The matcher's pushdown stacks (grammar.md 2.1) as hash-consed persistent linked lists:
// a stack is the id of its top node, pushing creates (or finds) a node, popping follows the
// `below` link. Equal stacks therefore have equal ids, so de-duplication is an integer
// compare and advancing a stack never copies it.
#pragma once

#include <cstdint>
#include <span>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "grammar/compiled.h"

namespace hearth::grammar::detail {

// The id of the empty stack (the grammar is complete on that path).
inline constexpr uint32_t kEmptyStack = UINT32_MAX;

class StackStore {
 public:
  struct Node {
    uint32_t position;  // index into Grammar::symbols, never a kEnd
    uint32_t below;     // the rest of the stack, kEmptyStack at the bottom
  };

  // A store layered over `base` (read only, must outlive this): new nodes go here, lookups
  // see both, so const callers can push without touching shared state.
  explicit StackStore(const StackStore* base = nullptr);

  uint32_t make(uint32_t position, uint32_t below);
  const Node& node(uint32_t id) const {
    return id < first_id_ ? base_->node(id) : nodes_[id - first_id_];
  }
  size_t end_id() const { return first_id_ + nodes_.size(); }

  // Rebuilds this (base-less) store with only the nodes reachable from `stacks`, renaming
  // the ids in `stacks` in place.
  void compact(std::vector<uint32_t>& stacks);

 private:
  static uint64_t key(uint32_t position, uint32_t below) {
    return (uint64_t{position} << 32) | below;
  }
  const uint32_t* find(uint64_t k) const;

  const StackStore* base_;
  uint32_t first_id_;
  std::vector<Node> nodes_;
  std::unordered_map<uint64_t, uint32_t> index_;
};

// Advances stacks over one grammar. Successor sets are memoized per stack for the lifetime
// of the Stepper: what a stack becomes after its top terminal matched does not depend on
// which code point or token matched it, which is what makes a vocabulary scan cheap.
class Stepper {
 public:
  Stepper(const Grammar& grammar, StackStore& store, size_t max_stacks);

  // Pushes the alternatives of rule references (and pops finished rules) until every
  // resulting stack has a terminal on top or is empty; appends the distinct results to
  // `out`. False when the work exceeds the limits.
  bool expand(uint32_t stack, std::vector<uint32_t>& out);
  // The stacks that follow once the terminal on top of `stack` matched, sorted; null on
  // overflow.
  const std::vector<uint32_t>* successors(uint32_t stack);
  // out = the distinct stacks reached from `in` by consuming `cp` with a char terminal,
  // sorted. False on overflow (more than max_stacks stacks).
  bool step_char(std::span<const uint32_t> in, uint32_t cp, std::vector<uint32_t>& out);
  // out = the distinct stacks reached from `in` by consuming `token` with a token terminal.
  bool step_token(std::span<const uint32_t> in, int32_t token, std::vector<uint32_t>& out);

  const Symbol& top(uint32_t stack) const { return grammar_.symbols[store_.node(stack).position]; }
  // Some stack in `stacks` has a char terminal on top accepting a code point in [lo, hi].
  bool any_char_top_intersects(std::span<const uint32_t> stacks, uint32_t lo, uint32_t hi) const;
  // Keeps the stacks whose char terminal accepts some code point in [lo, hi].
  void keep_char_tops_intersecting(std::vector<uint32_t>& stacks, uint32_t lo, uint32_t hi) const;

  const Grammar& grammar() const { return grammar_; }
  size_t max_stacks() const { return max_stacks_; }

 private:
  bool finish_step(std::vector<uint32_t>& out, size_t n_sources) const;

  const Grammar& grammar_;
  StackStore& store_;
  size_t max_stacks_;
  size_t expand_budget_;
  struct Successors {
    bool overflow = false;
    std::vector<uint32_t> stacks;
  };
  std::unordered_map<uint32_t, Successors> successors_;
  std::vector<uint32_t> work_;
  std::unordered_set<uint32_t> seen_;
};

}  // namespace hearth::grammar::detail

namespace hearth::grammar::detail {

// Interned sets of stacks with memoized transitions, for scans that advance the same few
// sets by many code points (a vocabulary scan). What a set becomes after a code point
// depends only on which of its char terminals accept it, so transitions are cached per
// set by that bit mask; a scan then costs a few terminal tests per code point.
class StackSets {
 public:
  static constexpr uint32_t kDead = UINT32_MAX;

  explicit StackSets(Stepper& stepper) : stepper_(stepper) {}

  // `stacks` sorted and distinct; kDead when empty.
  uint32_t intern(std::vector<uint32_t> stacks);
  // The set reached by consuming `cp`; kDead when no stack survives or on overflow.
  uint32_t after_char(uint32_t set, uint32_t cp);
  // Some char terminal on top of the set accepts a code point in [lo, hi].
  bool char_top_intersects(uint32_t set, uint32_t lo, uint32_t hi) const;
  const std::vector<uint32_t>& stacks(uint32_t set) const { return sets_[set].stacks; }
  // Some after_char() answered kDead because the stack limit was passed, not because no
  // stack survived: a token refused then may have been valid.
  bool overflowed() const { return overflowed_; }

 private:
  struct Set {
    std::vector<uint32_t> stacks;
    std::vector<std::pair<Symbol, uint32_t>> char_tops;  // terminal, stack
    std::vector<std::pair<uint64_t, uint32_t>> by_mask;  // matching char_tops -> set
    std::vector<uint32_t> by_ascii;                      // cp < 128 -> set, kUnknown until computed
  };
  static constexpr uint32_t kUnknown = UINT32_MAX - 1;
  uint32_t compute_after_char(uint32_t set, uint32_t cp);
  struct Hash {
    size_t operator()(const std::vector<uint32_t>& v) const;
  };
  uint32_t union_of_successors(const Set& set, uint64_t mask, uint32_t cp);

  Stepper& stepper_;
  std::vector<Set> sets_;
  std::unordered_map<std::vector<uint32_t>, uint32_t, Hash> ids_;
  std::vector<uint32_t> scratch_;
  bool overflowed_ = false;
};

}  // namespace hearth::grammar::detail
