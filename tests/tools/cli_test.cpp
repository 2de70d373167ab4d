// hearth-cli as a user runs it: the golden greedy completion on stdout, and a clear error
// with a non-zero exit for missing, corrupt or hostile model files and bad arguments.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <filesystem>
#include <fstream>

#include "support/process.h"
#include "support/test_paths.h"

namespace hearth::test {
namespace {

std::string cli() {
  return bin_dir() + "/hearth-cli";
}

void write_bytes(const std::string& path, const std::string& bytes) {
  std::ofstream out(path, std::ios::binary);
  out << bytes;
}

TEST(HearthCli, PrintsTheGoldenGreedyCompletion) {
  const auto capture = nlohmann::json::parse(
      read_file(shared_path("golden/llama-server-b10573/stories260K-np4/completion_greedy.json")));
  const auto r = run_process({cli(), "-m", shared_path("models/stories260K.gguf"), "-p",
                              "Once upon a time", "-n", "32", "--temp", "0"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, capture["response"]["content"].get<std::string>());
  EXPECT_NE(r.err.find("tokens/s"), std::string::npos) << "speed goes to stderr: " << r.err;
}

TEST(HearthCli, SeededSamplingIsRepeatable) {
  const std::vector<std::string> args = {
      cli(),    "-m",          shared_path("models/stories260K.gguf"),
      "-p",     "Tom and Sue", "-n",
      "24",     "--temp",      "0.9",
      "--seed", "42",          "-t",
      "1"};
  const auto a = run_process(args), b = run_process(args);
  ASSERT_EQ(a.exit_code, 0) << a.err;
  EXPECT_EQ(a.out, b.out);
  EXPECT_FALSE(a.out.empty());
}

TEST(HearthCli, MissingModelIsAClearError) {
  const auto r = run_process({cli(), "-m", "/nonexistent/model.gguf", "-p", "x", "-n", "4"});
  EXPECT_NE(r.exit_code, 0);
  EXPECT_NE(r.err.find("/nonexistent/model.gguf"), std::string::npos) << r.err;
}

TEST(HearthCli, BadArgumentsAreRefused) {
  EXPECT_NE(run_process({cli(), "-p", "x"}).exit_code, 0) << "model is required";
  EXPECT_NE(
      run_process({cli(), "-m", shared_path("models/stories260K.gguf"), "-p", "x", "-n", "-5"})
          .exit_code,
      0);
  EXPECT_NE(run_process({cli(), "-m", shared_path("models/stories260K.gguf"), "-p", "x", "--bogus"})
                .exit_code,
            0);
}

class CorruptModel : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = make_temp_dir("cli-corrupt");
    model_ = read_file(shared_path("models/stories260K.gguf"));
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  void expect_refused(const std::string& bytes, const std::string& what) {
    const std::string path = dir_ + "/bad.gguf";
    write_bytes(path, bytes);
    const auto r = run_process({cli(), "-m", path, "-p", "Once upon a time", "-n", "4"});
    EXPECT_NE(r.exit_code, 0) << what;
    EXPECT_LT(r.exit_code, 128) << what << ": killed by a signal";
    EXPECT_NE(r.err.find("error"), std::string::npos) << what << ": " << r.err;
    EXPECT_TRUE(r.out.empty()) << what;
  }

  std::string dir_, model_;
};

TEST_F(CorruptModel, TruncatedFilesAreRefused) {
  for (size_t cut : {size_t{0}, size_t{3}, size_t{16}, size_t{100}, size_t{5000}, size_t{14000},
                     size_t{14200}, model_.size() / 2, model_.size() - 1}) {
    expect_refused(model_.substr(0, cut), "truncated at " + std::to_string(cut));
  }
}

TEST_F(CorruptModel, DamagedHeadersAreRefused) {
  std::string bad_magic = model_;
  bad_magic[0] = 'X';
  expect_refused(bad_magic, "bad magic");
  std::string huge_count = model_;
  for (int i = 8; i < 16; ++i) huge_count[static_cast<size_t>(i)] = '\x7f';
  expect_refused(huge_count, "absurd tensor count");
  expect_refused(std::string(4096, '\xff'), "garbage");
}

TEST_F(CorruptModel, DirectoryIsRefused) {
  const auto r = run_process({cli(), "-m", dir_, "-p", "x", "-n", "1"});
  EXPECT_NE(r.exit_code, 0);
  EXPECT_LT(r.exit_code, 128);
}

}  // namespace
}  // namespace hearth::test
