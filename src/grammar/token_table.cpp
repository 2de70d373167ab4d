#include "grammar/token_table.h"

#include <algorithm>
#include <numeric>

namespace hearth::grammar {
namespace {

using Impl = TokenTable::Impl;

void decode_piece(Impl& table, const std::string& piece, Impl::Token& token) {
  token.byte_begin = static_cast<uint32_t>(table.bytes.size());
  table.bytes += piece;
  token.byte_end = static_cast<uint32_t>(table.bytes.size());
  token.cp_begin = static_cast<uint32_t>(table.code_points.size());
  if (piece.empty() || piece[0] == '\0') token.flags |= Impl::kUnusable;
  detail::Utf8Partial state;
  for (const char c : piece) {
    uint32_t cp = 0;
    const auto step = detail::utf8_push(state, static_cast<uint8_t>(c), cp);
    if (step == detail::Utf8Step::kInvalid) {
      token.flags |= Impl::kInvalid;
      table.code_points.resize(token.cp_begin);
      state = detail::Utf8Partial{};
      break;
    }
    if (step == detail::Utf8Step::kComplete) table.code_points.push_back(cp);
  }
  token.cp_end = static_cast<uint32_t>(table.code_points.size());
  token.tail = state;
}

// A trie node while building: children in a sibling list.
struct LinkedNode {
  uint32_t cp = 0;
  uint32_t first_child = Impl::kNone;
  uint32_t last_child = Impl::kNone;
  uint32_t next_sibling = Impl::kNone;
  uint32_t tokens_begin = 0;
  uint32_t tokens_end = 0;
};

// Builds the trie from the plain tokens sorted by code points: every token then shares the
// path of the previous one up to their common prefix, and the children of a node are created
// in increasing code-point order.
std::vector<LinkedNode> build_linked_trie(Impl& table) {
  std::vector<int32_t> order;
  for (int32_t id = 0; id < table.n_vocab; ++id) {
    if (table.is_plain(table.tokens[id])) order.push_back(id);
  }
  auto cps_of = [&](int32_t id) { return table.cps(table.tokens[id]); };
  std::sort(order.begin(), order.end(), [&](int32_t a, int32_t b) {
    const auto x = cps_of(a), y = cps_of(b);
    return std::lexicographical_compare(x.begin(), x.end(), y.begin(), y.end());
  });
  std::vector<LinkedNode> nodes(1);
  std::vector<uint32_t> path{0};
  std::span<const uint32_t> previous;
  for (const int32_t id : order) {
    const auto current = cps_of(id);
    const size_t common =
        std::mismatch(previous.begin(), previous.end(), current.begin(), current.end()).first -
        previous.begin();
    path.resize(common + 1);
    for (size_t i = common; i < current.size(); ++i) {
      const auto node = static_cast<uint32_t>(nodes.size());
      const uint32_t parent = path.back();
      nodes.push_back(LinkedNode{.cp = current[i]});
      if (nodes[parent].last_child == Impl::kNone) {
        nodes[parent].first_child = node;
      } else {
        nodes[nodes[parent].last_child].next_sibling = node;
      }
      nodes[parent].last_child = node;
      path.push_back(node);
    }
    LinkedNode& end = nodes[path.back()];
    if (end.tokens_begin == end.tokens_end) {
      end.tokens_begin = static_cast<uint32_t>(table.trie_tokens.size());
    }
    table.trie_tokens.push_back(Impl::TrieToken{id, table.tokens[id].tail});
    end.tokens_end = static_cast<uint32_t>(table.trie_tokens.size());
    previous = current;
  }
  return nodes;
}

// Relays the trie out breadth-first: the queue order is the final order, and each node's
// children are enqueued together.
void build_trie(Impl& table) {
  const std::vector<LinkedNode> linked = build_linked_trie(table);
  std::vector<uint32_t> queue{0};
  table.trie.clear();
  table.trie.reserve(linked.size());
  for (size_t at = 0; at < queue.size(); ++at) {
    const LinkedNode& from = linked[queue[at]];
    Impl::TrieNode node{.cp = from.cp,
                        .children_begin = static_cast<uint32_t>(queue.size()),
                        .children_end = 0,
                        .tokens_begin = from.tokens_begin,
                        .tokens_end = from.tokens_end};
    for (uint32_t c = from.first_child; c != Impl::kNone; c = linked[c].next_sibling) {
      queue.push_back(c);
    }
    node.children_end = static_cast<uint32_t>(queue.size());
    table.trie.push_back(node);
  }
}

}  // namespace

TokenTable::TokenTable(int32_t n_vocab, const std::function<std::string(int32_t)>& piece,
                       const std::function<bool(int32_t)>& is_eog)
    : impl_(std::make_unique<Impl>()) {
  impl_->n_vocab = std::max(n_vocab, 0);
  impl_->tokens.resize(impl_->n_vocab);
  for (int32_t id = 0; id < impl_->n_vocab; ++id) {
    Impl::Token& token = impl_->tokens[id];
    decode_piece(*impl_, piece(id), token);
    if (is_eog && is_eog(id)) {
      token.flags |= Impl::kEog;
      impl_->eog_tokens.push_back(id);
    }
  }
  build_trie(*impl_);
}

TokenTable::~TokenTable() = default;

int32_t TokenTable::n_vocab() const {
  return impl_->n_vocab;
}

}  // namespace hearth::grammar
