// The reasoning budget (sampling.md §7.1): counts the tokens generated inside the thinking
// block and, when the budget is spent (or a client ends reasoning through the control
// route), forces the budget message and the end tag token by token. Tags are matched in
// the generated text, not as token sequences, so tags that the vocabulary splits into
// several tokens (Qwen's <think> on a small vocabulary) are found too.
//
// States: idle (outside thinking) -> counting (after the start tag) -> forcing (budget spent)
// -> done. A natural end tag while counting goes to done. The text before the output (the
// generation prompt) is replayed at creation, so a prompt that opened the block starts
// counting.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "sampling/vocab_view.h"

namespace hearth::sampling {

struct ReasoningBudgetConfig {
  std::string start_tag;        // e.g. "<think>"
  std::string end_tag;          // e.g. "</think>"
  int32_t budget = -1;          // tokens inside the block; -1 unlimited, 0 end at once
  std::vector<int32_t> forced;  // the message's and the end tag's tokens, forced in order
  std::string prefix;           // text before the output, replayed at creation
  // Set by the control route ("reasoning_end"): force the end now. May be null.
  std::shared_ptr<std::atomic<bool>> end_now;
};

class ReasoningBudget {
 public:
  enum class State { kIdle, kCounting, kForcing, kDone };

  ReasoningBudget(ReasoningBudgetConfig config, const VocabView& vocab);

  State state() const { return state_; }
  // Inside the thinking block (a lazy grammar does not apply there).
  bool thinking() const { return state_ == State::kCounting || state_ == State::kForcing; }
  // The token that must come next, if the budget is forcing one.
  std::optional<int32_t> forced_token();
  // A generated token was chosen.
  void accept(int32_t token);
  int32_t n_thinking() const { return n_counted_; }

 private:
  void see_text(const std::string& text);
  void start_forcing_if_spent();

  ReasoningBudgetConfig config_;
  const VocabView& vocab_;
  State state_ = State::kIdle;
  std::string tail_;          // the recent text, enough to find a tag split across tokens
  std::string pending_utf8_;  // an incomplete UTF-8 character at the end of the text
  int32_t n_counted_ = 0;
  size_t n_forced_ = 0;
};

}  // namespace hearth::sampling
