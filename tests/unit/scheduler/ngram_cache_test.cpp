// ngram-cache drafting (lookup decoding): successor counts of 1- to 4-grams from the
// slot's tokens, an optional dynamic table and a corpus table, and the file format the
// reference's llama-lookup tools write.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "scheduler/ngram_cache.h"

namespace hearth::scheduler {
namespace {

NgramCache counted(const std::vector<int32_t>& tokens) {
  NgramCache cache;
  ngram_cache_update(cache, tokens, tokens.size());
  return cache;
}

TEST(NgramCache, CountsTheSuccessorsOfEveryNgramUpToFourTokens) {
  const NgramCache cache = counted({1, 2, 3, 1, 2, 4});
  const Ngram one_two{{1, 2, -1, -1}};
  ASSERT_TRUE(cache.contains(one_two));
  EXPECT_EQ(cache.at(one_two).at(3), 1);
  EXPECT_EQ(cache.at(one_two).at(4), 1);
  EXPECT_EQ(cache.at(Ngram{{1, -1, -1, -1}}).at(2), 2);
  EXPECT_EQ(cache.at(Ngram{{2, 3, 1, 2}}).at(4), 1);
  // Appending counts only what the new tokens add.
  NgramCache grown = counted({1, 2, 3});
  std::vector<int32_t> more = {1, 2, 3, 1, 2, 4};
  ngram_cache_update(grown, more, 3);
  EXPECT_EQ(grown, cache);
}

TEST(NgramCache, TheContextDraftsALoopUntilNothingIsClear) {
  // 5 6 7 seen twice: after 5, 6 and 7 follow with a sample of 2 (lax threshold).
  const std::vector<int32_t> history = {5, 6, 7, 5, 6, 7};
  NgramCache context = counted({5, 6, 7, 5, 6, 7, 5});
  const auto draft = ngram_cache_draft(history, 5, 4, context, nullptr, nullptr);
  EXPECT_EQ(draft, (std::vector<int32_t>{6, 7, 5, 6}));
  // Seen once only: a 1-gram sample of 1 is below the lax minimum of 2, but the 3-gram
  // 1 2 3 needs only 1.
  const NgramCache once = counted({1, 2, 3, 4});
  EXPECT_EQ(ngram_cache_draft(std::vector<int32_t>{1, 2}, 3, 1, once, nullptr, nullptr),
            (std::vector<int32_t>{4}));
  EXPECT_TRUE(ngram_cache_draft(std::vector<int32_t>{9}, 3, 4, once, nullptr, nullptr).empty());
}

TEST(NgramCache, TheDynamicTableIsStricterAndTheCorpusWeighs) {
  const NgramCache empty;
  // Dynamic: 8 9 -> 10 seen once; the strict 2-gram minimum sample is 3.
  const NgramCache once = counted({8, 9, 10});
  EXPECT_TRUE(ngram_cache_draft(std::vector<int32_t>{8}, 9, 1, empty, &once, nullptr).empty());
  const NgramCache thrice = counted({8, 9, 10, 8, 9, 10, 8, 9, 10});
  EXPECT_EQ(ngram_cache_draft(std::vector<int32_t>{8}, 9, 1, empty, &thrice, nullptr),
            (std::vector<int32_t>{10}));
  // Context: after 1, 2 twice and 3 once; 2 of 3 is at least the 1-gram threshold of 66
  // percent, so 2 is drafted. A corpus that knows 0 1 -> 3 turns the choice.
  const NgramCache context = counted({1, 2, 1, 2, 1, 3});
  EXPECT_EQ(ngram_cache_draft(std::vector<int32_t>{0}, 1, 1, context, nullptr, nullptr),
            (std::vector<int32_t>{2}));
  const NgramCache corpus = counted({0, 1, 3});
  EXPECT_TRUE(ngram_cache_draft(std::vector<int32_t>{0}, 1, 1, context, nullptr, &corpus).empty())
      << "3 wins the weighing but holds a third of the sample, under 66 percent";
  // The corpus alone: 0 1 -> 3 needs a sample of 2.
  const NgramCache corpus2 = counted({0, 1, 3, 0, 1, 3});
  EXPECT_EQ(ngram_cache_draft(std::vector<int32_t>{0}, 1, 1, empty, nullptr, &corpus2),
            (std::vector<int32_t>{3}));
}

class NgramCacheFile : public ::testing::Test {
 protected:
  std::string path_ =
      (std::filesystem::temp_directory_path() /
       ("hearth-lookup-" + std::to_string(::testing::UnitTest::GetInstance()->random_seed()) + "-" +
        ::testing::UnitTest::GetInstance()->current_test_info()->name()))
          .string();
  void TearDown() override { std::filesystem::remove(path_); }
  void write(const std::vector<int32_t>& words) {
    std::ofstream out(path_, std::ios::binary);
    out.write(reinterpret_cast<const char*>(words.data()),
              static_cast<std::streamsize>(words.size() * sizeof(int32_t)));
  }
};

TEST_F(NgramCacheFile, SavesAndLoadsTheReferenceFormat) {
  const NgramCache cache = counted({3, 1, 4, 1, 5, 9, 2, 6, 5, 3, 5});
  ASSERT_TRUE(save_ngram_cache(cache, path_).is_ok());
  auto loaded = load_ngram_cache(path_);
  ASSERT_TRUE(loaded.is_ok()) << loaded.status().message();
  EXPECT_EQ(*loaded, cache);
  // One record written by hand: n-gram 7 8 (padded with -1), successors 9 x2 and 10 x1.
  write({7, 8, -1, -1, 2, 9, 2, 10, 1});
  loaded = load_ngram_cache(path_);
  ASSERT_TRUE(loaded.is_ok());
  EXPECT_EQ(loaded->at(Ngram{{7, 8, -1, -1}}).at(9), 2);
  EXPECT_EQ(loaded->at(Ngram{{7, 8, -1, -1}}).at(10), 1);
}

TEST_F(NgramCacheFile, CorruptFilesAreRefusedWithTheirReason) {
  const std::vector<std::pair<std::vector<int32_t>, std::string>> cases = {
      {{7, 8, -1}, "truncated n-gram"},
      {{7, 8, -1, -1}, "truncated record"},
      {{7, 8, -1, -1, 0}, "without successors"},
      {{7, 8, -1, -1, 2, 9, 1}, "truncated successor list"},
      {{7, 8, -1, -1, 1, 9, 0}, "count below 1"},
      {{7, 8, -1, -1, 1, -4, 1}, "negative token"},
  };
  for (const auto& [words, reason] : cases) {
    write(words);
    const auto loaded = load_ngram_cache(path_);
    ASSERT_FALSE(loaded.is_ok()) << reason;
    EXPECT_EQ(loaded.status().code(), ErrorCode::kCorruptFile);
    EXPECT_NE(loaded.status().message().find(reason), std::string::npos)
        << loaded.status().message();
  }
  const auto missing = load_ngram_cache(path_ + ".absent");
  ASSERT_FALSE(missing.is_ok());
  EXPECT_EQ(missing.status().code(), ErrorCode::kIo);
}

}  // namespace
}  // namespace hearth::scheduler
