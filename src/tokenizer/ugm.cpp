#include "tokenizer/ugm.h"

#include <algorithm>
#include <cfloat>
#include <cstring>
#include <limits>

#include "tokenizer/unicode.h"

namespace hearth::tokenizer {
namespace {

constexpr std::string_view kSpaceMarker = "\xE2\x96\x81";  // U+2581
constexpr std::string_view kReplacementUtf8 = "\xEF\xBF\xBD";
constexpr float kUnknownPenalty = 10.0f;

uint64_t edge(int32_t node, uint8_t byte) {
  return (static_cast<uint64_t>(static_cast<uint32_t>(node)) << 8) | byte;
}

// Length of the well-formed UTF-8 sequence at text[at] (continuation bytes checked, not
// overlong forms, as the reference's decoder); 0 when it is malformed.
size_t valid_sequence(std::string_view text, size_t at) {
  const auto lead = static_cast<uint8_t>(text[at]);
  size_t n = 0;
  if ((lead & 0x80) == 0) return 1;
  if ((lead & 0x40) == 0) return 0;
  if ((lead & 0x20) == 0) {
    n = 2;
  } else if ((lead & 0x10) == 0) {
    n = 3;
  } else if ((lead & 0x08) == 0) {
    n = 4;
  } else {
    return 0;
  }
  if (at + n > text.size()) return 0;
  for (size_t i = 1; i < n; ++i) {
    if ((static_cast<uint8_t>(text[at + i]) & 0xC0) != 0x80) return 0;
  }
  return n;
}

// One XCDA unit: BASE in bits 10-30 (shifted by 8 when bit 9 is set), LEAF in bit 8, LCHECK
// in bits 0-7 (and 31, so value units never match a byte), VALUE in bits 0-30.
uint32_t xcda_base(uint32_t unit) {
  return (unit >> 10) << ((unit & (1u << 9)) >> 6);
}
uint32_t xcda_lcheck(uint32_t unit) {
  return unit & ((1u << 31) | 0xFFu);
}
bool xcda_leaf(uint32_t unit) {
  return ((unit >> 8) & 1u) != 0;
}
uint32_t xcda_value(uint32_t unit) {
  return unit & ((1u << 31) - 1);
}

}  // namespace

void ByteTrie::insert(std::string_view text, TokenId id) {
  int32_t node = 0;
  for (char c : text) {
    const auto [it, added] = children_.try_emplace(edge(node, static_cast<uint8_t>(c)),
                                                   static_cast<int32_t>(values_.size()));
    if (added) values_.push_back(kNoToken);
    node = it->second;
  }
  values_[static_cast<size_t>(node)] = id;
}

int32_t ByteTrie::child(int32_t node, uint8_t byte) const {
  const auto it = children_.find(edge(node, byte));
  return it == children_.end() ? -1 : it->second;
}

size_t ByteTrie::longest_prefix(std::string_view text) const {
  size_t best = 0;
  int32_t node = 0;
  for (size_t i = 0; i < text.size(); ++i) {
    node = child(node, static_cast<uint8_t>(text[i]));
    if (node < 0) break;
    if (value(node) != kNoToken) best = i + 1;
  }
  return best;
}

UgmModel::UgmModel(const Vocab& vocab) : vocab_(vocab) {
  float min_score = FLT_MAX;
  for (TokenId id = 0; id < vocab.size(); ++id) {
    const TokenData& t = vocab.tokens[static_cast<size_t>(id)];
    if ((t.attr & kAttrNormal) != 0) min_score = std::min(min_score, t.score);
    if ((t.attr & (kAttrNormal | kAttrUserDefined | kAttrUnused)) != 0) tokens_.insert(t.text, id);
    if ((t.attr & kAttrUserDefined) != 0) user_defined_.insert(t.text, id);
  }
  unknown_score_ = static_cast<double>(min_score - kUnknownPenalty);
  const std::vector<uint8_t>& cm = vocab.charsmap;
  uint32_t blob = 0;
  if (cm.size() > sizeof(blob)) std::memcpy(&blob, cm.data(), sizeof(blob));
  // build_vocab refuses a blob whose parts do not fit; a hand-built Vocab is checked here.
  if (cm.size() > sizeof(blob) && uint64_t{blob} + sizeof(blob) < cm.size()) {
    xcda_.resize(blob / sizeof(uint32_t));
    std::memcpy(xcda_.data(), cm.data() + sizeof(blob), xcda_.size() * sizeof(uint32_t));
    replacements_ = std::string_view(reinterpret_cast<const char*>(cm.data()) + sizeof(blob) + blob,
                                     cm.size() - sizeof(blob) - blob);
  }
}

size_t UgmModel::charsmap_match(std::string_view text, size_t at, uint32_t& replacement) const {
  if (xcda_.empty()) return 0;
  size_t longest = 0;
  uint32_t node = xcda_base(xcda_[0]);
  for (size_t i = at; i < text.size(); ++i) {
    const auto c = static_cast<uint8_t>(text[i]);
    if (c == 0) break;
    node ^= c;
    // The reference throws past the array's end; a malformed map here just stops matching.
    if (node >= xcda_.size() || xcda_lcheck(xcda_[node]) != c) break;
    const bool leaf = xcda_leaf(xcda_[node]);
    node ^= xcda_base(xcda_[node]);
    if (node >= xcda_.size()) break;
    if (leaf) {
      longest = i - at + 1;
      replacement = xcda_value(xcda_[node]);
    }
  }
  return longest;
}

std::pair<std::string_view, size_t> UgmModel::normalize_prefix(std::string_view text,
                                                               size_t at) const {
  // A user-defined token passes through unchanged.
  if (const size_t n = user_defined_.longest_prefix(text.substr(at)); n > 0)
    return {text.substr(at, n), n};
  uint32_t offset = 0;
  if (const size_t n = charsmap_match(text, at, offset); n > 0 && offset < replacements_.size()) {
    const std::string_view rest = replacements_.substr(offset);
    const size_t end = rest.find('\0');
    if (end != std::string_view::npos) return {rest.substr(0, end), n};
  }
  const size_t n = valid_sequence(text, at);
  if (n == 0) return {kReplacementUtf8, 1};
  return {text.substr(at, n), n};
}

std::string UgmModel::normalize(std::string_view text) const {
  std::string out;
  out.reserve(text.size() * 3);
  const bool prepend = vocab_.add_space_prefix;
  const bool merge = vocab_.remove_extra_whitespaces;
  bool prepended = false;
  bool in_word = false;
  for (size_t at = 0; at < text.size();) {
    const auto [piece, consumed] = normalize_prefix(text, at);
    for (char c : piece) {
      if (c != ' ') {
        if (!in_word) {
          in_word = true;
          if ((prepend && !prepended) || merge) {
            out += kSpaceMarker;
            prepended = true;
          }
        }
        out += c;
      } else {
        in_word = false;
        if (!merge) out += kSpaceMarker;
      }
    }
    at += consumed;
  }
  return out;
}

void UgmModel::encode(std::string_view text, std::vector<TokenId>& out) const {
  const std::string s = normalize(text);
  const size_t n = s.size();
  if (n == 0) return;
  struct Best {
    TokenId token;
    size_t start;
    double score;
  };
  const TokenId unk = vocab_.id(SpecialSlot::kUnk);
  std::vector<Best> best(n + 1, Best{unk, 0, -std::numeric_limits<double>::max()});
  best[0] = Best{unk, 0, 0.0};
  for (size_t at = 0; at < n;) {
    const size_t cp = std::min(unicode::sequence_length(static_cast<uint8_t>(s[at])), n - at);
    bool whole_codepoint = false;
    int32_t node = 0;
    for (size_t end = at; end < n; ++end) {
      node = tokens_.child(node, static_cast<uint8_t>(s[end]));
      if (node < 0) break;
      const TokenId id = tokens_.value(node);
      if (id == kNoToken) continue;
      if (end + 1 - at == cp) whole_codepoint = true;
      const TokenData& t = vocab_.tokens[static_cast<size_t>(id)];
      const double score =
          best[at].score + ((t.attr & kAttrUserDefined) != 0 ? 0.0 : static_cast<double>(t.score));
      if (score > best[end + 1].score) best[end + 1] = Best{id, at, score};
    }
    if (!whole_codepoint) {
      const double score = best[at].score + unknown_score_;
      if (score > best[at + cp].score) best[at + cp] = Best{unk, at, score};
    }
    at += cp;
  }
  // Back from the end; a run of unknown pieces becomes one unknown token.
  const size_t first = out.size();
  bool previous_unknown = false;
  for (size_t at = n;;) {
    const Best& b = best[at];
    const bool unknown = b.token == unk;
    if (!(previous_unknown && unknown)) out.push_back(b.token);
    if (b.start == 0) break;
    previous_unknown = unknown;
    at = b.start;
  }
  std::reverse(out.begin() + static_cast<std::ptrdiff_t>(first), out.end());
}

}  // namespace hearth::tokenizer
