// Matcher (grammar.md 2.1-2.4): the set of stacks, the partial UTF-8 state, and the allowed
// scan over a vocabulary.
#include <algorithm>

#include "grammar/compiled.h"
#include "grammar/grammar.h"
#include "grammar/stacks.h"
#include "grammar/token_table.h"
#include "grammar/utf8.h"

namespace hearth::grammar {

using detail::kEmptyStack;
using detail::StackStore;
using detail::Stepper;
using detail::Utf8Partial;

namespace {

// Matcher::State is private to Matcher; the helpers below work on this base instead.
struct MatcherCore {
  std::shared_ptr<const Grammar> grammar;
  std::shared_ptr<const TokenTable> tokens;
  Limits limits;
  StackStore store;
  std::vector<uint32_t> stacks;  // sorted, distinct
  Utf8Partial partial;           // an incomplete character from the last accepted bytes
  Status broken;                 // set when even the initial stacks exceed the limits
  size_t live_nodes = 0;         // store size after the last compaction
  // The last allows()/allowed() passed the stack limit on some token (mutable: a query's
  // by-product, reported by overflowed()).
  mutable bool last_scan_overflowed = false;

  bool can_end() const {
    return !partial.pending() && !stacks.empty() && stacks.back() == kEmptyStack;
  }
};

// A limit of the request's grammar, not a token it refuses.
Status too_many_stacks(const Limits& limits) {
  return error(
      ErrorCode::kResourceExhausted,
      "grammar too ambiguous: more than " + std::to_string(limits.max_stacks) + " matcher stacks");
}

enum class Advance { kAlive, kDead, kOverflow };

// Walks `stacks` through `cps`, then keeps only stacks that can take the incomplete
// character `tail` (if any) next. `stacks` holds the survivors.
Advance advance_chars(Stepper& stepper, std::vector<uint32_t>& stacks,
                      std::span<const uint32_t> cps, const Utf8Partial& tail,
                      std::vector<uint32_t>& scratch) {
  for (const uint32_t cp : cps) {
    if (!stepper.step_char(stacks, cp, scratch)) return Advance::kOverflow;
    stacks.swap(scratch);
    if (stacks.empty()) return Advance::kDead;
  }
  if (tail.pending()) {
    const auto [lo, hi] = tail.possible_range();
    stepper.keep_char_tops_intersecting(stacks, lo, hi);
  }
  return stacks.empty() ? Advance::kDead : Advance::kAlive;
}

// Decodes `bytes` continuing `state`; false on invalid UTF-8.
bool decode_from(Utf8Partial& state, std::string_view bytes, std::vector<uint32_t>& cps) {
  cps.clear();
  for (const char c : bytes) {
    uint32_t cp = 0;
    const auto step = detail::utf8_push(state, static_cast<uint8_t>(c), cp);
    if (step == detail::Utf8Step::kInvalid) return false;
    if (step == detail::Utf8Step::kComplete) cps.push_back(cp);
  }
  return true;
}

// One read-only pass over the matcher state: new stack nodes go into an overlay store, and
// interned stack sets with cached transitions are shared between all tokens looked at.
class Scan {
 public:
  explicit Scan(const MatcherCore& state)
      : state_(state),
        table_(state.tokens->impl()),
        overlay_(&state.store),
        stepper_(*state.grammar, overlay_, state.limits.max_stacks),
        sets_(stepper_),
        start_(sets_.intern(state.stacks)) {}

  bool allows(int32_t id);
  // result[id] = allows(id) for the whole vocabulary, walking the trie of pieces.
  void whole_vocabulary(std::vector<uint8_t>& result);
  // Some token was refused because the stack limit was passed while checking it.
  bool overflowed() const { return sets_.overflowed(); }

 private:
  bool token_terminal_allows(int32_t id) const;
  void allow_token_terminals(std::vector<uint8_t>& result) const;
  // Whether the text `cps` + `tail` can follow from the current stacks.
  bool chars_allowed(std::span<const uint32_t> cps, const Utf8Partial& tail);
  bool tail_allowed(uint32_t set, const Utf8Partial& tail) const;
  void walk_trie(std::vector<uint8_t>& result);

