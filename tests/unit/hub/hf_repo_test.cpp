// Choosing a repository's model files (-hf user/model[:tag], -hff), URL parts (-mu), tokens,
// the endpoint, file oids and the progress line.
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>

#include "hub/download.h"
#include "hub/hf_repo.h"
#include "hub/http_client.h"
#include "hub/model_source.h"
#include "hub/progress.h"
#include "support/test_paths.h"

namespace hearth::hub {
namespace {

std::vector<RepoFile> files_named(const std::vector<std::string>& paths) {
  std::vector<RepoFile> files;
  for (const std::string& p : paths) {
    RepoFile f;
    f.repo_id = "u/m";
    f.path = p;
    files.push_back(f);
  }
  return files;
}

std::vector<std::string> chosen(const std::vector<std::string>& paths, const std::string& tag,
                                const std::string& file = "") {
  auto r = select_model_files(files_named(paths), "u/m", tag, file);
  if (!r.is_ok()) return {"error: " + r.status().message()};
  std::vector<std::string> out;
  for (const RepoFile& f : *r) out.push_back(f.path);
  return out;
}

TEST(HubSelect, DefaultIsQ4KMThenQ8ThenTheFirstModel) {
  const std::vector<std::string> all = {"README.md", "m-F16.gguf", "m-Q8_0.gguf", "m-Q4_K_M.gguf",
                                        "mmproj-m-F16.gguf"};
  EXPECT_EQ(chosen(all, ""), std::vector<std::string>{"m-Q4_K_M.gguf"});
  EXPECT_EQ(chosen({"m-F16.gguf", "m-Q8_0.gguf"}, ""), std::vector<std::string>{"m-Q8_0.gguf"});
  // Projectors, imatrix files and draft sidecars are never the model.
  EXPECT_EQ(chosen({"mmproj-m.gguf", "m.imatrix.gguf", "mtp-m.gguf", "m-BF16.gguf"}, ""),
            std::vector<std::string>{"m-BF16.gguf"});
  EXPECT_EQ(chosen({"README.md"}, "")[0].rfind("error: no GGUF file found", 0), 0u);
}

TEST(HubSelect, TagMatchesAnyCaseFollowedByDotOrDash) {
  const std::vector<std::string> all = {"m-Q4_K_M.gguf", "m-Q4_K_S.gguf", "dir/m-q8_0-x.gguf"};
  EXPECT_EQ(chosen(all, "q4_k_s"), std::vector<std::string>{"m-Q4_K_S.gguf"});
  EXPECT_EQ(chosen(all, "Q8_0"), std::vector<std::string>{"dir/m-q8_0-x.gguf"});
  // "Q4_K" is not followed by '.' or '-' in either name.
  const std::string err = chosen(all, "Q4_K")[0];
  EXPECT_NE(err.find("no GGUF file with tag 'Q4_K' found in repository u/m"), std::string::npos)
      << err;
  EXPECT_NE(err.find("m-Q4_K_M.gguf, m-Q4_K_S.gguf"), std::string::npos) << err;
}

TEST(HubSelect, SplitModelsBringEveryPartInOrder) {
  const std::vector<std::string> all = {"m-Q8_0-00002-of-00003.gguf", "m-Q8_0-00003-of-00003.gguf",
                                        "m-Q8_0-00001-of-00003.gguf", "m-F16.gguf"};
  EXPECT_EQ(chosen(all, "Q8_0"),
            (std::vector<std::string>{"m-Q8_0-00001-of-00003.gguf", "m-Q8_0-00002-of-00003.gguf",
                                      "m-Q8_0-00003-of-00003.gguf"}));
  const std::string missing =
      chosen({"m-Q8_0-00001-of-00003.gguf", "m-Q8_0-00003-of-00003.gguf"}, "Q8_0")[0];
  EXPECT_NE(missing.find("is split into 3 parts but repository u/m has 2 of them"),
            std::string::npos)
      << missing;
}

TEST(HubSelect, HffNamesTheExactFile) {
  EXPECT_EQ(chosen({"a.gguf", "b.gguf"}, "Q8_0", "b.gguf"), std::vector<std::string>{"b.gguf"});
  EXPECT_EQ(chosen({"a.gguf"}, "", "c.gguf")[0].rfind("error: file 'c.gguf' not found", 0), 0u);
}

// The projector llama-server's find_best_mmproj picks for `model` ("" for none).
std::string projector_for(const std::vector<std::string>& paths, const std::string& model) {
  const auto chosen = select_projector_file(files_named(paths), model);
  return chosen ? chosen->path : "";
}

TEST(HubProjector, ClosestQuantizationWinsThenTheListingOrder) {
  const std::vector<std::string> all = {"m-Q4_K_M.gguf", "mmproj-m-F16.gguf", "mmproj-m-Q8_0.gguf",
                                        "mmproj-m-BF16.gguf"};
  EXPECT_EQ(projector_for(all, "m-Q4_K_M.gguf"), "mmproj-m-Q8_0.gguf");  // |4-8| < |4-16|
  EXPECT_EQ(projector_for(all, "m-F16.gguf"), "mmproj-m-F16.gguf");      // F16 before BF16
  EXPECT_EQ(projector_for(all, "m-Q8_0.gguf"), "mmproj-m-Q8_0.gguf");
  // A model name without a number in its tag counts 0 bits: the lowest projector wins.
  EXPECT_EQ(projector_for(all, "model.gguf"), "mmproj-m-Q8_0.gguf");
  EXPECT_EQ(projector_for({"mmproj.gguf", "mmproj-Q8_0.gguf"}, "m-Q4_0.gguf"), "mmproj.gguf");
  // "mmproj" anywhere in the path, lower case, and only GGUF files.
  EXPECT_EQ(projector_for({"MMPROJ-m.gguf", "mmproj-m.bin", "m.gguf"}, "m.gguf"), "");
  EXPECT_EQ(projector_for({"vision-mmproj/p-F16.gguf"}, "vision-mmproj/m-F16.gguf"),
            "vision-mmproj/p-F16.gguf");
  // A tag too long for an int does not break the choice.
  EXPECT_EQ(projector_for({"mmproj-Q99999999999999999999.gguf"}, "m-Q4_0.gguf"),
            "mmproj-Q99999999999999999999.gguf");
}

TEST(HubProjector, OnlyTheModelsFolderOrOneAboveItDeepestFirst) {
  const std::vector<std::string> all = {"mmproj-F16.gguf", "q/mmproj-F32.gguf",
                                        "other/mmproj-Q4_K_M.gguf", "q/sub/mmproj-Q4_K_M.gguf",
                                        "q/m-Q4_K_M.gguf"};
  // The model's own folder beats the root even with a farther quantization; a sibling or a
  // deeper folder never counts.
  EXPECT_EQ(projector_for(all, "q/m-Q4_K_M.gguf"), "q/mmproj-F32.gguf");
  EXPECT_EQ(projector_for(all, "q/sub/deeper/m-Q4_K_M.gguf"), "q/sub/mmproj-Q4_K_M.gguf");
  EXPECT_EQ(projector_for(all, "elsewhere/m-Q4_K_M.gguf"), "mmproj-F16.gguf");
  EXPECT_EQ(projector_for({"q/mmproj-F16.gguf"}, "m-F16.gguf"), "");
  EXPECT_EQ(projector_for({"qq/mmproj-F16.gguf"}, "q/m-F16.gguf"), "");
}

TEST(HubNames, RepoAndTagAreSplitAsTheReferenceDoes) {
  auto rt = split_repo_tag("ggml-org/gemma-3-1b-it-GGUF:Q4_K_M");
  ASSERT_TRUE(rt.is_ok());
  EXPECT_EQ(rt->repo, "ggml-org/gemma-3-1b-it-GGUF");
  EXPECT_EQ(rt->tag, "Q4_K_M");
  EXPECT_EQ(split_repo_tag("u/m")->tag, "");
  EXPECT_EQ(split_repo_tag("u/m:a:b")->tag, "b");
  for (const char* bad : {"m", "u/m/x", "", ":Q8_0", "u//m"}) {
    auto r = split_repo_tag(bad);
    ASSERT_FALSE(r.is_ok()) << bad;
    EXPECT_EQ(r.status().message(), "invalid HF repo format, expected <user>/<model>[:quant]");
  }
}

TEST(HubNames, TokensAreSentOnlyWhenTheyLookLikeOne) {
  EXPECT_TRUE(is_valid_token("hf_" + std::string(34, 'A')));
  EXPECT_FALSE(is_valid_token("hf_" + std::string(33, 'A')));
  EXPECT_FALSE(is_valid_token("xx_" + std::string(34, 'A')));
  EXPECT_FALSE(is_valid_token("hf_" + std::string(33, 'A') + "-"));
}

TEST(HubNames, UrlPartsFollowTheSplitName) {
  EXPECT_EQ(url_parts("http://h/m.gguf?x=1"), std::vector<std::string>{"http://h/m.gguf?x=1"});
  EXPECT_EQ(url_parts("http://h/d/m-00001-of-00002.gguf"),
            (std::vector<std::string>{"http://h/d/m-00001-of-00002.gguf",
                                      "http://h/d/m-00002-of-00002.gguf"}));
  EXPECT_EQ(url_parts("http://h/m-00001-of-00002.gguf?sig=x"),
            (std::vector<std::string>{"http://h/m-00001-of-00002.gguf?sig=x",
                                      "http://h/m-00002-of-00002.gguf?sig=x"}));
}

TEST(HubNames, UrlsAreShownWithoutCredentials) {
  EXPECT_EQ(display_url("https://user:pw@host:8/a/m.gguf?token=s#f"), "https://host:8/a/m.gguf");
  EXPECT_EQ(display_url("http://host/a@b.gguf"), "http://host/a@b.gguf");
  EXPECT_EQ(url_origin("HTTPS://u@Host:8/x"), "https://host:8");
  EXPECT_EQ(url_origin("no-scheme"), "");
}

class HubEnv : public ::testing::Test {
 protected:
  void set(const char* name, const char* value) {
    const char* old = std::getenv(name);
    saved_.emplace_back(name, old ? std::optional<std::string>(old) : std::nullopt);
    if (value) {
      setenv(name, value, 1);
    } else {
      unsetenv(name);
    }
  }
  void TearDown() override {
    for (auto it = saved_.rbegin(); it != saved_.rend(); ++it) {
      if (it->second) {
        setenv(it->first.c_str(), it->second->c_str(), 1);
      } else {
        unsetenv(it->first.c_str());
      }
    }
  }
  std::vector<std::pair<std::string, std::optional<std::string>>> saved_;
};

TEST_F(HubEnv, EndpointIsModelEndpointThenHfEndpoint) {
  set("MODEL_ENDPOINT", nullptr);
  set("HF_ENDPOINT", nullptr);
  EXPECT_EQ(model_endpoint(), "https://huggingface.co/");
  set("HF_ENDPOINT", "http://mirror:8000");
  EXPECT_EQ(model_endpoint(), "http://mirror:8000/");
  set("MODEL_ENDPOINT", "http://local/");
  EXPECT_EQ(model_endpoint(), "http://local/");
}

TEST_F(HubEnv, LlamaCacheDirectoryFollowsTheEnvironment) {
  const std::string dir = test::make_temp_dir("llama_cache_env");
  set("LLAMA_CACHE", nullptr);
  set("XDG_CACHE_HOME", dir.c_str());
  EXPECT_EQ(*llama_cache_directory(), dir + "/llama.cpp");
  EXPECT_TRUE(std::filesystem::is_directory(dir + "/llama.cpp"));
  set("LLAMA_CACHE", (dir + "/mine").c_str());
  EXPECT_EQ(*llama_cache_directory(), dir + "/mine");
  set("XDG_CACHE_HOME", nullptr);
  set("LLAMA_CACHE", nullptr);
  set("HOME", dir.c_str());
  EXPECT_EQ(*llama_cache_directory(), dir + "/.cache/llama.cpp");
  std::filesystem::remove_all(dir);
}

TEST(HubOid, Sha256ForLfsAndGitBlobSha1Otherwise) {
  const std::string dir = test::make_temp_dir("hub_oid");
  std::ofstream(dir + "/hello") << "hello\n";
  EXPECT_EQ(*file_oid(dir + "/hello", std::string(64, '0')),
            "5891b5b522d5df086d0ff0b110fbd9d21bb4fc7163af34d08286a2e846f6be03");
  // `git hash-object` of the same file.
  EXPECT_EQ(*file_oid(dir + "/hello", std::string(40, '0')),
            "ce013625030ba8dba906f756967f9e9ca394464a");
  EXPECT_FALSE(file_oid(dir + "/missing", std::string(64, '0')).is_ok());
  std::filesystem::remove_all(dir);
}

TEST(HubProgress, LineShowsPercentRateAndEta) {
  const uint64_t mib = 1024 * 1024;
  const std::string line = progress_line("u/m", 25 * mib, 100 * mib, 20 * mib, 2.0, 20);
  EXPECT_EQ(line,
            "Downloading u/m [#####---------------]  25%  25.0/100.0 MiB  10.0 MiB/s  ETA 0:08");
  EXPECT_EQ(progress_line("u/m", 0, 0, 0, 0.0, 0), "Downloading u/m   0%  0.0/0.0 MiB  0.0 MiB/s");
  EXPECT_NE(progress_line("x", 0, 7200 * mib, 1 * mib, 1.0, 0).find("ETA 2:00:00"),
            std::string::npos);
}

}  // namespace
}  // namespace hearth::hub
