#include "sampling/dry.h"

#include <algorithm>
#include <cmath>
#include <utility>

namespace hearth::sampling {
namespace {

// z[k] = length of the longest common prefix of `s` and s[k..] (z[0] = size). With the
// history newest first, z[k] is the length of the repeat whose earlier copy ends k tokens
// before the newest token, in O(N) where a direct comparison would be O(N^2).
std::vector<int32_t> prefix_match_lengths(std::span<const int32_t> s) {
  const size_t n = s.size();
  std::vector<int32_t> z(n, 0);
  if (n == 0) return z;
  z[0] = static_cast<int32_t>(n);
  size_t left = 0;
  size_t right = 0;  // s[left..right) matches s[0..right-left)
  for (size_t k = 1; k < n; ++k) {
    size_t length = 0;
    if (k < right) length = std::min(right - k, static_cast<size_t>(z[k - left]));
    while (k + length < n && s[length] == s[k + length]) ++length;
    z[k] = static_cast<int32_t>(length);
    if (k + length > right) {
      left = k;
      right = k + length;
    }
  }
  return z;
}

// floor(ln(FLT_MAX) / ln(base)): base^exponent beyond it overflows float.
int32_t max_exponent(float base) {
  constexpr float kLogFloatMax = 88.7228391f;
  if (!(base > 1.000001f)) return 0;
  return static_cast<int32_t>(kLogFloatMax / std::log(base));
}

}  // namespace

bool dry_enabled(const DryParams& params) {
  return params.multiplier != 0.0f && params.base >= 1.0f && params.last_n > 0;
}

DryStage::DryStage(const DryParams& params, DryBreakers breakers)
    : params_(params), enabled_(dry_enabled(params)), breakers_(std::move(breakers)) {}

void DryStage::accept(int32_t token) {
  if (!enabled_) return;
  history_.push_back(token);
  if (history_.size() > static_cast<size_t>(params_.last_n)) history_.pop_front();
}

int32_t DryStage::repeat_limit(std::span<const int32_t> newest_first) const {
  const auto n = static_cast<int32_t>(newest_first.size());
  for (int32_t i = 0; i < n; ++i) {
    const auto it = breakers_.tails.find(newest_first[static_cast<size_t>(i)]);
    if (it == breakers_.tails.end()) continue;
    int32_t longest = -1;
    for (const std::vector<int32_t>& tail : it->second) {
      const auto length = static_cast<int32_t>(tail.size());
      if (length <= longest || length > i) continue;
      // The tail continues toward newer tokens: tail[k] is the token k + 1 steps after the
      // head.
      bool match = true;
      for (int32_t k = 0; k < length && match; ++k) {
        match = tail[static_cast<size_t>(k)] == newest_first[static_cast<size_t>(i - 1 - k)];
      }
      if (match) longest = length;
    }
    if (longest >= 0) return i - longest;
  }
  return n;
}

std::optional<std::unordered_map<int32_t, int32_t>> DryStage::repeat_lengths() const {
  const int32_t allowed = params_.allowed_length;
  if (!enabled_ || static_cast<int64_t>(history_.size()) <= allowed) return std::nullopt;
  const std::vector<int32_t> newest_first(history_.rbegin(), history_.rend());
  const int32_t limit = repeat_limit(newest_first);
  if (limit < allowed) return std::nullopt;
  std::unordered_map<int32_t, int32_t> lengths;
  const std::vector<int32_t> z = prefix_match_lengths(newest_first);
  for (size_t k = 1; k < newest_first.size(); ++k) {
    const int32_t length = std::min(z[k], limit);
    if (length < allowed) continue;
    // The token that followed the earlier copy of the repeat.
    int32_t& recorded = lengths[newest_first[k - 1]];
    recorded = std::max(recorded, length);
  }
  return lengths;
}

void DryStage::apply(Candidates& candidates) {
  const auto lengths = repeat_lengths();
  if (!lengths) return;
  const int32_t cap = max_exponent(params_.base);
  for (TokenData& entry : candidates.entries()) {
    const auto it = lengths->find(entry.id);
    if (it == lengths->end() || breakers_.is_single_token_breaker(entry.id)) continue;
    int32_t exponent = it->second - params_.allowed_length;
    if (cap > 0 && exponent > cap) exponent = cap;
    // The power in double, as std::pow(float, int) computes it; the result rounds to float.
    const double penalty = static_cast<double>(params_.multiplier) *
                           std::pow(static_cast<double>(params_.base), exponent);
    entry.logit = static_cast<float>(static_cast<double>(entry.logit) - penalty);
  }
  candidates.set_sorted(false);
}

}  // namespace hearth::sampling
