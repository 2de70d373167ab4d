// The shared, immutable state behind Tokenizer and StreamDetokenizer.
#pragma once

#include <optional>
#include <string_view>
#include <vector>

#include "tokenizer/pre_tokenizer.h"
#include "tokenizer/special_tokens.h"
#include "tokenizer/tokenizer.h"
#include "tokenizer/ugm.h"
#include "tokenizer/vocab.h"

namespace hearth::tokenizer {

struct TokenizerImpl {
  explicit TokenizerImpl(Vocab v) : vocab(std::move(v)), matcher(vocab) {}

  Vocab vocab;
  SpecialMatcher matcher;
  std::optional<RegexSplitter> splitter;  // BPE only
  std::optional<UgmModel> ugm;            // UGM only

  // llama_vocab::impl::tokenize.
  std::vector<TokenId> tokenize(std::string_view text, bool add_special, bool parse_special) const;

 private:
  void tokenize_spm(std::string_view text, const std::vector<Fragment>& fragments, bool add_special,
                    std::vector<TokenId>& out) const;
  void tokenize_ugm(std::string_view text, const std::vector<Fragment>& fragments, bool add_special,
                    std::vector<TokenId>& out) const;
  void encode_bpe(std::string_view text, std::vector<TokenId>& out) const;
};

}  // namespace hearth::tokenizer
