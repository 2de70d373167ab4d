// Helpers shared by the sampling tests.
#pragma once

#include <cmath>
#include <cstdint>
#include <limits>
#include <set>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "sampling/candidates.h"
#include "sampling/vocab_view.h"

namespace hearth::sampling::test {

inline constexpr float kNegInf = -std::numeric_limits<float>::infinity();

inline std::vector<int32_t> ids(const Candidates& candidates) {
  std::vector<int32_t> out;
  for (const TokenData& entry : candidates.entries()) out.push_back(entry.id);
  return out;
}

inline std::vector<float> logits_of(const Candidates& candidates) {
  std::vector<float> out;
  for (const TokenData& entry : candidates.entries()) out.push_back(entry.logit);
  return out;
}

// A vocabulary given as its token texts. Tokenizing takes the longest matching text at each
// position (EOG tokens excluded, as special tokens are not parsed); bytes no token covers are
// skipped.
class FakeVocab final : public VocabView {
 public:
  explicit FakeVocab(std::vector<std::string> pieces, std::set<int32_t> eog = {}, int32_t eot = -1)
      : pieces_(std::move(pieces)), eog_(std::move(eog)), eot_(eot) {}
  int32_t n_vocab() const override { return static_cast<int32_t>(pieces_.size()); }
  std::string piece(int32_t id) const override { return pieces_.at(static_cast<size_t>(id)); }
  bool is_eog(int32_t id) const override { return eog_.count(id) > 0; }
  int32_t eot_or_eos() const override { return eot_; }
  std::vector<int32_t> tokenize(std::string_view text) const override {
    std::vector<int32_t> out;
    size_t pos = 0;
    while (pos < text.size()) {
      int32_t best = -1;
      size_t best_length = 0;
      for (size_t id = 0; id < pieces_.size(); ++id) {
        const std::string& piece = pieces_[id];
        if (eog_.count(static_cast<int32_t>(id)) > 0 || piece.empty()) continue;
        if (piece.size() > best_length && text.substr(pos).starts_with(piece)) {
          best = static_cast<int32_t>(id);
          best_length = piece.size();
        }
      }
      if (best < 0) {
        ++pos;
        continue;
      }
      out.push_back(best);
      pos += best_length;
    }
    return out;
  }

 private:
  std::vector<std::string> pieces_;
  std::set<int32_t> eog_;
  int32_t eot_;
};

// Logits whose softmax is `probabilities` (natural logs; 0 becomes -inf).
inline std::vector<float> logits_for(const std::vector<double>& probabilities) {
  std::vector<float> out;
  for (double p : probabilities) {
    out.push_back(p > 0.0 ? static_cast<float>(std::log(p)) : kNegInf);
  }
  return out;
}

}  // namespace hearth::sampling::test
