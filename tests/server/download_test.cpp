// hearth-server -hf / -hff / -mu / --offline against a local mock of the Hugging Face hub
// (tests/server/hub/mock_hub.py): quant selection, split models, the hub cache layout,
// resuming broken and killed downloads, refusing corrupt files, tokens, progress.
#include <signal.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <thread>

#include "gguf/file.h"
#include "gguf/writer.h"
#include "hub/download.h"
#include "server/hub/mock_hub.h"
#include "server/server_fixture.h"
#include "support/process.h"

namespace hearth::test {
namespace {

namespace fs = std::filesystem;

constexpr const char* kRepo = "test/stories-GGUF";

// Part i of `count` of stories260K: every key in part 1, the tensors dealt out in turn.
void write_split_stories(const std::string& prefix, int count) {
  auto file = gguf::File::open(stories_model());
  ASSERT_TRUE(file.is_ok()) << file.status().to_string();
  const auto& tensors = file->tensors();
  for (int part = 0; part < count; ++part) {
    gguf::Writer w;
    if (part == 0)
      for (const auto& kv : file->metadata()) w.set_value(kv.key, kv.value);
    w.set_u16("split.no", static_cast<uint16_t>(part));
    w.set_u16("split.count", static_cast<uint16_t>(count));
    w.set_i32("split.tensors.count", static_cast<int32_t>(tensors.size()));
    for (size_t i = part; i < tensors.size(); i += count) {
      const gguf::TensorInfo& t = tensors[i];
      std::vector<int64_t> ne(t.ne.begin(), t.ne.begin() + t.n_dims);
      ASSERT_TRUE(w.add_tensor(t.name, t.type, ne, std::vector<uint8_t>(t.data, t.data + t.n_bytes))
                      .is_ok());
    }
    ASSERT_TRUE(w.write(gguf::split_path(prefix, part, count)).is_ok());
  }
}

class HubDownload : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!fs::exists(stories_model())) GTEST_SKIP() << "needs " << stories_model();
    if (std::system("python3 -c 'import http.server' >/dev/null 2>&1") != 0)
      GTEST_SKIP() << "needs python3 for the mock hub";
    root_ = make_temp_dir("hub_root");
    cache_ = make_temp_dir("hub_cache");
    const fs::path repo = fs::path(root_) / kRepo;
    fs::create_directories(repo);
    for (const char* quant : {"F32", "Q8_0", "Q4_K_M"})
      fs::copy_file(stories_model(), repo / (std::string("stories260K-") + quant + ".gguf"));
    std::ofstream(repo / "README.md") << "# stories260K in three names\n";
    save_env("LLAMA_CACHE", cache_.c_str());
    save_env("HF_TOKEN", nullptr);
    save_env("MODEL_ENDPOINT", "http://127.0.0.1:9/");
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

  void save_env(const std::string& name, const char* value) {
    const char* old = std::getenv(name.c_str());
    if (saved_env_.count(name) == 0)
      saved_env_[name] = old ? std::optional<std::string>(old) : std::nullopt;
    if (value) {
      setenv(name.c_str(), value, 1);
    } else {
      unsetenv(name.c_str());
    }
  }

  std::unique_ptr<MockHub> start_hub(MockHubOptions options = {}) {
    auto hub = std::make_unique<MockHub>(root_, options);
    EXPECT_TRUE(hub->running());
    save_env("MODEL_ENDPOINT", hub->endpoint().c_str());
    return hub;
  }

  fs::path repo_cache(const std::string& repo = kRepo) const {
    std::string folder = "models--" + repo;
    folder.replace(folder.find('/'), 1, "--");
    return fs::path(cache_) / folder;
  }
  fs::path snapshot(const std::string& file, const std::string& repo = kRepo) const {
    return repo_cache(repo) / "snapshots" / kMockCommit / file;
  }
  // stories260K's LFS oid (its sha256), the name of its blob.
  static std::string stories_oid() {
    auto oid = hub::file_oid(stories_model(), std::string(64, '0'));
    EXPECT_TRUE(oid.is_ok()) << oid.status().to_string();
    return oid.is_ok() ? *oid : std::string();
  }
  // Where stories260K's blob is written while it downloads.
  fs::path stories_partial() const {
    return repo_cache() / "blobs" / (stories_oid() + ".downloadInProgress");
  }
  // A file's size, 0 while it does not exist (it may be renamed at any moment).
  static uint64_t size_now(const fs::path& path) {
    std::error_code ec;
    const uintmax_t size = fs::file_size(path, ec);
    return ec ? 0 : size;
  }

