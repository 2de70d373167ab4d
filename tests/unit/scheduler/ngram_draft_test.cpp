// ngram-simple drafting: the n tokens ending with the sampled one, found earlier in the
// slot's tokens, propose what followed them there.
#include <gtest/gtest.h>

#include <vector>

#include "scheduler/ngram_draft.h"

namespace hearth::scheduler {
namespace {

TEST(NgramSimpleDraft, CopiesWhatFollowedTheLatestEarlierMatch) {
  const NgramSimpleParams p{2, 3};
  // "5 6" occurs at 1 and at 6; the sampled 6 after the trailing 5 matches, and the most
  // recent earlier occurrence (6) wins: it was followed by 40 41 42.
  const std::vector<int32_t> history = {9, 5, 6, 30, 31, 32, 5, 6, 40, 41, 42, 43, 5};
  EXPECT_EQ(draft_ngram_simple(history, 6, p), (std::vector<int32_t>{40, 41, 42}));
  // With m = 10 the history (13 tokens) is not longer than n + m + 1: no draft.
  EXPECT_EQ(draft_ngram_simple(history, 6, {2, 10}), std::vector<int32_t>{});
  // No earlier "5 7": no draft.
  EXPECT_TRUE(draft_ngram_simple(history, 7, p).empty());
}

TEST(NgramSimpleDraft, NeedsEnoughHistoryAndEnoughToCopy) {
  const NgramSimpleParams p{2, 3};
  // At most n + m + 1 tokens: nothing is drafted.
  EXPECT_TRUE(draft_ngram_simple(std::vector<int32_t>{1, 2, 3, 1, 2, 1}, 2, p).empty());
  // The latest match (at 9) leaves 2 tokens to copy, fewer than n = 3: no draft, though
  // the older match at 1 was followed by 4 5 6.
  const std::vector<int32_t> late = {0, 1, 2, 3, 4, 5, 6, 9, 9, 1, 2, 3, 1, 2};
  EXPECT_TRUE(draft_ngram_simple(late, 3, {3, 3}).empty());
  EXPECT_EQ(draft_ngram_simple(std::vector<int32_t>(late.begin(), late.begin() + 12), 3, {3, 3}),
            std::vector<int32_t>{})
      << "the pattern 2 3 3 does not occur";
  // A match at position 0 is never used.
  const std::vector<int32_t> first = {1, 2, 50, 51, 52, 0, 0, 0, 0, 1};
  EXPECT_TRUE(draft_ngram_simple(first, 2, p).empty());
  EXPECT_TRUE(draft_ngram_simple(first, 2, {0, 3}).empty()) << "n must be at least 1";
}

}  // namespace
}  // namespace hearth::scheduler
