// TokenTable internals: every piece decoded once, and a trie over the decoded code points so
// a vocabulary scan shares the work of common prefixes.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "grammar/grammar.h"
#include "grammar/utf8.h"

namespace hearth::grammar {

struct TokenTable::Impl {
  static constexpr uint32_t kNone = UINT32_MAX;
  enum Flag : uint8_t {
    kEog = 1,       // end of generation: allowed iff the grammar can end
    kUnusable = 2,  // empty piece or leading NUL: never allowed
    kInvalid = 4,   // not valid UTF-8 when decoded on its own
  };

  struct Token {
    uint32_t cp_begin = 0;  // complete code points, decoded from a fresh state
    uint32_t cp_end = 0;
    uint32_t byte_begin = 0;  // the raw piece, for decoding after a pending partial
    uint32_t byte_end = 0;
    detail::Utf8Partial tail;  // an incomplete character at the end of the piece
    uint8_t flags = 0;
  };

  // Nodes are stored breadth-first, so the children of a node are contiguous and the walk
  // over them reads memory in order.
  struct TrieNode {
    uint32_t cp = 0;  // the code point on the edge from the parent
    uint32_t children_begin = 0;
    uint32_t children_end = 0;
    uint32_t tokens_begin = 0;  // tokens whose code points end here, in trie_tokens
    uint32_t tokens_end = 0;
  };

  // Kept beside the id so the trie walk reads tokens sequentially.
  struct TrieToken {
    int32_t id = 0;
    detail::Utf8Partial tail;
  };

  int32_t n_vocab = 0;
  std::vector<Token> tokens;
  std::vector<uint32_t> code_points;
  std::string bytes;
  std::vector<TrieNode> trie;  // trie[0] is the root; only usable, valid, non-EOG tokens
  std::vector<TrieToken> trie_tokens;
  std::vector<int32_t> eog_tokens;

  std::span<const uint32_t> cps(const Token& t) const {
    return std::span<const uint32_t>(code_points).subspan(t.cp_begin, t.cp_end - t.cp_begin);
  }
  std::string_view piece(const Token& t) const {
    return std::string_view(bytes).substr(t.byte_begin, t.byte_end - t.byte_begin);
  }
  // Usable, valid when decoded on its own, and not EOG.
  bool is_plain(const Token& t) const { return t.flags == 0; }
};

}  // namespace hearth::grammar