  // The files whose bytes the server fetched (the redirect targets under /blobs/).
  static std::vector<std::string> fetched(const MockHub& hub) {
    std::vector<std::string> names;
    for (const auto& r : hub.requests_for("/blobs/")) {
      const std::string path = r["path"];
      names.push_back(path.substr(path.rfind('/') + 1));
    }
    return names;
  }

  static ProcessResult run_server(const std::vector<std::string>& args, int timeout_s = 60) {
    std::vector<std::string> argv = {bin_dir() + "/hearth-server"};
    argv.insert(argv.end(), args.begin(), args.end());
    return run_process(argv, timeout_s);
  }

  std::string root_, cache_;
  std::map<std::string, std::optional<std::string>> saved_env_;
};

TEST_F(HubDownload, PicksQ4KMByDefaultAndLaysOutTheHubCache) {
  auto hub = start_hub();
  ServerProcess server;
  ASSERT_TRUE(server.start({"-hf", kRepo, "-c", "512", "-np", "1"})) << server.log();
  EXPECT_EQ(fetched(*hub), std::vector<std::string>{"stories260K-Q4_K_M.gguf"});
  // The layout Hugging Face's tools read: refs/main, a relative link into blobs/<sha256>.
  std::ifstream ref(repo_cache() / "refs" / "main");
  std::string commit;
  ref >> commit;
  EXPECT_EQ(commit, kMockCommit);
  const fs::path link = snapshot("stories260K-Q4_K_M.gguf");
  ASSERT_TRUE(fs::is_symlink(link)) << link;
  EXPECT_EQ(fs::read_symlink(link), fs::path("../../blobs") / stories_oid());
  EXPECT_TRUE(fs::is_regular_file(repo_cache() / "blobs" / stories_oid()));
  EXPECT_FALSE(fs::exists(stories_partial()));
  const Json props = parse_or_null(http_request(server.port(), "GET", "/props").body);
  EXPECT_EQ(props["model_alias"], kRepo);
  EXPECT_EQ(props["model_path"], link.string());
  const Json done = post_json(server.port(), "/completion", {{"prompt", "Once"}, {"n_predict", 4}});
  EXPECT_EQ(done["tokens_predicted"], 4) << done.dump();
  server.stop();
  // llama-server's -cl reads what Hearth wrote (and Hearth's own -cl does).
  const ProcessResult list = run_server({"-cl"});
  EXPECT_NE(list.out.find("test/stories-GGUF:Q4_K_M"), std::string::npos) << list.out;
}

TEST_F(HubDownload, TagIsMatchedInAnyCaseAndHffNamesAnExactFile) {
  auto hub = start_hub();
  {
    ServerProcess server;
    ASSERT_TRUE(server.start({"-hf", std::string(kRepo) + ":q8_0", "-c", "512"})) << server.log();
    const Json props = parse_or_null(http_request(server.port(), "GET", "/props").body);
    EXPECT_EQ(props["model_alias"], std::string(kRepo) + ":q8_0");
  }
  {
    ServerProcess server;
    ASSERT_TRUE(server.start({"-hf", kRepo, "-hff", "stories260K-F32.gguf", "-c", "512"}))
        << server.log();
  }
  // The same content under two names is one blob: fetched once, linked from both paths.
  EXPECT_EQ(fetched(*hub), std::vector<std::string>{"stories260K-Q8_0.gguf"});
  EXPECT_TRUE(fs::is_symlink(snapshot("stories260K-F32.gguf")));
  EXPECT_EQ(fs::canonical(snapshot("stories260K-Q8_0.gguf")),
            fs::canonical(snapshot("stories260K-F32.gguf")));
}

