// SentencePiece's unigram model as llama.cpp runs it ("t5" vocabularies: T5, XLM-RoBERTa,
// bge-m3): the input normalized by the precompiled charsmap (a double-array trie of
// replacements; user-defined tokens pass through), spaces escaped to U+2581, then the
// Viterbi path of highest total score over the token trie, an unknown code point costing the
// lowest score minus 10 and runs of unknowns merged into one.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "tokenizer/vocab.h"

namespace hearth::tokenizer {

// A byte trie: node 0 is the root; (node, byte) -> child, node -> token id.
class ByteTrie {
 public:
  void insert(std::string_view text, TokenId id);
  // The child of `node` for `byte`, or -1.
  int32_t child(int32_t node, uint8_t byte) const;
  TokenId value(int32_t node) const { return values_[static_cast<size_t>(node)]; }
  // Bytes of the longest key that prefixes `text` (0 when none).
  size_t longest_prefix(std::string_view text) const;

 private:
  std::unordered_map<uint64_t, int32_t> children_;
  std::vector<TokenId> values_{kNoToken};
};

class UgmModel {
 public:
  explicit UgmModel(const Vocab& vocab);
  // Appends the ids of one raw-text fragment.
  void encode(std::string_view text, std::vector<TokenId>& out) const;
  // The normalized text (charsmap, user-defined tokens, U+2581 for spaces).
  std::string normalize(std::string_view text) const;

 private:
  // Replacement bytes and input bytes consumed for the normalization at `at`.
  std::pair<std::string_view, size_t> normalize_prefix(std::string_view text, size_t at) const;
  // Bytes of the longest charsmap key at text[at..]; `replacement` gets its offset.
  size_t charsmap_match(std::string_view text, size_t at, uint32_t& replacement) const;

  const Vocab& vocab_;
  ByteTrie tokens_;        // normal, user-defined and unused tokens
  ByteTrie user_defined_;  // user-defined tokens
  double unknown_score_ = 0.0;
  std::vector<uint32_t> xcda_;     // the charsmap's double array
  std::string_view replacements_;  // NUL-terminated replacement strings (into vocab.charsmap)
};

}  // namespace hearth::tokenizer
