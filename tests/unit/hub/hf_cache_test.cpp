// The Hugging Face hub cache as llama-server reads it: where it is, which repository ids
// and commits are valid, how GGUF names split into tag and part, and what -cl lists from a
// cache tree built here.
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <optional>
#include <string>
#include <vector>

#include "hub/hf_cache.h"
#include "support/test_paths.h"

namespace hearth::hub {
namespace {

namespace fs = std::filesystem;

constexpr const char* kCacheVars[] = {"LLAMA_CACHE", "HF_HUB_CACHE",   "HUGGINGFACE_HUB_CACHE",
                                      "HF_HOME",     "XDG_CACHE_HOME", "HOME"};

// Saves the cache variables and clears them; restores them at the end.
class CacheEnv : public ::testing::Test {
 protected:
  void SetUp() override {
    for (const char* v : kCacheVars) {
      const char* value = std::getenv(v);
      saved_.emplace_back(value ? std::optional<std::string>(value) : std::nullopt);
      unsetenv(v);
    }
    dir_ = test::make_temp_dir("hf_cache");
  }
  void TearDown() override {
    for (size_t i = 0; i < saved_.size(); ++i) {
      if (saved_[i]) {
        setenv(kCacheVars[i], saved_[i]->c_str(), 1);
      } else {
        unsetenv(kCacheVars[i]);
      }
    }
    fs::remove_all(dir_);
  }
  // Writes `file` under the snapshot `commit` of `folder` and points refs/`ref` at it.
  void cached(const std::string& folder, const std::string& ref, const std::string& commit,
              const std::string& file) {
    const fs::path repo = fs::path(dir_) / folder;
    fs::create_directories(repo / "refs");
    std::ofstream(repo / "refs" / ref) << commit;
    const fs::path path = repo / "snapshots" / commit / file;
    fs::create_directories(path.parent_path());
    std::ofstream(path) << "GGUF";
  }
  std::vector<std::optional<std::string>> saved_;
  std::string dir_;
};

const std::string kCommit(40, 'a');
const std::string kOther = std::string(39, 'b') + "c";

TEST_F(CacheEnv, TheDirectoryFollowsTheEnvironmentInOrder) {
  setenv("HOME", "/home/u", 1);
  EXPECT_EQ(*cache_directory(), "/home/u/.cache/huggingface/hub");
  setenv("XDG_CACHE_HOME", "/xdg", 1);
  EXPECT_EQ(*cache_directory(), "/xdg/huggingface/hub");
  setenv("HF_HOME", "/hf", 1);
  EXPECT_EQ(*cache_directory(), "/hf/hub");
  setenv("HUGGINGFACE_HUB_CACHE", "/old", 1);
  EXPECT_EQ(*cache_directory(), "/old");
  setenv("HF_HUB_CACHE", "/hub", 1);
  EXPECT_EQ(*cache_directory(), "/hub");
  setenv("LLAMA_CACHE", "/llama", 1);
  EXPECT_EQ(*cache_directory(), "/llama");
  setenv("LLAMA_CACHE", "", 1);  // empty counts as unset
  EXPECT_EQ(*cache_directory(), "/hub");
}

TEST(HubNames, RepositoryIdsAndCommits) {
  for (const char* ok : {"ggml-org/gemma-3-1b-it-GGUF", "a/b", "user_1/model.v2", "A/B_"})
    EXPECT_TRUE(is_valid_repo_id(ok)) << ok;
  for (const char* bad :
       {"", "model", "a/b/c", "/a", "a/", "a//b", "a/-b", "a.-b/c", "a b/c", "a/b:Q4", "-a/b"})
    EXPECT_FALSE(is_valid_repo_id(bad)) << bad;
  EXPECT_FALSE(is_valid_repo_id(std::string(200, 'a') + "/" + std::string(60, 'b')));
  EXPECT_TRUE(is_valid_commit(kCommit));
  EXPECT_TRUE(is_valid_commit("0123456789abcdefABCDEF0123456789abcdef01"));
  EXPECT_FALSE(is_valid_commit(std::string(39, 'a')));
  EXPECT_FALSE(is_valid_commit(std::string(39, 'a') + "g"));
}

TEST(HubNames, GgufNamesSplitIntoTagAndPart) {
  GgufName n = split_gguf_name("dir/Model-Q4_K_M-00002-of-00003.gguf");
  EXPECT_EQ(n.prefix, "dir/Model-Q4_K_M");
  EXPECT_EQ(n.tag, "Q4_K_M");
  EXPECT_EQ(n.index, 2);
  EXPECT_EQ(n.count, 3);
  n = split_gguf_name("model.q8_0.gguf");
  EXPECT_EQ(n.tag, "Q8_0");
  EXPECT_EQ(n.index, 1);
  EXPECT_EQ(n.count, 1);
  EXPECT_EQ(split_gguf_name("model.gguf").tag, "");
  EXPECT_EQ(split_gguf_name("dir/model.gguf").tag, "");
  EXPECT_EQ(split_gguf_name("README.md").prefix, "");
  n = split_gguf_name("m-IQ4_XS-00001-OF-00002.gguf");
  EXPECT_EQ(n.prefix, "m-IQ4_XS");
  EXPECT_EQ(n.tag, "IQ4_XS");
  EXPECT_EQ(n.count, 2);
  n = split_gguf_name("m-00001-of-0002.gguf");  // four digits: not a split part
  EXPECT_EQ(n.index, 1);
  EXPECT_EQ(n.prefix, "m-00001-of-0002");
  EXPECT_EQ(n.tag, "0002");
}

TEST_F(CacheEnv, ListsTheModelsOfEachRepositorysRef) {
  setenv("LLAMA_CACHE", dir_.c_str(), 1);
  EXPECT_EQ(cache_list_text(), "number of models in cache: 0\n");
  cached("models--ggml-org--tiny-GGUF", "main", kCommit, "tiny-Q4_K_M.gguf");
  cached("models--ggml-org--tiny-GGUF", "main", kCommit, "tiny-Q8_0.gguf");
  cached("models--ggml-org--tiny-GGUF", "main", kCommit, "mmproj-tiny-F16.gguf");
  cached("models--ggml-org--tiny-GGUF", "main", kCommit, "README.md");
  cached("models--ggml-org--tiny-GGUF", "main", kCommit, "untagged.gguf");
  // Split: only the first part counts; the tag is the prefix's.
  cached("models--u--big", "main", kCommit, "Q6_K/big-Q6_K-00001-of-00002.gguf");
  cached("models--u--big", "main", kCommit, "Q6_K/big-Q6_K-00002-of-00002.gguf");
  // A file of a snapshot no ref points at is not listed; a branch other than main serves
  // when main is missing.
  cached("models--u--big", "main", kCommit, "big-F16.gguf");
  fs::rename(fs::path(dir_) / "models--u--big/snapshots" / kCommit / "big-F16.gguf",
             fs::path(dir_) / "models--u--big/snapshots/stale.gguf");
  cached("models--u--branch", "dev", kOther, "b-BF16.gguf");
  // Not repositories: another kind of folder, a bad id, a ref that is not a commit.
  cached("datasets--u--data", "main", kCommit, "d-Q4_0.gguf");
  cached("models--bad--id--x", "main", kCommit, "x-Q4_0.gguf");
  cached("models--u--badref", "main", "not-a-commit", "y-Q4_0.gguf");
  EXPECT_EQ(cache_list_text(),
            "number of models in cache: 4\n"
            "   1. ggml-org/tiny-GGUF:Q4_K_M\n"
            "   2. ggml-org/tiny-GGUF:Q8_0\n"
            "   3. u/big:Q6_K\n"
            "   4. u/branch:BF16\n");
  const std::vector<CachedFile> big = cached_files("u/big");
  ASSERT_EQ(big.size(), 2u);
  EXPECT_EQ(big[0].path, "Q6_K/big-Q6_K-00001-of-00002.gguf");
  EXPECT_EQ(big[0].local_path,
            (fs::path(dir_) / "models--u--big/snapshots" / kCommit / big[0].path).string());
  EXPECT_TRUE(cached_files("u/none").empty());
  EXPECT_TRUE(cached_files("not valid").empty());
}

}  // namespace
}  // namespace hearth::hub
