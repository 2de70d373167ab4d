// The draft budget: a forward call's cost fitted as fixed + per_row x rows, and drafted rows
// verified only while each raises the step's expected tokens per second.
#include <gtest/gtest.h>

#include <vector>

#include "scheduler/draft_budget.h"

namespace hearth::scheduler {
namespace {

StepCostModel fitted(double fixed, double per_row, std::vector<int32_t> rows) {
  StepCostModel m;
  for (int32_t r : rows) m.observe(r, fixed + per_row * r);
  return m;
}

TEST(StepCostModel, FitsTheFixedAndPerRowCost) {
  const StepCostModel m = fitted(0.05, 0.01, {1, 4, 1, 9, 2, 16, 1, 3});
  EXPECT_NEAR(m.fixed(), 0.05, 1e-9);
  EXPECT_NEAR(m.per_row(), 0.01, 1e-9);
  // One row count only: the slope is unknown and a share of the mean time is assumed.
  const StepCostModel flat = fitted(0.05, 0.01, {1, 1, 1});
  EXPECT_NEAR(flat.per_row(), StepCostModel::kPriorRowShare * 0.06, 1e-9);
  EXPECT_NEAR(flat.fixed() + flat.per_row(), 0.06, 1e-9);
  EXPECT_TRUE(StepCostModel().empty());
}

TEST(DraftBudget, ABandwidthBoundStepVerifiesLikelyDraftsWhole) {
  const StepCostModel cheap_rows = fitted(0.05, 0.001, {1, 2, 8});
  EXPECT_EQ(allocate_draft_rows({{0.9, 16}}, 1, 1, cheap_rows), (std::vector<int32_t>{16}));
  // An unlikely draft is cut where p^k stops paying for its row.
  const std::vector<int32_t> cut = allocate_draft_rows({{0.3, 16}}, 1, 1, cheap_rows);
  EXPECT_GT(cut[0], 0);
  EXPECT_LT(cut[0], 16);
}

TEST(DraftBudget, AComputeBoundStepSpendsRowsOnTheLikeliestDrafts) {
  const StepCostModel dear_rows = fitted(0.01, 0.01, {1, 8, 16});
  // Eight slots decoding: a coin-flip draft would lower the step's tokens per second.
  EXPECT_EQ(allocate_draft_rows({{0.5, 8}}, 8, 8, dear_rows), (std::vector<int32_t>{0}));
  // A near-certain one still pays, and it is served before a doubtful one.
  const std::vector<int32_t> take = allocate_draft_rows({{0.4, 8}, {0.99, 8}}, 8, 8, dear_rows);
  EXPECT_EQ(take[0], 0);
  EXPECT_GT(take[1], 0);
}

// Measured often enough, each row count's own average replaces the line: with a convex
// curve (a second row nearly free, later ones dear) a p = 0.8 draft is cut at 3 rows, where
// the next row would lower tokens per second: (1 + .8 + .64 + .512) / t(4) = 2.952 / 24.4
// beats 3.36 / t(5) = 3.36 / 28.6; a surer draft runs further.
TEST(DraftBudget, MeasuredRowCountsBendTheCostCurve) {
  const auto t = [](int32_t r) { return 0.019 + 0.0006 * (r - 1) * (r - 1); };
  StepCostModel convex;
  for (int round = 0; round < 3; ++round)
    for (int32_t r = 1; r <= 9; ++r) convex.observe(r, t(r));
  const std::vector<double> times = convex.times(9);
  EXPECT_NEAR(times[4], t(4), 1e-12);
  EXPECT_EQ(allocate_draft_rows({{0.8, 8}}, 1, 1, convex), (std::vector<int32_t>{3}));
  EXPECT_GT(allocate_draft_rows({{0.95, 8}}, 1, 1, convex)[0], 3);
  // Times never fall with more rows, even where a noisy average would.
  StepCostModel noisy = fitted(0.02, 0.001, {1, 1, 1, 2, 2, 2});
  for (int i = 0; i < 3; ++i) noisy.observe(3, 0.015);
  const std::vector<double> monotone = noisy.times(3);
  EXPECT_GE(monotone[3], monotone[2]);
}

TEST(DraftBudget, ASourceWithoutARecordGetsItsFirstRows) {
  const StepCostModel dear_rows = fitted(0.01, 0.01, {1, 8, 16});
  EXPECT_EQ(allocate_draft_rows({{0.5, 8, 1}}, 8, 8, dear_rows), (std::vector<int32_t>{1}));
  EXPECT_EQ(allocate_draft_rows({{0.5, 1, 3}}, 8, 8, dear_rows), (std::vector<int32_t>{1}));
}

TEST(DraftBudget, NothingMeasuredYetVerifiesEveryDraft) {
  EXPECT_EQ(allocate_draft_rows({{0.1, 5}, {0.9, 3}}, 4, 4, StepCostModel()),
            (std::vector<int32_t>{5, 3}));
}

}  // namespace
}  // namespace hearth::scheduler