TEST_F(HubDownload, UnknownTagOrFileFailsWithTheListOfFiles) {
  auto hub = start_hub();
  ProcessResult r = run_server({"-hf", std::string(kRepo) + ":Q5_K_S", "--port", "0"});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("no GGUF file with tag 'Q5_K_S' found in repository test/stories-GGUF"),
            std::string::npos)
      << r.err;
  EXPECT_NE(r.err.find("stories260K-Q8_0.gguf"), std::string::npos) << r.err;
  r = run_server({"-hf", kRepo, "-hff", "missing.gguf", "--port", "0"});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("file 'missing.gguf' not found"), std::string::npos) << r.err;
  r = run_server({"-hf", "nobody/nothing", "--port", "0"});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("Repository not found"), std::string::npos) << r.err;
  EXPECT_TRUE(fetched(*hub).empty());
}

TEST_F(HubDownload, SplitModelFetchesEveryPartAndLoadsTheFirst) {
  const fs::path repo = fs::path(root_) / "test" / "split-GGUF";
  fs::create_directories(repo);
  write_split_stories((repo / "stories260K-Q8_0").string(), 3);
  auto hub = start_hub();
  ServerProcess server;
  ASSERT_TRUE(server.start({"-hf", "test/split-GGUF:Q8_0", "-c", "512"})) << server.log();
  auto names = fetched(*hub);
  std::sort(names.begin(), names.end());
  EXPECT_EQ(names, (std::vector<std::string>{"stories260K-Q8_0-00001-of-00003.gguf",
                                             "stories260K-Q8_0-00002-of-00003.gguf",
                                             "stories260K-Q8_0-00003-of-00003.gguf"}));
  const Json props = parse_or_null(http_request(server.port(), "GET", "/props").body);
  EXPECT_EQ(props["model_path"],
            snapshot("stories260K-Q8_0-00001-of-00003.gguf", "test/split-GGUF").string());
  const Json done = post_json(server.port(), "/completion", {{"prompt", "Once"}, {"n_predict", 4}});
  EXPECT_EQ(done["tokens_predicted"], 4) << done.dump();
}

TEST_F(HubDownload, BrokenTransferResumesWithARangeRequest) {
  MockHubOptions options;
  options.disconnect_after = 300000;
  auto hub = start_hub(options);
  ServerProcess server;
  ASSERT_TRUE(server.start({"-hf", kRepo, "-c", "512"})) << server.log();
  const auto blobs = hub->requests_for("/blobs/");
  ASSERT_EQ(blobs.size(), 2u);
  EXPECT_TRUE(blobs[0]["range"].is_null());
  EXPECT_EQ(blobs[1]["range"], "bytes=300000-");
  EXPECT_NE(server.log().find("retrying"), std::string::npos);
}

TEST_F(HubDownload, ServerIgnoringTheRangeMakesTheDownloadStartOver) {
  MockHubOptions options;
  options.disconnect_after = 300000;
  options.ignore_range = true;
  auto hub = start_hub(options);
  ServerProcess server;
  ASSERT_TRUE(server.start({"-hf", kRepo, "-c", "512"})) << server.log();
  const auto blobs = hub->requests_for("/blobs/");
  ASSERT_EQ(blobs.size(), 2u);
  EXPECT_EQ(blobs[1]["range"], "bytes=300000-");  // answered 200 with the whole file
  auto oid = hub::file_oid(snapshot("stories260K-Q4_K_M.gguf").string(), std::string(64, '0'));
  ASSERT_TRUE(oid.is_ok());
  EXPECT_EQ(*oid, stories_oid());
}

TEST_F(HubDownload, NamesThatTryToLeaveTheCacheAreSkipped) {
  MockHubOptions options;
  options.hostile = true;
  auto hub = start_hub(options);
  ServerProcess server;
  ASSERT_TRUE(server.start({"-hf", kRepo, "-c", "512"})) << server.log();
  EXPECT_EQ(fetched(*hub), std::vector<std::string>{"stories260K-Q4_K_M.gguf"});
  EXPECT_NE(server.log().find("skipping the unsafe path '../../escaped-Q4_K_M.gguf'"),
            std::string::npos)
      << server.log();
  // Nothing named by the hostile entries exists, in the cache or beside it.
  std::vector<fs::path> places = {fs::path(cache_).parent_path(), fs::path(cache_), repo_cache(),
                                  repo_cache() / "snapshots"};
  for (const auto& e : fs::recursive_directory_iterator(cache_)) places.push_back(e.path());
  for (const fs::path& place : places) {
    const std::string name = place.filename().string();
    for (const char* bad : {"escaped", "abs-Q4", "up-Q4", "bad-oid"})
      EXPECT_EQ(name.find(bad), std::string::npos) << place;
  }
  for (const char* bad : {"escaped-Q4_K_M.gguf", "abs-Q4_K_M.gguf", "up-Q4_K_M.gguf"})
    EXPECT_FALSE(fs::exists(fs::path(cache_).parent_path() / bad)) << bad;
  EXPECT_FALSE(fs::exists(repo_cache() / "refs" / "escaped-ref"));
  std::ifstream ref(repo_cache() / "refs" / "main");
  std::string commit;
  ref >> commit;
  EXPECT_EQ(commit, kMockCommit);
}

