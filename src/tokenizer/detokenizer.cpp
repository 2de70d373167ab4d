#include "tokenizer/detokenizer.h"

namespace hearth::tokenizer {

std::string_view piece_view(const Vocab& vocab, TokenId id, bool special, int lstrip) {
  if (!vocab.valid(id)) return {};
  if (!special && (vocab.tokens[id].attr & (kAttrUnknown | kAttrControl)) != 0) return {};
  std::string_view piece = vocab.pieces[id];
  for (int i = 0; i < lstrip && !piece.empty() && piece.front() == ' '; ++i) {
    piece.remove_prefix(1);
  }
  return piece;
}

void CleanPass::push(std::string_view in, std::string& out) {
  for (char c : in) put(c, out);
}

void CleanPass::finish(std::string& out) {
  out += hold_;
  hold_.clear();
}

// The held bytes turned out not to start a pattern: the first one (a space) is final; the
// others and `c` are processed again, since a later byte may start a new pattern.
void CleanPass::flush_first_then_replay(char c, std::string& out) {
  const std::string held = std::move(hold_);
  hold_.clear();
  out += held.front();
  for (size_t i = 1; i < held.size(); ++i) put(held[i], out);
  put(c, out);
}

void CleanPass::put(char c, std::string& out) {
  if (hold_.empty()) {
    if (c == ' ') {
      hold_.push_back(c);
    } else {
      out += c;
    }
    return;
  }
  if (hold_.size() == 1) {  // " "
    if (kind_ == Kind::kBeforePunctuation && (c == '?' || c == '!' || c == '.' || c == ',')) {
      hold_.clear();
      out += c;  // the space is dropped
    } else if (kind_ != Kind::kBeforePunctuation && c == '\'') {
      hold_ += c;
    } else {
      flush_first_then_replay(c, out);
    }
    return;
  }
  if (kind_ == Kind::kLoneApostrophe) {  // hold_ == " '"
    if (c == ' ') {
      hold_.clear();
      out += '\'';  // both spaces are dropped; the second cannot start another pattern
    } else {
      flush_first_then_replay(c, out);
    }
    return;
  }
  // kContraction: hold_ is " '" or " 'r" / " 'v".
  if (hold_.size() == 2 && (c == 's' || c == 'm')) {
    out += '\'';
    out += c;
    hold_.clear();
  } else if (hold_.size() == 2 && (c == 'r' || c == 'v')) {
    hold_ += c;
  } else if (hold_.size() == 3 && c == 'e') {
    out += hold_.substr(1);
    out += c;
    hold_.clear();
  } else {
    flush_first_then_replay(c, out);
  }
}

void SpaceCleaner::push(std::string_view in, std::string& out) {
  a_.clear();
  p1_.push(in, a_);
  b_.clear();
  p2_.push(a_, b_);
  p3_.push(b_, out);
}

void SpaceCleaner::finish(std::string& out) {
  a_.clear();
  p1_.finish(a_);
  b_.clear();
  p2_.push(a_, b_);
  p2_.finish(b_);
  p3_.push(b_, out);
  p3_.finish(out);
}

DetokenizeState::DetokenizeState(const Vocab& vocab, bool remove_special, bool unparse_special)
    : vocab_(&vocab),
      remove_special_(remove_special),
      unparse_special_(unparse_special),
      remove_space_(vocab.add_space_prefix) {}

void DetokenizeState::push(TokenId id, std::string& out) {
  const TokenId bos = vocab_->id(SpecialSlot::kBos);
  const TokenId eos = vocab_->id(SpecialSlot::kEos);
  if (first_) {
    first_ = false;
    if (remove_special_ && vocab_->add_bos && id == bos) {
      remove_space_ = false;  // the dropped BOS still ends the leading-space removal
      return;
    }
  }
  if (eos_pending_) {
    eos_pending_ = false;
    emit(eos, out);
  }
  if (remove_special_ && vocab_->add_eos && id == eos) {
    eos_pending_ = true;  // dropped only if it turns out to be the last id
    return;
  }
  emit(id, out);
}

void DetokenizeState::finish(std::string& out) {
  eos_pending_ = false;
  if (vocab_->clean_spaces) cleaner_.finish(out);
}

void DetokenizeState::emit(TokenId id, std::string& out) {
  const std::string_view piece = piece_view(*vocab_, id, unparse_special_, remove_space_ ? 1 : 0);
  remove_space_ = false;
  if (vocab_->clean_spaces) {
    cleaner_.push(piece, out);
  } else {
    out += piece;
  }
}

}  // namespace hearth::tokenizer
