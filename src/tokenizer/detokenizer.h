// Detokenization as llama.cpp's llama_detokenize, written as a stream so that the batch and
// the incremental (StreamDetokenizer) forms share one implementation.
#pragma once

#include <string>
#include <string_view>

#include "tokenizer/vocab.h"

namespace hearth::tokenizer {

// token_to_piece(id, special, lstrip); empty for ids outside the vocabulary.
std::string_view piece_view(const Vocab& vocab, TokenId id, bool special, int lstrip);

// One of llama.cpp's three clean_spaces passes, run over a stream of bytes. Each pass drops
// spaces by looking at most three bytes ahead, so it only holds back that much.
class CleanPass {
 public:
  enum class Kind {
    kBeforePunctuation,  // " ?", " !", " .", " ," lose the space
    kLoneApostrophe,     // " ' " becomes "'"
    kContraction,        // " 's", " 'm", " 're", " 've" lose the space
  };
  explicit CleanPass(Kind kind) : kind_(kind) {}
  void push(std::string_view in, std::string& out);
  void finish(std::string& out);

 private:
  void put(char c, std::string& out);
  void flush_first_then_replay(char c, std::string& out);

  Kind kind_;
  std::string hold_;  // bytes whose fate depends on what follows
};

// The three passes chained (tokenizers.md §6.3).
class SpaceCleaner {
 public:
  void push(std::string_view in, std::string& out);
  void finish(std::string& out);

 private:
  CleanPass p1_{CleanPass::Kind::kBeforePunctuation};
  CleanPass p2_{CleanPass::Kind::kLoneApostrophe};
  CleanPass p3_{CleanPass::Kind::kContraction};
  std::string a_;
  std::string b_;
};

// llama_detokenize fed one id at a time. push() appends the bytes that are final; finish()
// appends the rest. A trailing EOS that remove_special would drop is held until the next id.
class DetokenizeState {
 public:
  DetokenizeState(const Vocab& vocab, bool remove_special, bool unparse_special);
  void push(TokenId id, std::string& out);
  void finish(std::string& out);

 private:
  void emit(TokenId id, std::string& out);

  const Vocab* vocab_;
  bool remove_special_;
  bool unparse_special_;
  bool first_ = true;
  bool remove_space_;
  bool eos_pending_ = false;
  SpaceCleaner cleaner_;
};

}  // namespace hearth::tokenizer
