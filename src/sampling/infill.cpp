#include "sampling/infill.h"

#include <algorithm>
#include <limits>
#include <string>
#include <vector>

namespace hearth::sampling {
namespace {

constexpr float kNegInf = -std::numeric_limits<float>::infinity();
// Text tokens below this probability are dropped before the relative cut.
constexpr float kFirstThreshold = 0.2f;

void normalize(Candidates& candidates, float sum) {
  for (TokenData& entry : candidates.entries()) entry.p /= sum;
}

}  // namespace

void InfillStage::merge_prefixes(Candidates& candidates) const {
  const size_t n = candidates.size();
  // EOG tokens take no part: the reference renders them without special-token text, i.e.
  // empty, and an empty text is nobody's prefix.
  std::vector<std::string> text(n);
  for (size_t i = 0; i < n; ++i) {
    if (!vocab_.is_eog(candidates[i].id)) text[i] = vocab_.piece(candidates[i].id);
  }
  // In lexicographic order the texts starting with a given prefix are contiguous, so each
  // candidate finds its extensions without comparing against all others.
  std::vector<size_t> by_text(n);
  for (size_t i = 0; i < n; ++i) by_text[i] = i;
  std::sort(by_text.begin(), by_text.end(), [&text](size_t a, size_t b) {
    return text[a] < text[b] || (text[a] == text[b] && a < b);
  });
  std::vector<size_t> extensions;
  for (size_t i0 = 0; i0 < n; ++i0) {
    if (text[i0].empty() || candidates[i0].logit == kNegInf) continue;
    const std::string& prefix = text[i0];
    auto it = std::lower_bound(
        by_text.begin(), by_text.end(), prefix,
        [&text](size_t index, const std::string& key) { return text[index] < key; });
    extensions.clear();
    for (; it != by_text.end() && text[*it].starts_with(prefix); ++it) {
      if (*it != i0) extensions.push_back(*it);
    }
    // Merges happen in candidate order, and each one changes what the next one compares.
    std::sort(extensions.begin(), extensions.end());
    for (size_t i1 : extensions) {
      if (candidates[i0].logit == kNegInf) break;
      if (candidates[i1].logit == kNegInf) continue;
      TokenData* keep = &candidates[i0];
      TokenData* fold = &candidates[i1];
      if (fold->p > keep->p) std::swap(keep, fold);
      keep->p += fold->p;
      fold->logit = kNegInf;
      fold->p = 0.0f;
    }
  }
}

size_t InfillStage::keep_likely(Candidates& candidates, float threshold) const {
  size_t n_text = 0;
  float sum = 0.0f;
  candidates.keep_if([&](const TokenData& entry) {
    const bool eog = vocab_.is_eog(entry.id);
    if (!eog && entry.p < threshold) return false;
    if (!eog) ++n_text;
    sum += entry.p;
    return true;
  });
  if (sum > 0.0f) normalize(candidates, sum);
  return n_text;
}

void InfillStage::apply(Candidates& candidates) {
  if (candidates.empty()) return;
  candidates.sort();
  candidates.softmax();
  float p_eog = 0.0f;
  float p_text = 0.0f;
  for (const TokenData& entry : candidates.entries()) {
    (vocab_.is_eog(entry.id) ? p_eog : p_text) += entry.p;
  }
  if (3.0f * p_eog * static_cast<float>(candidates.size()) > p_text) {
    candidates.keep_if([this](const TokenData& entry) { return vocab_.is_eog(entry.id); });
    normalize(candidates, p_eog);
    return;
  }
  merge_prefixes(candidates);
  const size_t n_text = keep_likely(candidates, kFirstThreshold);
  if (n_text == 0) {
    // Nothing worth inserting: end the infill.
    const int32_t end = vocab_.eot_or_eos();
    std::vector<TokenData> only_end;
    if (end >= 0) only_end.push_back(TokenData{end, 1.0f, 1.0f});
    candidates.assign(std::move(only_end), /*sorted=*/true);
    return;
  }
  keep_likely(candidates, static_cast<float>(1.0 / static_cast<double>(n_text + 1)));
  // Merging masked some entries in place; the survivors may no longer be in logit order.
  const auto entries = candidates.entries();
  candidates.set_sorted(std::is_sorted(entries.begin(), entries.end(), logit_before));
}

}  // namespace hearth::sampling
