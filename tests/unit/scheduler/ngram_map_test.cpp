// ngram-map-k and ngram-map-k4v drafting: the key (n tokens ending with the sampled one)
// found earlier in the slot's tokens proposes the m tokens after it.
#include <gtest/gtest.h>

#include <vector>

#include "scheduler/ngram_map.h"

namespace hearth::scheduler {
namespace {

TEST(NgramMapDraft, KeysOnlyCopiesWhatFollowedTheLatestOccurrence) {
  NgramMap map({2, 3, 1}, false);
  // 5 6 is followed by 1 2 3 at position 0 and by 7 8 9 at position 6.
  const std::vector<int32_t> history = {5, 6, 1, 2, 3, 0, 5, 6, 7, 8, 9, 0, 4, 5};
  map.begin(history);
  EXPECT_EQ(map.draft(history, 6), (std::vector<int32_t>{7, 8, 9})) << "the latest occurrence";
  EXPECT_TRUE(map.draft(history, 4).empty()) << "5 4 was never seen";
}

TEST(NgramMapDraft, AnOccurrenceWithoutAWholeMGramAfterItIsNotUsed) {
  NgramMap map({2, 4, 1}, false);
  const std::vector<int32_t> history = {1, 2, 3, 4, 5, 6, 1, 2, 3, 9, 1};
  map.begin(history);
  // 1 2 at 0 has 3 4 5 6 after it; 1 2 at 6 has only 3 9 1.
  EXPECT_EQ(map.draft(history, 2), (std::vector<int32_t>{3, 4, 5, 6}));
}

TEST(NgramMapDraft, MinHitsNeedsThatManyEarlierOccurrences) {
  const std::vector<int32_t> history = {1, 2, 3, 4, 0, 1, 2, 3, 4, 0, 1};
  NgramMap twice({2, 2, 2}, false);
  twice.begin(history);
  EXPECT_EQ(twice.draft(history, 2), (std::vector<int32_t>{3, 4}));
  NgramMap thrice({2, 2, 3}, false);
  thrice.begin(history);
  EXPECT_TRUE(thrice.draft(history, 2).empty());
}

TEST(NgramMapDraft, PartlyAcceptedDraftsShrinkAndWholeOnesGrowBack) {
  NgramMap map({1, 4, 1}, false);
  const std::vector<int32_t> history = {7, 1, 2, 3, 4, 0};
  map.begin(history);
  ASSERT_EQ(map.draft(history, 7).size(), 4u);
  map.accept(4, 1);
  EXPECT_EQ(map.draft(history, 7), (std::vector<int32_t>{1, 2})) << "accepted 1, so 1 + 1";
  map.accept(2, 2);
  EXPECT_EQ(map.draft(history, 7).size(), 4u) << "accepted whole: m again";
}

TEST(NgramMapDraft, ValuesNeedAClearMajority) {
  NgramMap map({1, 2, 1}, true);
  // After 9: 1 1 twice and 2 2 once; 2 >= 2 * 1, so 1 1 is proposed.
  std::vector<int32_t> history = {9, 1, 1, 9, 2, 2, 9, 1, 1, 0, 0};
  map.begin(history);
  EXPECT_EQ(map.draft(history, 9), (std::vector<int32_t>{1, 1}));
  // A third value seen once more: 2 < 2 * (1 + 1), no draft.
  history = {9, 1, 1, 9, 2, 2, 9, 1, 1, 9, 3, 3, 0, 0};
  NgramMap tied({1, 2, 1}, true);
  tied.begin(history);
  EXPECT_TRUE(tied.draft(history, 9).empty());
  // Keys only takes the latest (3 3) regardless.
  NgramMap keys({1, 2, 1}, false);
  keys.begin(history);
  EXPECT_EQ(keys.draft(history, 9), (std::vector<int32_t>{3, 3}));
}

TEST(NgramMapDraft, TheIndexGrowsWithTheSequence) {
  NgramMap map({2, 2, 1}, false);
  std::vector<int32_t> history = {4, 4};
  map.begin(history);
  EXPECT_TRUE(map.draft(history, 4).empty());
  for (int32_t t : {5, 6, 7, 4}) history.push_back(t);
  EXPECT_EQ(map.draft(history, 5), (std::vector<int32_t>{6, 7})) << "4 5 arrived after begin";
  // A new request rebuilds the index over its own tokens.
  const std::vector<int32_t> other = {8, 8, 8};
  map.begin(other);
  EXPECT_TRUE(map.draft(other, 5).empty());
}

}  // namespace
}  // namespace hearth::scheduler
