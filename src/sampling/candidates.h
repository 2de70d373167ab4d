// The candidate array one sampling step works on: token ids with their logits and
// probabilities, a flag saying whether the entries are in descending-logit order, and the
// index a selecting stage chose.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

namespace hearth::sampling {

struct TokenData {
  int32_t id = 0;
  float logit = 0.0f;
  float p = 0.0f;
};

// True when `a` comes before `b` in descending-logit order. Equal logits order by ascending
// id, so every sort here gives the same result on every standard library (the reference
// leaves tie order to its library; vocabulary order is the natural deterministic choice).
inline bool logit_before(const TokenData& a, const TokenData& b) {
  return a.logit > b.logit || (a.logit == b.logit && a.id < b.id);
}

// exp(logit - max_logit) as the reference computes it, with -inf logits weighing exactly 0
// and an infinite maximum not turning into NaN.
float softmax_weight(float logit, float max_logit);

class Candidates {
 public:
  Candidates() = default;
  explicit Candidates(std::span<const float> logits) { assign(logits); }

  // Starts a step: the whole vocabulary in id order, p = 0, unsorted, nothing selected.
  // NaN logits become -inf: a NaN cannot be ordered and means "no usable score" anyway.
  void assign(std::span<const float> logits);
  // Arbitrary entries, e.g. a pre-filtered list; NaN logits become -inf here too.
  void assign(std::vector<TokenData> entries, bool sorted = false);

  size_t size() const { return data_.size(); }
  bool empty() const { return data_.empty(); }
  TokenData& operator[](size_t i) { return data_[i]; }
  const TokenData& operator[](size_t i) const { return data_[i]; }
  std::span<TokenData> entries() { return data_; }
  std::span<const TokenData> entries() const { return data_; }

  // Whether the entries are in logit_before() order.
  bool sorted() const { return sorted_; }
  void set_sorted(bool sorted) { sorted_ = sorted; }

  // Index of the chosen entry; -1 until a selecting stage (dist, greedy) ran.
  int32_t selected() const { return selected_; }
  void select(int32_t index) { selected_ = index; }
  // Token id of the chosen entry; -1 when none is chosen.
  int32_t selected_id() const;

  // Entry 0's logit when sorted, else the largest; -inf when empty.
  float max_logit() const;
  // Index of the first entry holding the largest logit (0 when empty).
  size_t first_max_index() const;
  // Sorts all entries into logit_before() order and marks the array sorted.
  void sort();
  // Puts the k (<= size) first entries of that order in front, sorted; the rest follow in no
  // particular order. Does not change the sorted flag.
  void partial_sort(size_t k);
  // p_i = exp(l_i - max) / sum, in float, summed in the current order (the reference's
  // softmax). When every logit is -inf all p stay 0.
  void softmax();
  // Keeps the first n entries (n >= size keeps all).
  void truncate(size_t n);
  // Keeps the entries for which keep(entry) is true, in their order; returns how many.
  template <typename Pred>
  size_t keep_if(Pred keep) {
    size_t out = 0;
    for (size_t i = 0; i < data_.size(); ++i) {
      if (keep(data_[i])) data_[out++] = data_[i];
    }
    data_.resize(out);
    return out;
  }

 private:
  // A stage may have produced NaN logits (e.g. inf / inf); sorting them would be undefined.
  void drop_nans();

  std::vector<TokenData> data_;
  bool sorted_ = false;
  int32_t selected_ = -1;
};

}  // namespace hearth::sampling