TEST_F(HubDownload, FileNamesWithSpacesAreRequestedEncoded) {
  const fs::path dir = fs::path(root_) / kRepo / "sub dir";
  fs::create_directories(dir);
  fs::copy_file(stories_model(), dir / "stories 260K#1-Q6_K.gguf");
  auto hub = start_hub();
  ServerProcess server;
  ASSERT_TRUE(server.start({"-hf", std::string(kRepo) + ":Q6_K", "-c", "512"})) << server.log();
  const auto resolves = hub->requests_for("/resolve/");
  ASSERT_EQ(resolves.size(), 1u);
  EXPECT_NE(resolves[0]["path"].get<std::string>().find("sub dir/stories 260K#1-Q6_K.gguf"),
            std::string::npos);
  EXPECT_TRUE(fs::is_symlink(snapshot("sub dir/stories 260K#1-Q6_K.gguf")));
}

TEST_F(HubDownload, KilledDownloadResumesOnRestart) {
  MockHubOptions slow;
  slow.throttle_bytes_per_s = 200000;
  auto hub = start_hub(slow);
  const fs::path partial = stories_partial();
  {
    ServerProcess server;
    EXPECT_FALSE(server.start({"-hf", kRepo, "-c", "512"}, 2));
    ASSERT_GT(server.pid(), 0) << server.log();
    for (int i = 0; i < 100 && size_now(partial) < 100000; ++i)
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    ::kill(server.pid(), SIGKILL);
  }
  ASSERT_TRUE(fs::exists(partial));
  const uint64_t kept = fs::file_size(partial);
  EXPECT_GT(kept, 0u);
  EXPECT_LT(kept, fs::file_size(stories_model()));
  // Nothing that looks complete was left behind.
  EXPECT_FALSE(fs::exists(snapshot("stories260K-Q4_K_M.gguf")));
  EXPECT_FALSE(fs::exists(repo_cache() / "blobs" / stories_oid()));
  hub.reset();
  auto fast = start_hub();
  ServerProcess server;
  ASSERT_TRUE(server.start({"-hf", kRepo, "-c", "512"})) << server.log();
  const auto blobs = fast->requests_for("/blobs/");
  ASSERT_EQ(blobs.size(), 1u);
  ASSERT_TRUE(blobs[0]["range"].is_string());
  EXPECT_GE(std::stoull(blobs[0]["range"].get<std::string>().substr(6)), kept);
  EXPECT_FALSE(fs::exists(partial));
}

TEST_F(HubDownload, SigtermStopsADownloadAndKeepsItsPartialFile) {
  MockHubOptions slow;
  slow.throttle_bytes_per_s = 100000;
  auto hub = start_hub(slow);
  const fs::path partial = stories_partial();
  ServerProcess server;
  EXPECT_FALSE(server.start({"-hf", kRepo, "-c", "512"}, 1));
  for (int i = 0; i < 100 && size_now(partial) == 0; ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  const auto before = std::chrono::steady_clock::now();
  EXPECT_EQ(server.stop(10), 0) << server.log();
  EXPECT_LT(std::chrono::steady_clock::now() - before, std::chrono::seconds(5));
  EXPECT_TRUE(fs::exists(partial)) << "kept for the next start to resume";
  EXPECT_FALSE(fs::exists(snapshot("stories260K-Q4_K_M.gguf")));
}

TEST_F(HubDownload, CorruptFileIsRefusedAndRemoved) {
  MockHubOptions options;
  options.corrupt = "stories260K-Q4_K_M.gguf";
  auto hub = start_hub(options);
  const ProcessResult r = run_server({"-hf", kRepo, "--port", "0"});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("checksum mismatch"), std::string::npos) << r.err;
  std::vector<std::string> left;
  for (const auto& e : fs::recursive_directory_iterator(repo_cache() / "blobs"))
    left.push_back(e.path().string());
  EXPECT_TRUE(left.empty()) << left.front();
  EXPECT_FALSE(fs::exists(snapshot("stories260K-Q4_K_M.gguf")));
}