  const MatcherCore& state_;
  const TokenTable::Impl& table_;
  StackStore overlay_;
  Stepper stepper_;
  detail::StackSets sets_;
  uint32_t start_;
  std::vector<uint32_t> cps_;
};

bool Scan::token_terminal_allows(int32_t id) const {
  return std::any_of(state_.stacks.begin(), state_.stacks.end(), [&](uint32_t s) {
    if (s == kEmptyStack) return false;
    const detail::Symbol& top = stepper_.top(s);
    return (top.kind == detail::SymbolKind::kToken && top.value == static_cast<uint32_t>(id)) ||
           (top.kind == detail::SymbolKind::kTokenNot && top.value != static_cast<uint32_t>(id));
  });
}

bool Scan::tail_allowed(uint32_t set, const Utf8Partial& tail) const {
  if (!tail.pending()) return true;
  const auto [lo, hi] = tail.possible_range();
  return sets_.char_top_intersects(set, lo, hi);
}

bool Scan::chars_allowed(std::span<const uint32_t> cps, const Utf8Partial& tail) {
  uint32_t set = start_;
  for (const uint32_t cp : cps) {
    if (set == detail::StackSets::kDead) return false;
    set = sets_.after_char(set, cp);
  }
  return set != detail::StackSets::kDead && tail_allowed(set, tail);
}

bool Scan::allows(int32_t id) {
  if (id < 0 || id >= table_.n_vocab) return false;
  const TokenTable::Impl::Token& token = table_.tokens[id];
  if (token.flags & TokenTable::Impl::kEog) return state_.can_end();
  if (token.flags & TokenTable::Impl::kUnusable) return false;
  if (!state_.partial.pending()) {
    if (token.flags & TokenTable::Impl::kInvalid) return false;
    return token_terminal_allows(id) || chars_allowed(table_.cps(token), token.tail);
  }
  Utf8Partial tail = state_.partial;
  if (!decode_from(tail, table_.piece(token), cps_)) return false;
  return chars_allowed(cps_, tail);
}

// Token terminals match by id alone, whatever the piece: <[ID]> allows that token and
// !<[ID]> every other plain one.
void Scan::allow_token_terminals(std::vector<uint8_t>& result) const {
  std::vector<uint32_t> excluded;
  for (const uint32_t s : state_.stacks) {
    if (s == kEmptyStack) continue;
    const detail::Symbol& top = stepper_.top(s);
    if (top.kind == detail::SymbolKind::kToken) {
      if (top.value < static_cast<uint32_t>(table_.n_vocab) &&
          table_.is_plain(table_.tokens[top.value])) {
        result[top.value] = 1;
      }
    } else if (top.kind == detail::SymbolKind::kTokenNot) {
      if (std::find(excluded.begin(), excluded.end(), top.value) == excluded.end()) {
        excluded.push_back(top.value);
      }
    }
  }
  if (excluded.empty()) return;
  // With two different exclusions every token is allowed by one of them.
  const uint32_t only_excluded = excluded.size() == 1 ? excluded[0] : UINT32_MAX;
  for (int32_t id = 0; id < table_.n_vocab; ++id) {
    if (static_cast<uint32_t>(id) != only_excluded && table_.is_plain(table_.tokens[id])) {
      result[id] = 1;
    }
  }
}

void Scan::whole_vocabulary(std::vector<uint8_t>& result) {
  result.assign(static_cast<size_t>(table_.n_vocab), 0);
  const uint8_t eog_allowed = state_.can_end() ? 1 : 0;
  for (const int32_t id : table_.eog_tokens) result[id] = eog_allowed;
  allow_token_terminals(result);
  walk_trie(result);
}

// Depth-first over the trie, carrying the set of stacks that survive each prefix; a subtree
// is skipped as soon as no stack survives its prefix. An overflow counts as no match: a
// token is only allowed when it can be verified.
void Scan::walk_trie(std::vector<uint8_t>& result) {
  if (start_ == detail::StackSets::kDead) return;
  std::vector<std::pair<uint32_t, uint32_t>> frames{{0, start_}};  // trie node, stack set
  while (!frames.empty()) {
    const auto [node_id, set] = frames.back();
    frames.pop_back();
    const TokenTable::Impl::TrieNode& node = table_.trie[node_id];
    for (uint32_t i = node.tokens_begin; i < node.tokens_end; ++i) {
      const TokenTable::Impl::TrieToken& token = table_.trie_tokens[i];
      // The root holds only pieces with no complete character, which need the tail check.
      if (tail_allowed(set, token.tail)) result[token.id] = 1;
    }
    for (uint32_t child = node.children_begin; child < node.children_end; ++child) {
      const uint32_t next = sets_.after_char(set, table_.trie[child].cp);
      if (next != detail::StackSets::kDead) frames.emplace_back(child, next);
    }
  }
}

}  // namespace

struct Matcher::State : MatcherCore {};

Matcher::Matcher(std::shared_ptr<const Grammar> grammar, std::shared_ptr<const TokenTable> tokens,
                 const Limits& limits)
    : state_(std::make_unique<State>()) {
  State& s = *state_;
  s.grammar = std::move(grammar);
  s.tokens = std::move(tokens);
  s.limits = limits;
  Stepper stepper(*s.grammar, s.store, limits.max_stacks);
  for (const uint32_t start : s.grammar->alternatives(s.grammar->root)) {
    bool ok = true;
    if (s.grammar->symbols[start].kind == detail::SymbolKind::kEnd) {
      s.stacks.push_back(kEmptyStack);
    } else {
      ok = stepper.expand(s.store.make(start, kEmptyStack), s.stacks);
    }
    std::sort(s.stacks.begin(), s.stacks.end());
    s.stacks.erase(std::unique(s.stacks.begin(), s.stacks.end()), s.stacks.end());
    if (!ok || s.stacks.size() > limits.max_stacks) {
      s.broken = too_many_stacks(limits);
      s.stacks.clear();
      break;
    }
  }
  s.live_nodes = s.store.end_id();
}

Matcher::~Matcher() = default;
Matcher::Matcher(Matcher&&) noexcept = default;
Matcher& Matcher::operator=(Matcher&&) noexcept = default;

Status Matcher::status() const {
  return state_->broken;
}

size_t Matcher::max_stacks() const {
  return state_->limits.max_stacks;
}

bool Matcher::can_end() const {
  return state_->can_end();
}

bool Matcher::allows(int32_t token) const {
  if (!state_->broken.is_ok() || !state_->tokens) return false;
  Scan scan(*state_);
  const bool allowed = scan.allows(token);
  state_->last_scan_overflowed = scan.overflowed();
  return allowed;
}

bool Matcher::overflowed() const {
  return !state_->broken.is_ok() || state_->last_scan_overflowed;
}

void Matcher::allowed(std::span<const int32_t> ids, std::span<uint8_t> out) const {
  const size_t n = std::min(ids.size(), out.size());
  if (!state_->broken.is_ok() || !state_->tokens) {
    std::fill(out.begin(), out.begin() + static_cast<ptrdiff_t>(n), 0);
    return;
  }
  Scan scan(*state_);
  const int32_t n_vocab = state_->tokens->n_vocab();
  // The trie walk costs about the same whatever the number of ids; for a few candidates,
  // or when a pending partial character makes the pre-decoded pieces useless, go one by one.
  if (state_->partial.pending() || n * 8 < static_cast<size_t>(n_vocab)) {
    for (size_t i = 0; i < n; ++i) out[i] = scan.allows(ids[i]) ? 1 : 0;
    state_->last_scan_overflowed = scan.overflowed();
    return;
  }
  std::vector<uint8_t> all;
  scan.whole_vocabulary(all);
  state_->last_scan_overflowed = scan.overflowed();
  for (size_t i = 0; i < n; ++i) {
    out[i] = (ids[i] >= 0 && ids[i] < n_vocab) ? all[static_cast<size_t>(ids[i])] : 0;
  }
}

namespace {

Status no_match(const std::string& what) {
  return error(ErrorCode::kInvalidArgument, what + " does not match the grammar here");
}

// Installs the new state; rebuilds the store once unreachable nodes dominate it.
void commit(MatcherCore& s, std::vector<uint32_t> stacks, const Utf8Partial& partial) {
  s.stacks = std::move(stacks);
  s.partial = partial;
  if (s.store.end_id() > 4 * s.live_nodes + 65536) {
    s.store.compact(s.stacks);
    std::sort(s.stacks.begin(), s.stacks.end());
    s.live_nodes = s.store.end_id();
  }
}

}  // namespace

Status Matcher::accept(int32_t token) {
  State& s = *state_;
  if (!s.broken.is_ok()) return s.broken;
  if (!s.tokens) return error(ErrorCode::kInvalidArgument, "accept(token) needs a token table");
  const TokenTable::Impl& table = s.tokens->impl();
  const std::string name = "token " + std::to_string(token);
  if (token < 0 || token >= table.n_vocab) {
    return error(ErrorCode::kInvalidArgument, name + " is outside the vocabulary");
  }
  const TokenTable::Impl::Token& t = table.tokens[token];
  if (t.flags & TokenTable::Impl::kEog) {
    if (s.can_end()) return Status::ok();
    return error(ErrorCode::kInvalidArgument, "end of generation before the grammar is complete");
  }
  if (t.flags & TokenTable::Impl::kUnusable) return no_match(name + " (empty piece)");
  Stepper stepper(*s.grammar, s.store, s.limits.max_stacks);
  std::vector<uint32_t> by_token, by_chars = s.stacks, scratch, decoded;
  Utf8Partial tail = s.partial;
  std::span<const uint32_t> cps;
  if (!s.partial.pending()) {
    if (t.flags & TokenTable::Impl::kInvalid) return no_match(name + " (invalid UTF-8)");
    if (!stepper.step_token(s.stacks, token, by_token)) return too_many_stacks(s.limits);
    cps = table.cps(t);
    tail = t.tail;
  } else {
    if (!decode_from(tail, table.piece(t), decoded)) return no_match(name + " (invalid UTF-8)");
    cps = decoded;
  }
  const Advance advance = advance_chars(stepper, by_chars, cps, tail, scratch);
  if (advance == Advance::kOverflow) return too_many_stacks(s.limits);
  if (advance == Advance::kDead) by_chars.clear();
  // A pending partial character belongs to the paths that consumed the text; a path that
  // took the token whole could not continue it, so only one kind of path survives.
  if (tail.pending() && !by_chars.empty()) by_token.clear();
  if (by_chars.empty()) tail = Utf8Partial{};
  by_chars.insert(by_chars.end(), by_token.begin(), by_token.end());
  std::sort(by_chars.begin(), by_chars.end());
  by_chars.erase(std::unique(by_chars.begin(), by_chars.end()), by_chars.end());
  if (by_chars.size() > s.limits.max_stacks) return too_many_stacks(s.limits);
  if (by_chars.empty()) return no_match(name);
  commit(s, std::move(by_chars), tail);
  return Status::ok();
}

Status Matcher::accept_text(std::string_view bytes) {
  State& s = *state_;
  if (!s.broken.is_ok()) return s.broken;
  Utf8Partial tail = s.partial;
  std::vector<uint32_t> cps;
  if (!decode_from(tail, bytes, cps)) return no_match("text (invalid UTF-8)");
  Stepper stepper(*s.grammar, s.store, s.limits.max_stacks);
  std::vector<uint32_t> stacks = s.stacks, scratch;
  const Advance advance = advance_chars(stepper, stacks, cps, tail, scratch);
  if (advance == Advance::kOverflow) return too_many_stacks(s.limits);
  if (advance == Advance::kDead) return no_match("text");
  commit(s, std::move(stacks), tail);
  return Status::ok();
}

bool accepts(const std::shared_ptr<const Grammar>& grammar, std::string_view text) {
  if (!grammar) return false;
  Matcher matcher(grammar, nullptr);
  return matcher.accept_text(text).is_ok() && matcher.can_end();
}

}  // namespace hearth::grammar
