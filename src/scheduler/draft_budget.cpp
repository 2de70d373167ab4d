#include "scheduler/draft_budget.h"

#include <algorithm>
#include <queue>

namespace hearth::scheduler {

void StepCostModel::observe(int32_t rows, double seconds) {
  const double x = rows;
  w_ = w_ * kDecay + 1;
  x_ = x_ * kDecay + x;
  y_ = y_ * kDecay + seconds;
  xx_ = xx_ * kDecay + x * x;
  xy_ = xy_ * kDecay + x * seconds;
  if (rows >= 1 && rows <= kTableRows) {
    const auto r = static_cast<size_t>(rows);
    mean_[r] = seen_[r] == 0 ? seconds : mean_[r] + kTableRate * (seconds - mean_[r]);
    ++seen_[r];
  }
}

std::vector<double> StepCostModel::times(int32_t max_rows) const {
  double fixed = 0, per_row = 0;
  fit(fixed, per_row);
  std::vector<double> t(static_cast<size_t>(std::max(max_rows, 0)) + 1, 0.0);
  for (int32_t r = 1; r <= max_rows; ++r) {
    const auto i = static_cast<size_t>(r);
    const bool known = r <= kTableRows && seen_[i] >= kSeenEnough;
    t[i] = std::max(t[i - 1], known ? mean_[i] : fixed + per_row * r);
  }
  return t;
}

void StepCostModel::fit(double& fixed, double& per_row) const {
  fixed = per_row = 0;
  if (w_ == 0) return;
  const double mx = x_ / w_, my = y_ / w_;
  const double var = xx_ / w_ - mx * mx;
  // Rows spread by under a quarter row: the slope is not identified.
  if (var > 0.25) {
    per_row = (xy_ / w_ - mx * my) / var;
    fixed = my - per_row * mx;
  }
  if (var <= 0.25 || per_row <= 0 || fixed < 0) {
    per_row = kPriorRowShare * my / std::max(mx, 1.0);
    fixed = std::max(0.0, my - per_row * mx);
  }
}

double StepCostModel::fixed() const {
  double f = 0, r = 0;
  fit(f, r);
  return f;
}

double StepCostModel::per_row() const {
  double f = 0, r = 0;
  fit(f, r);
  return r;
}

std::vector<int32_t> allocate_draft_rows(const std::vector<DraftOffer>& offers, int32_t base_rows,
                                         int32_t base_tokens, const StepCostModel& cost) {
  std::vector<int32_t> take(offers.size(), 0);
  if (cost.empty()) {  // nothing measured yet: verify every draft as proposed
    for (size_t i = 0; i < offers.size(); ++i) take[i] = offers[i].length;
    return take;
  }
  int32_t most = base_rows;
  for (const DraftOffer& o : offers) most += o.length;
  const std::vector<double> time = cost.times(most);
  auto rows = static_cast<size_t>(std::max(base_rows, 1));
  double tokens = base_tokens;
  // The next row of each offer and its gain p^(k+1); rows of one offer come in order.
  struct Next {
    double gain;
    size_t offer;
    bool operator<(const Next& o) const { return gain < o.gain; }
  };
  std::priority_queue<Next> next;
  for (size_t i = 0; i < offers.size(); ++i) {
    const DraftOffer& o = offers[i];
    double gain = o.p_accept;
    for (; take[i] < std::min(o.min_rows, o.length); ++take[i], gain *= o.p_accept) {
      tokens += gain;
      ++rows;
    }
    if (take[i] < o.length) next.push({gain, i});
  }
  while (!next.empty() && rows + 1 < time.size()) {
    const Next row = next.top();
    next.pop();
    // Taken only when it raises expected tokens per second.
    if ((tokens + row.gain) * time[rows] <= tokens * time[rows + 1]) break;
    tokens += row.gain;
    ++rows;
    const DraftOffer& o = offers[row.offer];
    if (++take[row.offer] < o.length) next.push({row.gain * o.p_accept, row.offer});
  }
  return take;
}

}  // namespace hearth::scheduler
