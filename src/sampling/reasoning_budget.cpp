#include "sampling/reasoning_budget.h"

#include <algorithm>

namespace hearth::sampling {

namespace {

// The number of bytes at the end of `text` that begin a UTF-8 character not finished yet.
size_t incomplete_utf8(const std::string& text) {
  for (size_t back = 1; back <= std::min<size_t>(4, text.size()); ++back) {
    const auto c = static_cast<unsigned char>(text[text.size() - back]);
    if ((c & 0xC0) == 0x80) continue;  // a continuation byte: look further back
    size_t need = 1;
    if ((c & 0xE0) == 0xC0) need = 2;
    if ((c & 0xF0) == 0xE0) need = 3;
    if ((c & 0xF8) == 0xF0) need = 4;
    return need > back ? back : 0;
  }
  return 0;
}

}  // namespace

ReasoningBudget::ReasoningBudget(ReasoningBudgetConfig config, const VocabView& vocab)
    : config_(std::move(config)), vocab_(vocab) {
  see_text(config_.prefix);
  // Replayed text only places the block; nothing of it counts.
  n_counted_ = 0;
  start_forcing_if_spent();
}

void ReasoningBudget::see_text(const std::string& text) {
  tail_ += text;
  // Walk the tags in order: a start opens, an end closes (a prompt may do both).
  while (true) {
    if (state_ == State::kIdle) {
      const size_t at = tail_.find(config_.start_tag);
      if (at == std::string::npos) break;
      state_ = State::kCounting;
      tail_.erase(0, at + config_.start_tag.size());
    } else if (state_ == State::kCounting || state_ == State::kForcing) {
      const size_t at = tail_.find(config_.end_tag);
      if (at == std::string::npos) break;
      state_ = State::kDone;
      tail_.erase(0, at + config_.end_tag.size());
    } else {
      break;
    }
  }
  const size_t keep = std::max(config_.start_tag.size(), config_.end_tag.size());
  if (tail_.size() > keep) tail_.erase(0, tail_.size() - keep);
}

void ReasoningBudget::start_forcing_if_spent() {
  if (state_ != State::kCounting) return;
  const bool ended_by_client = config_.end_now && config_.end_now->load();
  const bool spent = config_.budget >= 0 && n_counted_ >= config_.budget;
  // A character being written is finished first (the WAITING_UTF8 state).
  if ((spent || ended_by_client) && pending_utf8_.empty()) {
    state_ = config_.forced.empty() ? State::kDone : State::kForcing;
    n_forced_ = 0;
  }
}

std::optional<int32_t> ReasoningBudget::forced_token() {
  start_forcing_if_spent();  // the control route may have asked since the last token
  if (state_ != State::kForcing || n_forced_ >= config_.forced.size()) return std::nullopt;
  return config_.forced[n_forced_];
}

void ReasoningBudget::accept(int32_t token) {
  std::string piece = vocab_.piece(token);
  if (state_ == State::kForcing) {
    if (n_forced_ < config_.forced.size() && token == config_.forced[n_forced_]) ++n_forced_;
    if (n_forced_ >= config_.forced.size()) state_ = State::kDone;
    return;
  }
  if (state_ == State::kDone) return;
  pending_utf8_ += piece;
  const size_t open = incomplete_utf8(pending_utf8_);
  pending_utf8_.erase(0, pending_utf8_.size() - open);
  const bool counting = state_ == State::kCounting;
  see_text(piece);
  if (counting && state_ == State::kCounting) ++n_counted_;
  start_forcing_if_spent();
}

}  // namespace hearth::sampling
