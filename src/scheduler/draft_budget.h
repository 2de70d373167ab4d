// Which drafted tokens a step verifies. A verified row costs compute: a forward call takes
// time(rows), nearly flat while the weights' bandwidth is the bound and rising once the
// arithmetic per row is, and a drafted token at depth k of a slot's draft yields a token
// only when the k before it were accepted too, with probability about p^k for the slot's
// per-token acceptance rate p. The step's throughput is E / time(rows) (expected tokens
// over time); candidate rows are taken in order of gain, most likely first across all
// slots, while each one raises it: alone on a bandwidth-bound step long drafts pay, while
// in a step already full of rows only near-certain ones do.
#pragma once

#include <array>
#include <cstdint>
#include <vector>

namespace hearth::scheduler {

// A step's time against its rows, measured. Row counts seen often enough are known by
// their own average (the curve is not a line: a second row is nearly free, the eighth is
// not); the others by a line fixed + per_row x rows fitted by exponentially weighted least
// squares over recent steps, with per_row a fraction of the mean time (kPriorRowShare)
// until the steps have covered different row counts.
class StepCostModel {
 public:
  static constexpr double kPriorRowShare = 0.125;
  static constexpr double kDecay = 0.98;     // weight kept by older steps at each new one
  static constexpr int32_t kTableRows = 64;  // row counts averaged on their own
  static constexpr int32_t kSeenEnough = 3;  // steps of a row count before its average is used
  static constexpr double kTableRate = 0.2;  // weight of a new step in its row count's average

  void observe(int32_t rows, double seconds);
  double fixed() const;
  double per_row() const;
  // Expected time of a step of `rows` rows; never less than that of fewer rows.
  std::vector<double> times(int32_t max_rows) const;
  bool empty() const { return w_ == 0.0; }

 private:
  void fit(double& fixed, double& per_row) const;
  double w_ = 0, x_ = 0, y_ = 0, xx_ = 0, xy_ = 0;
  std::array<double, kTableRows + 1> mean_{};
  std::array<int32_t, kTableRows + 1> seen_{};
};

// A slot's draft as proposed: its per-token acceptance estimate, its length, and the rows
// verified regardless (a source with too few verified drafts to estimate from still gets
// its first row checked, so no source is starved by its prior).
struct DraftOffer {
  double p_accept = 0.5;
  int32_t length = 0;
  int32_t min_rows = 0;
};

// The number of draft tokens to verify for each offer, for a step that already holds
// `base_rows` rows (prompt and decode) of which `base_tokens` each yield a token.
std::vector<int32_t> allocate_draft_rows(const std::vector<DraftOffer>& offers, int32_t base_rows,
                                         int32_t base_tokens, const StepCostModel& cost);

}  // namespace hearth::scheduler
