#include "sampling/candidates.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <utility>

namespace hearth::sampling {
namespace {

constexpr float kNegInf = -std::numeric_limits<float>::infinity();

}  // namespace

float softmax_weight(float logit, float max_logit) {
  if (logit == kNegInf) return 0.0f;
  if (logit == max_logit) return 1.0f;  // exp(0), and no NaN from inf - inf
  return std::exp(logit - max_logit);
}

void Candidates::assign(std::span<const float> logits) {
  data_.resize(logits.size());
  for (size_t i = 0; i < logits.size(); ++i) {
    const float logit = logits[i];
    data_[i] = TokenData{static_cast<int32_t>(i), std::isnan(logit) ? kNegInf : logit, 0.0f};
  }
  sorted_ = false;
  selected_ = -1;
}

void Candidates::assign(std::vector<TokenData> entries, bool sorted) {
  data_ = std::move(entries);
  drop_nans();
  sorted_ = sorted;
  selected_ = -1;
}

int32_t Candidates::selected_id() const {
  if (selected_ < 0 || static_cast<size_t>(selected_) >= data_.size()) return -1;
  return data_[static_cast<size_t>(selected_)].id;
}

float Candidates::max_logit() const {
  if (data_.empty()) return kNegInf;
  if (sorted_) return data_[0].logit;
  float best = kNegInf;
  for (const TokenData& entry : data_) best = std::max(best, entry.logit);
  return best;
}

size_t Candidates::first_max_index() const {
  size_t best = 0;
  for (size_t i = 1; i < data_.size(); ++i) {
    if (data_[i].logit > data_[best].logit) best = i;
  }
  return best;
}

void Candidates::drop_nans() {
  for (TokenData& entry : data_) {
    if (std::isnan(entry.logit)) entry.logit = kNegInf;
  }
}

void Candidates::sort() {
  drop_nans();
  std::sort(data_.begin(), data_.end(), logit_before);
  sorted_ = true;
}

void Candidates::partial_sort(size_t k) {
  k = std::min(k, data_.size());
  drop_nans();
  const auto middle = data_.begin() + static_cast<std::ptrdiff_t>(k);
  std::partial_sort(data_.begin(), middle, data_.end(), logit_before);
}

void Candidates::softmax() {
  if (data_.empty()) return;
  const float max_l = max_logit();
  float sum = 0.0f;
  for (TokenData& entry : data_) {
    entry.p = softmax_weight(entry.logit, max_l);
    sum += entry.p;
  }
  if (!(sum > 0.0f)) return;
  for (TokenData& entry : data_) entry.p /= sum;
}

void Candidates::truncate(size_t n) {
  if (n < data_.size()) data_.resize(n);
}

}  // namespace hearth::sampling
