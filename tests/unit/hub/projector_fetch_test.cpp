// The projector that comes with -hf (--mmproj-auto) and from a URL (-mmu), fetched from the
// local mock of the Hugging Face hub (tests/server/hub/mock_hub.py) into a test cache: which
// mmproj file is chosen, that it lands in the cache next to the model, --offline, and the
// -mu path for -mmu (.etag, resume, reuse).
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <optional>

#include "hub/download.h"
#include "hub/model_source.h"
#include "hub/progress.h"
#include "server/hub/mock_hub.h"
#include "support/test_paths.h"

namespace hearth::hub {
namespace {

namespace fs = std::filesystem;
using test::kMockCommit;
using test::MockHub;
using test::MockHubOptions;

constexpr const char* kRepo = "test/vision-GGUF";

// Distinct bytes per file, so a file in the wrong place shows; the hub's oids are their
// sha256, checked by the download.
std::string content_of(const std::string& name) {
  std::string bytes = "GGUF";
  while (bytes.size() < 4096) bytes += name + ";";
  return bytes;
}

std::string read_all(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

class ProjectorFetch : public ::testing::Test {
 protected:
  void SetUp() override {
    if (std::system("python3 -c 'import http.server' >/dev/null 2>&1") != 0)
      GTEST_SKIP() << "needs python3 for the mock hub";
    root_ = test::make_temp_dir("projector_hub_root");
    cache_ = test::make_temp_dir("projector_hub_cache");
    for (const char* name :
         {"m-Q4_K_M.gguf", "m-F16.gguf", "mmproj-m-F16.gguf", "mmproj-m-Q8_0.gguf", "README.md"})
      add_file(kRepo, name);
    add_file("test/text-GGUF", "t-Q4_K_M.gguf");
    set_env("LLAMA_CACHE", cache_.c_str());
    set_env("HF_TOKEN", nullptr);
    set_env("MODEL_ENDPOINT", "http://127.0.0.1:9/");
  }
  void TearDown() override {
    for (auto& [name, value] : saved_env_) {
      if (value) {
        setenv(name.c_str(), value->c_str(), 1);
      } else {
        unsetenv(name.c_str());
      }
    }
    if (!root_.empty()) fs::remove_all(root_);
    if (!cache_.empty()) fs::remove_all(cache_);
  }

  void add_file(const std::string& repo, const std::string& name) {
    fs::create_directories(fs::path(root_) / repo);
    std::ofstream(fs::path(root_) / repo / name, std::ios::binary) << content_of(name);
  }
  void set_env(const std::string& name, const char* value) {
    if (saved_env_.count(name) == 0) {
      const char* old = std::getenv(name.c_str());
      saved_env_[name] = old ? std::optional<std::string>(old) : std::nullopt;
    }
    if (value) {
      setenv(name.c_str(), value, 1);
    } else {
      unsetenv(name.c_str());
    }
  }
  std::unique_ptr<MockHub> start_hub(MockHubOptions options = {}) {
    auto hub = std::make_unique<MockHub>(root_, options);
    EXPECT_TRUE(hub->running());
    set_env("MODEL_ENDPOINT", hub->endpoint().c_str());
    return hub;
  }

  fs::path snapshot(const std::string& file, const std::string& repo = kRepo) const {
    std::string folder = "models--" + repo;
    folder.replace(folder.find('/'), 1, "--");
    return fs::path(cache_) / folder / "snapshots" / kMockCommit / file;
  }

  static ModelRequest repo_request(const std::string& repo, bool with_projector,
                                   bool offline = false) {
    ModelRequest request;
    request.hf_repo = repo;
    request.with_projector = with_projector;
    request.offline = offline;
    return request;
  }
  Result<ResolvedModel> resolve(const ModelRequest& request) {
    DownloadOptions options;
    options.progress = &progress_;
    options.retry_delay = std::chrono::milliseconds(10);
    return resolve_model_files(request, options);
  }

  // The files whose bytes were fetched (the names under /blobs/ or /files/).
  static std::vector<std::string> fetched(const MockHub& hub, const std::string& where,
                                          const std::string& method = "GET") {
    std::vector<std::string> names;
    for (const auto& r : hub.requests_for(where))
      if (r["method"] == method) {
        const std::string path = r["path"];
        names.push_back(path.substr(path.rfind('/') + 1));
      }
    return names;
  }

  std::string root_, cache_;
  DownloadProgress progress_;
  std::map<std::string, std::optional<std::string>> saved_env_;
};

TEST_F(ProjectorFetch, HfBringsTheClosestProjectorIntoTheCacheNextToTheModel) {
  auto hub = start_hub();
  auto files = resolve(repo_request(kRepo, true));
  ASSERT_TRUE(files.is_ok()) << files.status().to_string();
  // Q4_K_M (4 bits) is closer to Q8_0's 8 than to F16's 16.
  EXPECT_EQ(files->model_path, snapshot("m-Q4_K_M.gguf").string());
  EXPECT_EQ(files->projector_path, snapshot("mmproj-m-Q8_0.gguf").string());
  EXPECT_EQ(read_all(files->projector_path), content_of("mmproj-m-Q8_0.gguf"));
  EXPECT_EQ(read_all(files->model_path), content_of("m-Q4_K_M.gguf"));
  std::vector<std::string> got = fetched(*hub, "/blobs/");
  std::sort(got.begin(), got.end());
  EXPECT_EQ(got, (std::vector<std::string>{"m-Q4_K_M.gguf", "mmproj-m-Q8_0.gguf"}));
  // Both count in the progress /health reports.
  EXPECT_EQ(progress_.files(), 2);
  EXPECT_EQ(progress_.total_bytes(),
            content_of("m-Q4_K_M.gguf").size() + content_of("mmproj-m-Q8_0.gguf").size());
  EXPECT_EQ(progress_.files_done(), 2);

  // The F16 model takes the F16 projector; nothing is fetched twice.
  ModelRequest f16 = repo_request(std::string(kRepo) + ":F16", true);
  files = resolve(f16);
  ASSERT_TRUE(files.is_ok()) << files.status().to_string();
  EXPECT_EQ(files->projector_path, snapshot("mmproj-m-F16.gguf").string());
  EXPECT_EQ(fetched(*hub, "/blobs/").size(), 4u);
  ASSERT_TRUE(resolve(f16).is_ok());
  EXPECT_EQ(fetched(*hub, "/blobs/").size(), 4u);
}

TEST_F(ProjectorFetch, NotAskedForTheProjectorIsNotFetched) {
  // --no-mmproj, -mm and -mmu all clear with_projector (tools/server/main.cpp).
  auto hub = start_hub();
  auto files = resolve(repo_request(kRepo, false));
  ASSERT_TRUE(files.is_ok()) << files.status().to_string();
  EXPECT_EQ(files->projector_path, "");
  EXPECT_EQ(fetched(*hub, "/blobs/"), std::vector<std::string>{"m-Q4_K_M.gguf"});
  EXPECT_FALSE(fs::exists(snapshot("mmproj-m-Q8_0.gguf")));
  // A repository without a projector gives the model alone.
  files = resolve(repo_request("test/text-GGUF", true));
  ASSERT_TRUE(files.is_ok()) << files.status().to_string();
  EXPECT_EQ(files->projector_path, "");
  EXPECT_EQ(files->model_path, snapshot("t-Q4_K_M.gguf", "test/text-GGUF").string());
}

TEST_F(ProjectorFetch, OfflineUsesTheCachedProjectorAndRunsWithoutAnUncachedOne) {
  {
    auto hub = start_hub();
    ASSERT_TRUE(resolve(repo_request(kRepo, true)).is_ok());
    ASSERT_TRUE(resolve(repo_request(std::string(kRepo) + ":F16", false)).is_ok());
  }
  set_env("MODEL_ENDPOINT", "http://127.0.0.1:9/");
  auto files = resolve(repo_request(kRepo, true, true));
  ASSERT_TRUE(files.is_ok()) << files.status().to_string();
  EXPECT_EQ(files->projector_path, snapshot("mmproj-m-Q8_0.gguf").string());
  // Offline, only cached files are there to choose from: the F16 model takes the cached Q8_0
  // projector, as llama-server's plan over the cache's files does.
  files = resolve(repo_request(std::string(kRepo) + ":F16", true, true));
  ASSERT_TRUE(files.is_ok()) << files.status().to_string();
  EXPECT_EQ(files->projector_path, snapshot("mmproj-m-Q8_0.gguf").string());
  // With no projector cached at all, the model runs without one (no error).
  fs::remove(snapshot("mmproj-m-Q8_0.gguf"));
  files = resolve(repo_request(kRepo, true, true));
  ASSERT_TRUE(files.is_ok()) << files.status().to_string();
  EXPECT_EQ(files->model_path, snapshot("m-Q4_K_M.gguf").string());
  EXPECT_EQ(files->projector_path, "");
  EXPECT_EQ(progress_.files(), 3);  // nothing more was counted offline
}

ModelRequest url_request(const std::string& url, const std::string& path = "",
                         bool offline = false) {
  ModelRequest request;
  request.url = url;
  request.path = path;
  request.offline = offline;
  request.url_may_be_split = false;
  return request;
}

TEST_F(ProjectorFetch, ProjectorUrlGoesToTheLlamaCacheWithItsEtagAndIsReused) {
  // The first transfer breaks after 1000 bytes: the retry resumes with a Range request.
  auto hub = start_hub({.throttle_bytes_per_s = 0,
                        .disconnect_after = 1000,
                        .corrupt = "",
                        .token = "",
                        .ignore_range = false,
                        .hostile = false});
  const std::string url = hub->endpoint() + "files/" + kRepo + "/mmproj-m-F16.gguf";
  auto files = resolve(url_request(url));
  ASSERT_TRUE(files.is_ok()) << files.status().to_string();
  const fs::path local = fs::path(cache_) / "mmproj-m-F16.gguf";
  EXPECT_EQ(files->model_path, local.string());
  EXPECT_EQ(read_all(local), content_of("mmproj-m-F16.gguf"));
  EXPECT_TRUE(fs::exists(local.string() + ".etag"));
  bool resumed = false;
  for (const auto& r : hub->requests_for("/files/"))
    resumed = resumed || (r["range"].is_string() && r["range"] == "bytes=1000-");
  EXPECT_TRUE(resumed);
  EXPECT_EQ(progress_.files(), 1);

  // Started again, it only asks whether the file changed.
  const size_t gets = fetched(*hub, "/files/").size();
  files = resolve(url_request(url));
  ASSERT_TRUE(files.is_ok()) << files.status().to_string();
  EXPECT_EQ(fetched(*hub, "/files/").size(), gets);
  // Offline it is used as it is; a URL not downloaded is an error naming the file.
  set_env("MODEL_ENDPOINT", "http://127.0.0.1:9/");
  EXPECT_EQ(resolve(url_request(url, "", true))->model_path, local.string());
  auto missing = resolve(url_request(hub->endpoint() + "files/x/mmproj-y.gguf", "", true));
  ASSERT_FALSE(missing.is_ok());
  EXPECT_NE(missing.status().message().find("mmproj-y.gguf is missing (--offline)"),
            std::string::npos)
      << missing.status().message();
}

TEST_F(ProjectorFetch, ProjectorUrlIsOneFileAndGoesToTheMmPathWhenGiven) {
  add_file(kRepo, "mmproj-s-00001-of-00002.gguf");
  auto hub = start_hub();
  const std::string dest = cache_ + "/mine/p.gguf";
  fs::create_directories(cache_ + "/mine");
  auto files = resolve(
      url_request(hub->endpoint() + "files/" + kRepo + "/mmproj-s-00001-of-00002.gguf", dest));
  ASSERT_TRUE(files.is_ok()) << files.status().to_string();
  EXPECT_EQ(files->model_path, dest);
  EXPECT_EQ(read_all(dest), content_of("mmproj-s-00001-of-00002.gguf"));
  // No second part is asked for: -mmu's URL is never split.
  EXPECT_EQ(fetched(*hub, "/files/"), std::vector<std::string>{"mmproj-s-00001-of-00002.gguf"});
}

}  // namespace
}  // namespace hearth::hub
