#include "tokenizer/special_tokens.h"

#include <algorithm>

namespace hearth::tokenizer {
namespace {

bool is_ascii_space(char c) {
  return c == ' ' || c == '\t' || c == '\n' || c == '\v' || c == '\f' || c == '\r';
}

// Splits one raw fragment at every occurrence of `special` (left to right), appending the
// pieces to `out`.
void split_fragment(std::string_view text, const Fragment& f, TokenId id, std::string_view special,
                    uint32_t attr, std::vector<Fragment>& out) {
  size_t pos = f.offset;
  const size_t end = f.offset + f.length;
  while (pos < end) {
    const size_t match = text.substr(0, end).find(special, pos);
    if (match == std::string_view::npos) break;
    size_t left_len = match - pos;
    if ((attr & kAttrLstrip) != 0) {
      while (left_len > 0 && is_ascii_space(text[pos + left_len - 1])) --left_len;
    }
    if (left_len > 0) out.push_back({kNoToken, pos, left_len});
    out.push_back({id, 0, 0});
    pos = match + special.size();
    if ((attr & kAttrRstrip) != 0) {
      while (pos < end && is_ascii_space(text[pos])) ++pos;
    }
  }
  if (pos < end) out.push_back({kNoToken, pos, end - pos});
}

}  // namespace

SpecialMatcher::SpecialMatcher(const Vocab& vocab) {
  root_.fill(-1);
  for (TokenId id : vocab.special_cache) {
    const std::string& text = vocab.tokens[id].text;
    int32_t node = -1;
    for (char ch : text) {
      const auto byte = static_cast<uint8_t>(ch);
      int32_t next = child(node, byte);
      if (next < 0) {
        next = static_cast<int32_t>(terminal_.size());
        terminal_.push_back(kNoToken);
        if (node < 0) {
          root_[byte] = next;
        } else {
          edges_.emplace((static_cast<uint64_t>(node) << 8) | byte, next);
        }
      }
      node = next;
    }
    if (node >= 0) terminal_[node] = id;
  }
}

int32_t SpecialMatcher::child(int32_t node, uint8_t byte) const {
  if (node < 0) return root_[byte];
  const auto it = edges_.find((static_cast<uint64_t>(node) << 8) | byte);
  return it == edges_.end() ? -1 : it->second;
}

std::vector<TokenId> SpecialMatcher::occurring(std::string_view text) const {
  std::vector<TokenId> found;
  for (size_t i = 0; i < text.size(); ++i) {
    int32_t node = root_[static_cast<uint8_t>(text[i])];
    for (size_t j = i + 1; node >= 0; ++j) {
      if (terminal_[node] != kNoToken) found.push_back(terminal_[node]);
      if (j == text.size()) break;
      node = child(node, static_cast<uint8_t>(text[j]));
    }
  }
  std::sort(found.begin(), found.end());
  found.erase(std::unique(found.begin(), found.end()), found.end());
  return found;
}

std::vector<Fragment> partition(const Vocab& vocab, const SpecialMatcher& matcher,
                                std::string_view text, bool parse_special) {
  std::vector<Fragment> fragments;
  if (text.empty()) return fragments;
  fragments.push_back({kNoToken, 0, text.size()});
  const std::vector<TokenId> present = matcher.occurring(text);
  if (present.empty()) return fragments;
  std::vector<Fragment> next;
  for (TokenId id : vocab.special_cache) {
    const uint32_t attr = vocab.tokens[id].attr;
    if (!parse_special && (attr & (kAttrControl | kAttrUnknown)) != 0) continue;
    if (!std::binary_search(present.begin(), present.end(), id)) continue;
    next.clear();
    for (const Fragment& f : fragments) {
      if (f.token != kNoToken) {
        next.push_back(f);
      } else {
        split_fragment(text, f, id, vocab.tokens[id].text, attr, next);
      }
    }
    fragments.swap(next);
  }
  return fragments;
}

}  // namespace hearth::tokenizer
