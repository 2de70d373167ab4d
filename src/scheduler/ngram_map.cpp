#include "scheduler/ngram_map.h"

#include <algorithm>

namespace hearth::scheduler {

namespace {

bool same(const int32_t* a, const int32_t* b, size_t n) {
  return std::equal(a, a + n, b);
}

}  // namespace

NgramMap::NgramMap(const NgramMapParams& params, bool with_values)
    : params_(params), with_values_(with_values) {}

uint64_t NgramMap::hash(const int32_t* tokens) const {
  uint64_t h = 0;
  for (int32_t i = 0; i < params_.size_n; ++i)
    h = h * 6364136223846793005ULL + static_cast<uint64_t>(static_cast<int64_t>(tokens[i])) + 1;
  return h;
}

void NgramMap::begin(std::span<const int32_t> history) {
  starts_.clear();
  next_length_.clear();
  indexed_ = 0;
  last_length_ = 0;
  index_until(history, history.size());
}

// Indexes the n-grams starting below `end` that have a whole m-gram after them in `history`.
void NgramMap::index_until(std::span<const int32_t> history, size_t end) {
  const auto n = static_cast<size_t>(params_.size_n);
  const auto m = static_cast<size_t>(params_.size_m);
  if (history.size() < n + m) return;
  end = std::min(end, history.size() - n - m + 1);
  for (; indexed_ < end; ++indexed_)
    starts_[hash(history.data() + indexed_)].push_back(static_cast<uint32_t>(indexed_));
}

// The indexed starts of `key` in `history`, ascending (hash collisions filtered out).
std::vector<size_t> NgramMap::occurrences(std::span<const int32_t> history,
                                          std::span<const int32_t> key) const {
  std::vector<size_t> at;
  const auto it = starts_.find(hash(key.data()));
  if (it == starts_.end()) return at;
  for (uint32_t s : it->second)
    if (same(history.data() + s, key.data(), key.size())) at.push_back(s);
  return at;
}

// ngram-map-k4v: the m-grams after the key's occurrences (the first four distinct ones are
// counted); the most frequent is used when it is at least twice as frequent as the others
// together.
bool NgramMap::pick_value(std::span<const int32_t> history, const std::vector<size_t>& at,
                          size_t& start) const {
  constexpr size_t kValues = 4;
  const auto n = static_cast<size_t>(params_.size_n);
  const auto m = static_cast<size_t>(params_.size_m);
  std::vector<Value> values;
  for (size_t s : at) {
    const int32_t* v = history.data() + s + n;
    auto found = std::find_if(values.begin(), values.end(),
                              [&](const Value& x) { return same(history.data() + x.start, v, m); });
    if (found != values.end()) {
      ++found->count;
    } else if (values.size() < kValues) {
      values.push_back({s + n, 1});
    }
  }
  if (values.empty()) return false;
  const auto best =
      std::max_element(values.begin(), values.end(),
                       [](const Value& a, const Value& b) { return a.count < b.count; });
  int32_t others = 0;
  for (const Value& v : values) others += v.count;
  others -= best->count;
  if (others > 0 && best->count < 2 * others) return false;
  start = best->start;
  return true;
}

std::vector<int32_t> NgramMap::draft(std::span<const int32_t> history, int32_t sampled) {
  last_length_ = 0;
  const auto n = static_cast<size_t>(params_.size_n);
  if (history.size() + 1 < n) return {};
  std::vector<int32_t> key(history.end() - static_cast<ptrdiff_t>(n - 1), history.end());
  key.push_back(sampled);
  index_until(history, history.size());
  const std::vector<size_t> at = occurrences(history, key);
  if (at.empty() || static_cast<int32_t>(at.size()) < params_.min_hits) return {};
  size_t start = at.back() + n;  // keys only: what followed the most recent occurrence
  if (with_values_ && !pick_value(history, at, start)) return {};
  // Feedback is kept per key, and with values per key and chosen value.
  const uint64_t feedback = hash(key.data()) ^ (with_values_ ? start * 0x9E3779B97F4A7C15ULL : 0);
  const auto remembered = next_length_.find(feedback);
  const int32_t length = remembered == next_length_.end()
                             ? params_.size_m
                             : std::min(params_.size_m, remembered->second);
  last_feedback_ = feedback;
  last_length_ = length;
  return {history.begin() + static_cast<ptrdiff_t>(start),
          history.begin() + static_cast<ptrdiff_t>(start) + length};
}

void NgramMap::accept(int32_t drafted, int32_t accepted) {
  if (last_length_ == 0) return;
  next_length_[last_feedback_] = accepted >= drafted ? params_.size_m : accepted + 1;
  last_length_ = 0;
}

}  // namespace hearth::scheduler
