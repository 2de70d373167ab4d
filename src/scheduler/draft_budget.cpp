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
  const double per_row = cost.per_row();
  double time = cost.fixed() + per_row * base_rows;
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
      time += per_row;
    }
    if (take[i] < o.length) next.push({gain, i});
  }
  while (!next.empty()) {
    const Next row = next.top();
    next.pop();
    if (row.gain * time <= tokens * per_row) break;  // would lower tokens per second
    tokens += row.gain;
    time += per_row;
    const DraftOffer& o = offers[row.offer];
    if (++take[row.offer] < o.length) next.push({row.gain * o.p_accept, row.offer});
  }
  return take;
}

}  // namespace hearth::scheduler
