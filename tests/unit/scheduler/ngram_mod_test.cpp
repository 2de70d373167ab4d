// ngram-mod drafting: a shared table from the hash of n tokens to their successor, chained.
#include <gtest/gtest.h>

#include <vector>

#include "scheduler/ngram_mod.h"

namespace hearth::scheduler {
namespace {

TEST(NgramModDraft, ChainsSuccessorsLearnedFromThePrompt) {
  NgramModTable table(2, 1024);
  NgramModSlot slot;
  // "1 2 3 4 5 6": successors 1 2 -> 3, 2 3 -> 4, 3 4 -> 5, 4 5 -> 6.
  const std::vector<int32_t> prompt = {1, 2, 3, 4, 5, 6};
  ngram_mod_begin(table, slot, prompt);
  EXPECT_EQ(slot.added_until, 4u);
  // After "... 1" the sampled 2 starts the chain 3 4 5 6, then nothing follows 5 6.
  const std::vector<int32_t> history = {9, 9, 1};
  EXPECT_EQ(ngram_mod_draft(table, slot, history, 2, {2, 0, 8}),
            (std::vector<int32_t>{3, 4, 5, 6}));
  EXPECT_EQ(slot.last_draft, 4);
  EXPECT_EQ(ngram_mod_draft(table, slot, history, 2, {2, 0, 2}), (std::vector<int32_t>{3, 4}))
      << "at most n_max";
  EXPECT_TRUE(ngram_mod_draft(table, slot, history, 2, {2, 5, 8}).empty())
      << "the chain breaks before n_min";
  EXPECT_TRUE(ngram_mod_draft(table, slot, history, 7, {2, 0, 8}).empty()) << "1 7 is unknown";
}

TEST(NgramModDraft, LoopsAreDraftedWholeAndFailuresEmptyTheTable) {
  NgramModTable table(3, 1 << 12);
  NgramModSlot slot;
  // A generated loop of period 2, added once more than 32 new tokens arrived.
  std::vector<int32_t> history;
  for (int i = 0; i < 40; ++i) history.push_back(i % 2 == 0 ? 7 : 8);
  const std::vector<int32_t> draft = ngram_mod_draft(table, slot, history, 7, {3, 4, 6});
  EXPECT_EQ(draft, (std::vector<int32_t>{8, 7, 8, 7, 8, 7}));
  EXPECT_GT(table.occupancy(), 0.0);
  // Five drafts in a row with under a quarter accepted empty the table.
  for (int i = 0; i < 5; ++i) ngram_mod_accept(table, slot, 1);
  EXPECT_EQ(table.occupancy(), 0.0);
  EXPECT_EQ(slot.added_until, 0u);
}

TEST(NgramModDraft, ATableOverAQuarterFullIsEmptiedAtBegin) {
  NgramModTable table(1, 4);
  NgramModSlot slot;
  ngram_mod_begin(table, slot, std::vector<int32_t>{1, 2, 3, 4});
  EXPECT_EQ(table.occupancy(), 0.0);
}

}  // namespace
}  // namespace hearth::scheduler
