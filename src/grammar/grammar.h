// GBNF grammars as llama-server reads them (spec: llama-server/grammar.md sections 1-2):
// a parser with positioned errors and hard limits, an immutable compiled grammar, the
// decoded token pieces of a vocabulary, and a matcher that tracks which tokens the grammar
// allows next (a set of pushdown stacks over Unicode code points, partial UTF-8 carried
// across tokens).
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"

namespace hearth::grammar {

// Bounds that keep a hostile grammar from exhausting memory, stack or time.
struct Limits {
  size_t max_text_bytes = 1 << 20;  // grammar source size
  int32_t max_rules = 20000;        // rules after expanding repetitions
  int32_t max_nesting = 128;        // depth of ( ... ) groups
  int32_t max_repetitions = 2000;   // the reference's cap on {m,n} counts and rule explosion
  size_t max_stacks = 4096;         // matcher: live stacks after any step
  // Elements (terminals and rule references) after expanding repetitions: a long literal
  // repeated 1999 times, or many such, would otherwise grow to gigabytes.
  size_t max_elements = 1 << 22;
};

// Tokenizes text with special-token parsing; used for <TEXT> token references.
using TokenizeFn = std::function<std::vector<int32_t>(std::string_view)>;

class Grammar;  // compiled, immutable, shareable between requests

// Parses and validates (undefined rules, missing root, left recursion, limits). Errors are
// kInvalidArgument with a message naming line, column and reason, e.g.
// "line 2, column 9: expecting newline or end". <TEXT> needs `tokenize` (an error without).
Result<std::shared_ptr<const Grammar>> parse(std::string_view gbnf,
                                             const TokenizeFn& tokenize = nullptr,
                                             const Limits& limits = {});

// A vocabulary's pieces (special tokens rendered as text), decoded once per model.
class TokenTable {
 public:
  TokenTable(int32_t n_vocab, const std::function<std::string(int32_t)>& piece,
             const std::function<bool(int32_t)>& is_eog);
  ~TokenTable();
  int32_t n_vocab() const;
  struct Impl;
  const Impl& impl() const { return *impl_; }

 private:
  std::unique_ptr<Impl> impl_;
};

class Matcher {
 public:
  // `tokens` may be null for a text-only matcher (accept_text, can_end).
  Matcher(std::shared_ptr<const Grammar> grammar, std::shared_ptr<const TokenTable> tokens,
          const Limits& limits = {});
  ~Matcher();
  Matcher(Matcher&&) noexcept;
  Matcher& operator=(Matcher&&) noexcept;

  // Whether `token` may come next (EOG tokens: only where the grammar can end).
  bool allows(int32_t token) const;
  // out[i] = allows(ids[i]), sharing work between tokens with common prefixes.
  void allowed(std::span<const int32_t> ids, std::span<uint8_t> out) const;
  // Advances past `token`. kInvalidArgument when no stack survives (the state is then left
  // unchanged) or when the stacks would exceed Limits::max_stacks.
  Status accept(int32_t token);
  // Advances past raw text (code points; partial UTF-8 carried). For lazy-grammar replay
  // and tests. Same errors as accept().
  Status accept_text(std::string_view bytes);
  // Some path is complete (an end-of-generation token is allowed now).
  bool can_end() const;
  // Not ok when the initial stacks already exceeded Limits::max_stacks; such a matcher
  // allows nothing and every accept returns this error.
  Status status() const;
  // The last allows()/allowed() refused some token only because checking it passed
  // Limits::max_stacks (or status() is not ok): the grammar is too large here, which is
  // not the same as the grammar allowing nothing.
  bool overflowed() const;
  size_t max_stacks() const;

 private:
  struct State;
  std::unique_ptr<State> state_;
};

// True when the whole of `text` is a sentence of the grammar (for tests and tools).
bool accepts(const std::shared_ptr<const Grammar>& grammar, std::string_view text);

}  // namespace hearth::grammar
