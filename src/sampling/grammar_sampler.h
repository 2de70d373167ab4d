// The grammar inside a sampling step (sampling.md 2.3, grammar.md 2-3): masks the tokens a
// GBNF grammar does not allow, advances the grammar on accepted tokens, and for a lazy
// grammar waits for a trigger (a trigger token, or a regular expression over the text
// generated so far) before constraining anything.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "base/status.h"
#include "grammar/grammar.h"
#include "sampling/candidates.h"
#include "sampling/trigger_patterns.h"
#include "sampling/vocab_view.h"

namespace hearth::sampling {

struct GrammarConfig {
  std::shared_ptr<const grammar::Grammar> grammar;  // null: no grammar
  bool lazy = false;
  std::vector<int32_t> trigger_tokens;
  // Regular expressions searched in the text generated so far (PCRE2 syntax, which agrees
  // with the reference's ECMAScript patterns on what triggers use).
  std::vector<std::string> trigger_patterns;
  // The grammar constrains the answer, not the thinking block: while a reasoning budget
  // says the output is inside the block, it neither constrains nor sees tokens, and it
  // starts at its root once the block is closed (sampling.md §7.2, as a lazy grammar).
  bool after_reasoning = false;
  // Text the grammar reads before the first generated token: the part of the answer the
  // prompt already holds (an assistant message being continued). A non-lazy grammar only;
  // text the grammar refuses fails create().
  std::string prefill;
};

class GrammarSampler {
 public:
  static Result<std::unique_ptr<GrammarSampler>> create(
      const GrammarConfig& config, std::shared_ptr<const grammar::TokenTable> tokens,
      const VocabView& vocab);
  ~GrammarSampler();

  // False while a lazy grammar still waits for its trigger (then nothing is masked).
  bool constraining() const { return !awaiting_trigger_; }
  bool lazy() const { return lazy_; }
  bool after_reasoning() const { return after_reasoning_; }
  bool allows(int32_t token) const;
  // The last allows()/apply() refused tokens because the matcher passed its stack limit.
  bool overflowed() const { return !awaiting_trigger_ && matcher_.overflowed(); }
  size_t max_stacks() const { return matcher_.max_stacks(); }
  // The grammar is constraining and complete: an end of generation may come now.
  bool can_end() const { return !awaiting_trigger_ && matcher_.can_end(); }
  // Disallowed candidates get logit -inf; the array keeps its size and order.
  void apply(Candidates& candidates) const;
  // The token was chosen. While awaiting a trigger this buffers the token's text and, once
  // a trigger fires, replays the triggering text into the grammar.
  Status accept(int32_t token);

 private:
  GrammarSampler(grammar::Matcher matcher, const GrammarConfig& config, const VocabView& vocab);
  Status accept_awaiting(int32_t token);

  grammar::Matcher matcher_;
  const VocabView& vocab_;
  std::vector<int32_t> trigger_tokens_;
  std::unique_ptr<TriggerPatterns> patterns_;
  bool awaiting_trigger_ = false;
  bool lazy_ = false;
  bool after_reasoning_ = false;
  std::string buffer_;  // text generated while awaiting a trigger
};

}  // namespace hearth::sampling
