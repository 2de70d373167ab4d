// Which drafted tokens a step verifies. A verified row costs compute: on a CPU a forward
// call takes about fixed + per_row x rows (weights streamed once, then arithmetic per row),
// and a drafted token at depth k of a slot's draft yields a token only when the k before it
// were accepted too, with probability about p^k for the slot's per-token acceptance rate p.
// The step's throughput is E / T (expected tokens over time); a row of gain g and cost
// per_row raises it exactly when g / per_row > E / T. So candidate rows are taken in order
// of gain, most likely first across all slots, while that holds: alone on a bandwidth-bound
// step long drafts pay, while in a step already full of rows only near-certain ones do.
#pragma once

#include <cstdint>
#include <vector>

namespace hearth::scheduler {

// time = fixed + per_row x rows for a forward call, fitted by exponentially weighted least
// squares over recent calls. Until the calls have covered different row counts, per_row is
// taken as a fraction of the mean time (kPriorRowShare).
class StepCostModel {
 public:
  static constexpr double kPriorRowShare = 0.125;
  static constexpr double kDecay = 0.98;  // weight kept by older calls at each new one

  void observe(int32_t rows, double seconds);
  double fixed() const;
  double per_row() const;
  bool empty() const { return w_ == 0.0; }

 private:
  void fit(double& fixed, double& per_row) const;
  double w_ = 0, x_ = 0, y_ = 0, xx_ = 0, xy_ = 0;
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
