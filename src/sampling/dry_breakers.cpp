#include "sampling/dry_breakers.h"

#include <algorithm>
#include <optional>
#include <string_view>

namespace hearth::sampling {
namespace {

// One cleaned breaker and its tails, tokenized lazily: tails_by_offset[n] is the
// tokenization of the breaker from byte n on (many tokens share a tail, and tokenizing is the
// expensive part).
struct Breaker {
  std::string text;
  std::vector<std::optional<std::vector<int32_t>>> tails_by_offset;
};

const std::vector<int32_t>& tail_from(Breaker& breaker, size_t offset, const VocabView& vocab) {
  auto& cached = breaker.tails_by_offset[offset];
  if (!cached) {
    std::vector<int32_t> tokens = vocab.tokenize(std::string_view(breaker.text).substr(offset));
    if (tokens.size() > kDryMaxTailTokens) tokens.resize(kDryMaxTailTokens);
    cached = std::move(tokens);
  }
  return *cached;
}

void add_token(int32_t id, const std::string& piece, Breaker& breaker, const VocabView& vocab,
               DryBreakers& out) {
  const std::string& text = breaker.text;
  if (piece.find(text) != std::string::npos) {
    out.add(id, {});
    return;
  }
  // A suffix at least as long as the breaker would contain it, so only shorter ones count.
  const size_t longest = std::min(piece.size(), text.size() - 1);
  for (size_t length = longest; length > 0; --length) {
    if (piece.compare(piece.size() - length, length, text, 0, length) == 0) {
      out.add(id, tail_from(breaker, length, vocab));
    }
  }
}

}  // namespace

void DryBreakers::add(int32_t head, std::vector<int32_t> tail) {
  auto& known = tails[head];
  if (std::find(known.begin(), known.end(), tail) == known.end()) known.push_back(std::move(tail));
}

bool DryBreakers::is_single_token_breaker(int32_t token) const {
  const auto it = tails.find(token);
  if (it == tails.end()) return false;
  return std::any_of(it->second.begin(), it->second.end(),
                     [](const std::vector<int32_t>& tail) { return tail.empty(); });
}

DryBreakers build_dry_breakers(const VocabView& vocab, const std::vector<std::string>& breakers) {
  std::vector<Breaker> cleaned;
  for (const std::string& text : breakers) {
    if (text.empty()) continue;
    Breaker breaker{text.substr(0, kDryMaxBreakerBytes), {}};
    breaker.tails_by_offset.resize(breaker.text.size());
    cleaned.push_back(std::move(breaker));
  }
  DryBreakers out;
  if (cleaned.empty()) return out;
  const int32_t n_vocab = vocab.n_vocab();
  for (int32_t id = 0; id < n_vocab; ++id) {
    const std::string piece = vocab.piece(id);
    for (Breaker& breaker : cleaned) add_token(id, piece, breaker, vocab, out);
  }
  return out;
}

}  // namespace hearth::sampling