TEST_F(HubDownload, OfflineUsesTheCacheAndFailsClearlyWithoutIt) {
  ProcessResult r = run_server({"-hf", kRepo, "--offline", "--port", "0"});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("test/stories-GGUF is not in the cache (--offline"), std::string::npos)
      << r.err;
  {
    auto hub = start_hub();
    ServerProcess server;
    ASSERT_TRUE(server.start({"-hf", kRepo, "-c", "512"})) << server.log();
  }
  auto hub = start_hub();  // a new, empty log: --offline must not ask it anything
  ServerProcess server;
  ASSERT_TRUE(server.start({"-hf", kRepo, "--offline", "-c", "512"})) << server.log();
  EXPECT_TRUE(hub->requests().empty());
  const Json props = parse_or_null(http_request(server.port(), "GET", "/props").body);
  EXPECT_EQ(props["model_path"], snapshot("stories260K-Q4_K_M.gguf").string());
  // A tag the cache does not hold fails by name.
  r = run_server({"-hf", std::string(kRepo) + ":Q8_0", "--offline", "--port", "0"});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("tag 'Q8_0'"), std::string::npos) << r.err;
}

TEST_F(HubDownload, HealthReportsProgressAndAPipeGetsPlainLines) {
  MockHubOptions slow;
  slow.throttle_bytes_per_s = 400000;
  auto hub = start_hub(slow);
  ServerProcess server;
  EXPECT_FALSE(server.start({"-hf", kRepo, "-c", "512"}, 1));
  ASSERT_GT(server.port(), 0) << server.log();
  double fraction = -1;
  for (int i = 0; i < 100 && fraction <= 0; ++i) {
    const HttpReply health = http_request(server.port(), "GET", "/health");
    ASSERT_EQ(health.status, 503);
    const Json body = parse_or_null(health.body);
    EXPECT_EQ(body["error"]["message"], "Loading model");
    if (body["error"].contains("progress")) {
      const Json& p = body["error"]["progress"];
      EXPECT_EQ(p["stage"], "downloading");
      EXPECT_EQ(p["total_bytes"], fs::file_size(stories_model()));
      fraction = p["fraction"];
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  EXPECT_GT(fraction, 0.0);
  EXPECT_LT(fraction, 1.0);
  for (int i = 0; i < 200 && http_request(server.port(), "GET", "/health").status != 200; ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  EXPECT_EQ(http_request(server.port(), "GET", "/health").status, 200);
  const std::string log = server.log();
  EXPECT_NE(log.find("Downloading test/stories-GGUF 100%"), std::string::npos) << log;
  EXPECT_EQ(log.find('\r'), std::string::npos) << "a pipe gets no redrawn bar";
}

TEST_F(HubDownload, PrivateRepositorySendsTheToken) {
  const std::string token = "hf_" + std::string(34, 'a');
  fs::create_directories(fs::path(root_) / "private");
  fs::rename(fs::path(root_) / kRepo, fs::path(root_) / "private" / "stories-GGUF");
  MockHubOptions options;
  options.token = token;
  auto hub = start_hub(options);
  ProcessResult r = run_server({"-hf", "private/stories-GGUF", "--port", "0"});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("401"), std::string::npos) << r.err;
  r = run_server({"-hf", "private/stories-GGUF", "-hft", "not-a-token", "--port", "0"});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("the hub's API is asked without it"), std::string::npos) << r.err;
  save_env("HF_TOKEN", token.c_str());
  ServerProcess server;
  ASSERT_TRUE(server.start({"-hf", "private/stories-GGUF", "-c", "512"})) << server.log();
  const auto blobs = hub->requests_for("/resolve/");
  ASSERT_FALSE(blobs.empty());
  EXPECT_EQ(blobs.back()["auth"], "Bearer " + token);
}

TEST_F(HubDownload, DraftRepositoryIsFetchedForDraftSimple) {
  const fs::path draft = fs::path(root_) / "test" / "draft-GGUF";
  fs::create_directories(draft);
  fs::copy_file(stories_model(), draft / "draft-Q8_0.gguf");
  auto hub = start_hub();
  {
    // Without draft-simple nothing reads a draft model: it is not fetched, and that is said.
    ServerProcess plain;
    ASSERT_TRUE(plain.start({"-hf", kRepo, "--spec-draft-hf", "test/draft-GGUF", "-c", "512"}))
        << plain.log();
    EXPECT_NE(plain.log().find("--spec-draft-hf has no effect without --spec-type draft-simple"),
              std::string::npos)
        << plain.log();
    EXPECT_TRUE(hub->requests_for("draft-GGUF").empty());
  }
  ServerProcess server;
  ASSERT_TRUE(server.start({"-hf", kRepo, "--spec-draft-hf", "test/draft-GGUF", "--spec-type",
                            "draft-simple", "-c", "512", "-np", "1"}))
      << server.log();
  auto names = fetched(*hub);
  std::sort(names.begin(), names.end());
  EXPECT_EQ(names, (std::vector<std::string>{"draft-Q8_0.gguf", "stories260K-Q4_K_M.gguf"}));
  EXPECT_TRUE(fs::is_symlink(snapshot("draft-Q8_0.gguf", "test/draft-GGUF")));
  const Json done =
      post_json(server.port(), "/completion", {{"prompt", "Once upon a time"}, {"n_predict", 16}});
  EXPECT_EQ(done["tokens_predicted"], 16) << done.dump();
  // The draft drafts for itself: every drafted token is accepted.
  EXPECT_GT(done["timings"].value("draft_n", 0), 0) << done.dump();
}

TEST_F(HubDownload, ModelUrlGoesToTheLlamaCacheWithItsEtag) {
  auto hub = start_hub();
  const std::string url = hub->endpoint() + "files/test/stories-GGUF/stories260K-Q8_0.gguf";
  {
    ServerProcess server;
    ASSERT_TRUE(server.start({"-mu", url, "-c", "512"})) << server.log();
    const Json props = parse_or_null(http_request(server.port(), "GET", "/props").body);
    EXPECT_EQ(props["model_path"], (fs::path(cache_) / "stories260K-Q8_0.gguf").string());
  }
  EXPECT_TRUE(fs::exists(fs::path(cache_) / "stories260K-Q8_0.gguf.etag"));
  const size_t gets = hub->requests_for("/files/").size();
  ServerProcess again;
  ASSERT_TRUE(again.start({"-mu", url, "-c", "512"})) << again.log();
  // The second start only asks whether the file changed.
  const auto after = hub->requests_for("/files/");
  ASSERT_EQ(after.size(), gets + 1);
  EXPECT_EQ(after.back()["method"], "HEAD");
}

// A tiny gemma3 text model and its projector, written by hearth-synth into `dir`.
void write_gemma3_pair(const fs::path& dir, const std::string& model, const std::string& mmproj) {
  fs::create_directories(dir);
  const std::string synth = bin_dir() + "/hearth-synth";
  ProcessResult r = run_process({synth, "-o", (dir / model).string(), "--arch", "gemma3", "--vocab",
                                 stories_model(), "--n-embd", "64", "--n-layer", "2", "--n-head",
                                 "4", "--n-head-kv", "1", "--n-ff", "128", "--type", "q8_0"},
                                60);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  r = run_process({synth,
                   "-o",
                   (dir / mmproj).string(),
                   "--projector",
                   "gemma3",
                   "--text-n-embd",
                   "64",
                   "--n-embd",
                   "32",
                   "--n-layer",
                   "1",
                   "--n-head",
                   "2",
                   "--n-ff",
                   "64",
                   "--image-size",
                   "56",
                   "--patch-size",
                   "14",
                   "--n-merge",
                   "2",
                   "--type",
                   "f16"},
                  60);
  ASSERT_EQ(r.exit_code, 0) << r.err;
}

bool takes_images(int port) {
  const Json props = parse_or_null(http_request(port, "GET", "/props").body);
  return props["modalities"]["vision"] == true;
}

TEST_F(HubDownload, HfBringsTheRepositoryProjectorUnlessNoMmprojOrMm) {
  const std::string repo = "test/gemma3-vision-GGUF";
  write_gemma3_pair(fs::path(root_) / repo, "g-Q8_0.gguf", "mmproj-g-F16.gguf");
  auto hub = start_hub();
  {
    ServerProcess server;
    ASSERT_TRUE(server.start({"-hf", repo, "--no-mmproj", "-c", "512"})) << server.log();
    EXPECT_FALSE(takes_images(server.port()));
    EXPECT_EQ(fetched(*hub), std::vector<std::string>{"g-Q8_0.gguf"});
  }
  {
    // -mm names the projector: the repository's is not fetched.
    ServerProcess server;
    const std::string own = (fs::path(root_) / repo / "mmproj-g-F16.gguf").string();
    ASSERT_TRUE(server.start({"-hf", repo, "-mm", own, "-c", "512"})) << server.log();
    EXPECT_TRUE(takes_images(server.port()));
    EXPECT_EQ(fetched(*hub), std::vector<std::string>{"g-Q8_0.gguf"});
  }
  {
    ServerProcess server;
    ASSERT_TRUE(server.start({"-hf", repo, "-c", "512"})) << server.log();
    EXPECT_TRUE(takes_images(server.port()));
    // The model was cached by the first start: only the projector is fetched now.
    EXPECT_EQ(fetched(*hub), (std::vector<std::string>{"g-Q8_0.gguf", "mmproj-g-F16.gguf"}));
    EXPECT_TRUE(fs::exists(snapshot("mmproj-g-F16.gguf", repo)));
  }
  // --offline finds the cached projector.
  ServerProcess offline;
  ASSERT_TRUE(offline.start({"-hf", repo, "--offline", "-c", "512"})) << offline.log();
  EXPECT_TRUE(takes_images(offline.port()));
  EXPECT_EQ(fetched(*hub).size(), 2u);
}

TEST_F(HubDownload, ProjectorUrlIsDownloadedToTheLlamaCacheAndLoaded) {
  const fs::path files = fs::path(root_) / "test" / "gemma3-files";
  write_gemma3_pair(files, "g-Q8_0.gguf", "mmproj-g-F16.gguf");
  auto hub = start_hub();
  const std::string url = hub->endpoint() + "files/test/gemma3-files/mmproj-g-F16.gguf";
  ServerProcess server;
  ASSERT_TRUE(server.start({"-m", (files / "g-Q8_0.gguf").string(), "-mmu", url, "-c", "512"}))
      << server.log();
  EXPECT_TRUE(takes_images(server.port()));
  EXPECT_TRUE(fs::exists(fs::path(cache_) / "mmproj-g-F16.gguf"));
  EXPECT_TRUE(fs::exists(fs::path(cache_) / "mmproj-g-F16.gguf.etag"));
}

TEST_F(HubDownload, ProgressBarIsDrawnOnATerminal) {
  if (std::system("command -v tmux >/dev/null 2>&1") != 0)
    GTEST_SKIP() << "tmux is not installed: the terminal progress bar is not tested";
  MockHubOptions slow;
  slow.throttle_bytes_per_s = 300000;
  auto hub = start_hub(slow);
  const std::string session = "hearth_dl_" + std::to_string(::getpid());
  const std::string command = "LLAMA_CACHE=" + cache_ + " MODEL_ENDPOINT=" + hub->endpoint() + " " +
                              bin_dir() + "/hearth-server -hf " + kRepo + " --port 0; sleep 10";
  ASSERT_EQ(std::system(
                ("tmux new-session -d -s " + session + " -x 200 -y 20 '" + command + "'").c_str()),
            0);
  std::string screen;
  for (int i = 0; i < 60 && screen.find("%") == std::string::npos; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    ProcessResult cap = run_process({"/bin/sh", "-c", "tmux capture-pane -p -t " + session}, 10);
    screen = cap.out + cap.err;
  }
  std::system(("tmux kill-session -t " + session + " >/dev/null 2>&1").c_str());
  EXPECT_NE(screen.find("Downloading test/stories-GGUF ["), std::string::npos) << screen;
  EXPECT_NE(screen.find("MiB/s"), std::string::npos) << screen;
}

}  // namespace
}  // namespace hearth::test
