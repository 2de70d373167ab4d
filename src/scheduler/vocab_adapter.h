// The tokenizer seen through the interfaces the samplers and the grammar matcher need.
#pragma once

#include <memory>

#include "grammar/grammar.h"
#include "sampling/vocab_view.h"
#include "tokenizer/tokenizer.h"

namespace hearth::scheduler {

class TokenizerVocab final : public sampling::VocabView {
 public:
  explicit TokenizerVocab(const tokenizer::Tokenizer& tok) : tok_(tok) {}
  int32_t n_vocab() const override { return tok_.n_vocab(); }
  std::string piece(int32_t id) const override { return tok_.token_to_piece(id, true); }
  bool is_eog(int32_t id) const override { return tok_.is_eog(id); }
  int32_t eot_or_eos() const override { return tok_.eot() >= 0 ? tok_.eot() : tok_.eos(); }
  std::vector<int32_t> tokenize(std::string_view text) const override {
    return tok_.tokenize(text, false, false);
  }

 private:
  const tokenizer::Tokenizer& tok_;
};

// Every token's piece (special tokens rendered), decoded for the grammar matcher.
std::shared_ptr<const grammar::TokenTable> make_token_table(const tokenizer::Tokenizer& tok);

}  // namespace hearth::scheduler
