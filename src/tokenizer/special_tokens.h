// Splitting special-token texts out of the input before the per-type encoder runs
// (llama.cpp's tokenizer_st_partition, tokenizers.md §3.1).
#pragma once

#include <array>
#include <cstdint>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "tokenizer/vocab.h"

namespace hearth::tokenizer {

// A piece of the input: a special token, or raw text [offset, offset + length).
struct Fragment {
  TokenId token = kNoToken;  // kNoToken: raw text
  size_t offset = 0;
  size_t length = 0;
};

// Finds which special tokens occur in a text at all (a trie over their texts), so that the
// partition only scans for those: O(text * longest special text) instead of
// O(text * number of special tokens).
class SpecialMatcher {
 public:
  explicit SpecialMatcher(const Vocab& vocab);
  // Ids of special tokens whose text occurs in `text`, sorted.
  std::vector<TokenId> occurring(std::string_view text) const;

 private:
  int32_t child(int32_t node, uint8_t byte) const;

  std::array<int32_t, 256> root_{};              // first-level nodes, -1 when absent
  std::unordered_map<uint64_t, int32_t> edges_;  // (node << 8 | byte) -> node
  std::vector<TokenId> terminal_;                // node -> token ending there, or kNoToken
};

// Partition of `text`: for each special token in cache order (longest first), every
// occurrence inside a raw fragment becomes a token fragment; LSTRIP/RSTRIP tokens drop the
// ASCII whitespace next to them. CONTROL and UNKNOWN tokens are only split out with
// `parse_special`.
std::vector<Fragment> partition(const Vocab& vocab, const SpecialMatcher& matcher,
                                std::string_view text, bool parse_special);

}  // namespace hearth::tokenizer
