// How hearth-server loads the model: the load modes (-lm and its deprecated aliases) seen
// from outside through /proc (the file mapped or not, memory locked or not), --check-tensors
// refusing a model with NaN in its data, and the warm-up run, none of which may change what
// the model answers.
#include <gtest/gtest.h>
#include <sys/mman.h>
#include <sys/resource.h>

#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <limits>
#include <memory>
#include <string>
#include <vector>

#include "base/half.h"
#include "gguf/file.h"
#include "gguf/writer.h"
#include "server/server_fixture.h"
#include "support/process.h"

namespace hearth::test {
namespace {

// The greedy continuations of a few prompts.
std::vector<std::string> greedy_outputs(int port) {
  std::vector<std::string> out;
  for (const char* prompt : {"Once upon a time", "The little dog", "Lily saw a big red ball"}) {
    Json body = {{"prompt", prompt}, {"n_predict", 24}, {"temperature", 0}};
    Json reply = parse_or_null(http_request(port, "POST", "/completion", body.dump()).body);
    const bool answered = reply.is_object() && reply.contains("content");
    EXPECT_TRUE(answered) << prompt << ": " << reply.dump();
    out.push_back(answered ? reply["content"].get<std::string>() : "");
  }
  return out;
}

// The lines of /proc/<pid>/<name>.
std::vector<std::string> proc_lines(pid_t pid, const std::string& name) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/" + name);
  std::vector<std::string> lines;
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

bool maps_file(pid_t pid, const std::string& path) {
  const std::string resolved = std::filesystem::canonical(path).string();
  for (const std::string& line : proc_lines(pid, "maps"))
    if (line.ends_with(" " + resolved)) return true;
  return false;
}

// VmLck in kB, -1 when absent.
long locked_kb(pid_t pid) {
  for (const std::string& line : proc_lines(pid, "status"))
    if (line.starts_with("VmLck:")) return std::stol(line.substr(6));
  return -1;
}

// Whether this process may lock as much memory as the model needs (the server, its child,
// has the same limit and capability).
bool can_lock(size_t bytes) {
  std::vector<uint8_t> buffer(bytes, 1);
  if (mlock(buffer.data(), buffer.size()) != 0) return false;
  munlock(buffer.data(), buffer.size());
  return true;
}

// Each start is a fresh server (and a fresh log); the previous one is stopped first.
class ModelLoadTest : public ::testing::Test {
 protected:
  void TearDown() override {
    server_.reset();
    if (!temp_dir_.empty()) std::filesystem::remove_all(temp_dir_);
  }
  void start(const std::vector<std::string>& extra = {}) {
    server_.reset();
    server_ = std::make_unique<ServerProcess>();
    ASSERT_TRUE(server_->start(stories_args(extra))) << server_->log();
  }
  int port() const { return server_->port(); }
  pid_t pid() const { return server_->pid(); }
  std::string log() const { return server_->log(); }
  bool model_mapped() const { return maps_file(pid(), stories_model()); }
  // The default server's answers, what every load mode must give too.
  const std::vector<std::string>& baseline() {
    if (baseline_.empty()) {
      ServerProcess server;
      EXPECT_TRUE(server.start(stories_args())) << server.log();
      baseline_ = greedy_outputs(server.port());
    }
    return baseline_;
  }
  const std::string& temp_dir() {
    if (temp_dir_.empty()) temp_dir_ = make_temp_dir("model_load");
    return temp_dir_;
  }

  std::unique_ptr<ServerProcess> server_;
  std::vector<std::string> baseline_;
  std::string temp_dir_;
};

TEST_F(ModelLoadTest, DefaultLoadMapsTheModelFile) {
  start();
  EXPECT_TRUE(model_mapped());
  EXPECT_NE(log().find("(load_mode = mmap)"), std::string::npos) << log();
  const std::vector<std::string> by_default = greedy_outputs(port());
  start({"-lm", "mmap"});
  EXPECT_TRUE(model_mapped());
  EXPECT_EQ(greedy_outputs(port()), by_default);
}

TEST_F(ModelLoadTest, NoMmapReadsTheModelIntoMemory) {
  for (const auto& extra : std::vector<std::vector<std::string>>{{"--no-mmap"}, {"-lm", "none"}}) {
    start(extra);
    EXPECT_FALSE(model_mapped()) << extra[0];
    EXPECT_NE(log().find("(load_mode = none)"), std::string::npos) << log();
    EXPECT_EQ(greedy_outputs(port()), baseline()) << extra[0];
    // Only the deprecated spelling warns.
    EXPECT_EQ(log().find("DEPRECATED: --mmap and --no-mmap are deprecated") != std::string::npos,
              extra[0] == "--no-mmap")
        << log();
  }
}

TEST_F(ModelLoadTest, MlockLocksTheWeights) {
#if defined(__SANITIZE_ADDRESS__)
  // The server of this build runs under AddressSanitizer, whose mlock interceptor does
  // nothing, so no page is ever locked; the Release build runs this test.
  GTEST_SKIP() << "AddressSanitizer ignores mlock: VmLck stays 0 in this build";
#endif
  const auto model_bytes = std::filesystem::file_size(stories_model());
  if (!can_lock(model_bytes))
    GTEST_SKIP() << "this process cannot lock " << model_bytes << " bytes (RLIMIT_MEMLOCK)";
  struct Case {
    std::vector<std::string> args;
    bool mapped;
  };
  const Case cases[] = {
      {{"--mlock"}, false}, {{"-lm", "mlock"}, false}, {{"-lm", "mmap+mlock"}, true}};
  for (const Case& c : cases) {
    start(c.args);
    EXPECT_GT(locked_kb(pid()), 0) << c.args[0];
    EXPECT_EQ(model_mapped(), c.mapped) << c.args[0];
    EXPECT_EQ(log().find("failed to mlock"), std::string::npos) << log();
    EXPECT_EQ(greedy_outputs(port()), baseline()) << c.args[0];
  }
  start({"--mlock"});
  EXPECT_NE(log().find("DEPRECATED: --mlock is deprecated. use --load-mode mlock instead"),
            std::string::npos)
      << log();
  start({});
  EXPECT_EQ(locked_kb(pid()), 0);
}

// Sets the soft RLIMIT_MEMLOCK of this process (inherited by the servers it starts) for the
// lifetime of the object.
class MemlockLimit {
 public:
  explicit MemlockLimit(rlim_t soft) {
    getrlimit(RLIMIT_MEMLOCK, &saved_);
    rlimit lowered = saved_;
    lowered.rlim_cur = soft;
    setrlimit(RLIMIT_MEMLOCK, &lowered);
  }
  ~MemlockLimit() { setrlimit(RLIMIT_MEMLOCK, &saved_); }

 private:
  rlimit saved_{};
};

// A lock the limit refuses is a warning, as in the reference; the model is served all the
// same.
TEST_F(ModelLoadTest, FailedMlockWarnsAndServes) {
  const std::vector<std::string>& expected = baseline();
  MemlockLimit limit(0);
  if (can_lock(4096))
    GTEST_SKIP() << "this process may lock memory beyond RLIMIT_MEMLOCK (CAP_IPC_LOCK, e.g. "
                    "root), so a refused lock cannot be provoked";
  for (const std::string mode : {"mlock", "mmap+mlock"}) {
    start({"-lm", mode});
    EXPECT_NE(log().find("failed to mlock"), std::string::npos) << log();
    EXPECT_EQ(locked_kb(pid()), 0) << mode;
    EXPECT_EQ(greedy_outputs(port()), expected) << mode;
  }
}

// Direct reads where the file system allows them, buffered reads with a warning where not:
// either way the weights are a copy, and the answers the same.
TEST_F(ModelLoadTest, DirectIoServesTheSameOutput) {
  for (const auto& extra : std::vector<std::vector<std::string>>{{"-lm", "dio"}, {"-dio"}}) {
    start(extra);
    EXPECT_FALSE(model_mapped()) << extra[0];
    EXPECT_NE(log().find("(load_mode = dio)"), std::string::npos) << log();
    EXPECT_EQ(greedy_outputs(port()), baseline()) << extra[0];
  }
}

// A copy of stories260K with `edit` applied to its tensors (name, type, shape, data).
struct TensorData {
  std::string name;
  TensorType type;
  std::vector<int64_t> ne;
  std::vector<uint8_t> data;
};

std::string write_model_copy(const std::string& path,
                             const std::function<void(TensorData&)>& edit) {
  auto in = gguf::File::open(stories_model());
  EXPECT_TRUE(in.is_ok());
  gguf::Writer w;
  for (const gguf::KeyValue& kv : in->metadata()) w.set_value(kv.key, kv.value);
  for (const gguf::TensorInfo& t : in->tensors()) {
    TensorData d{std::string(t.name), t.type,
                 std::vector<int64_t>(t.ne.begin(), t.ne.begin() + std::max(1u, t.n_dims)),
                 std::vector<uint8_t>(t.data, t.data + t.n_bytes)};
    edit(d);
    EXPECT_TRUE(w.add_tensor(d.name, d.type, d.ne, std::move(d.data)).is_ok()) << d.name;
  }
  EXPECT_TRUE(w.write(path).is_ok());
  return path;
}

// Q8_0 of an f32 tensor: per 32 values a scale max|x|/127 and the rounded quotients.
std::vector<uint8_t> to_q8_0(const std::vector<uint8_t>& f32) {
  std::vector<float> x(f32.size() / 4);
  std::memcpy(x.data(), f32.data(), f32.size());
  std::vector<uint8_t> out;
  for (size_t b = 0; b < x.size(); b += 32) {
    float amax = 0;
    for (size_t i = b; i < b + 32; ++i) amax = std::max(amax, std::fabs(x[i]));
    const float d = amax / 127;
    const f16_bits dh = f32_to_f16(d);
    out.push_back(static_cast<uint8_t>(dh & 0xff));
    out.push_back(static_cast<uint8_t>(dh >> 8));
    for (size_t i = b; i < b + 32; ++i)
      out.push_back(static_cast<uint8_t>(static_cast<int8_t>(d == 0 ? 0 : std::lround(x[i] / d))));
  }
  return out;
}

ProcessResult run_server(const std::string& model, std::vector<std::string> extra) {
  std::vector<std::string> argv = {
      bin_dir() + "/hearth-server", "-m", model, "-c", "256", "-np", "1", "--port", "0"};
  argv.insert(argv.end(), extra.begin(), extra.end());
  return run_process(argv, 60);
}

TEST_F(ModelLoadTest, CheckTensorsRefusesANanValue) {
  const std::string bad = write_model_copy(temp_dir() + "/nan.gguf", [](TensorData& t) {
    if (t.name != "blk.0.ffn_up.weight") return;
    const float nan = std::numeric_limits<float>::quiet_NaN();
    std::memcpy(t.data.data() + (2 * 64 + 5) * 4, &nan, 4);  // row 2, column 5
  });
  const ProcessResult refused = run_server(bad, {"--check-tensors"});
  EXPECT_EQ(refused.exit_code, 1);
  EXPECT_NE(refused.err.find("tensor 'blk.0.ffn_up.weight' has invalid data: NaN at row 2, "
                             "column 5"),
            std::string::npos)
      << refused.err;
}

TEST_F(ModelLoadTest, CheckTensorsRefusesANanBlockScale) {
  const auto quantize = [](bool poison) {
    return [poison](TensorData& t) {
      if (t.name != "blk.1.attn_q.weight") return;
      t.type = TensorType::kQ8_0;
      t.data = to_q8_0(t.data);
      const f16_bits nan = f32_to_f16(std::numeric_limits<float>::quiet_NaN());
      if (poison) std::memcpy(t.data.data() + 5 * 34, &nan, 2);  // block 5: row 2, block 1
    };
  };
  const std::string bad = write_model_copy(temp_dir() + "/q8_nan.gguf", quantize(true));
  const ProcessResult refused = run_server(bad, {"--check-tensors"});
  EXPECT_EQ(refused.exit_code, 1);
  EXPECT_NE(refused.err.find("tensor 'blk.1.attn_q.weight' has invalid data: NaN block scale d "
                             "in row 2, block 1"),
            std::string::npos)
      << refused.err;
  // The same model with valid scales is served with the check.
  const std::string clean = write_model_copy(temp_dir() + "/q8.gguf", quantize(false));
  ServerProcess server;
  ASSERT_TRUE(server.start({"-m", clean, "-c", "256", "-np", "1", "--check-tensors"}))
      << server.log();
}

TEST_F(ModelLoadTest, CheckTensorsPassesACleanModel) {
  start({"--check-tensors"});
  EXPECT_EQ(greedy_outputs(port()), baseline());
  // Without the check the NaN goes unnoticed at startup, as in the reference.
  const std::string bad = write_model_copy(temp_dir() + "/nan.gguf", [](TensorData& t) {
    if (t.name == "output_norm.weight") t.data[3] = 0x7f, t.data[2] = 0xc0;
  });
  ServerProcess unchecked;
  EXPECT_TRUE(unchecked.start({"-m", bad, "-c", "256", "-np", "1"})) << unchecked.log();
}

// The warm-up run is logged, and leaves nothing behind: the answers are those of a server
// that never ran it.
TEST_F(ModelLoadTest, WarmupIsLoggedAndChangesNoOutput) {
  const std::string line = "warming up the model with an empty run";
  start();
  EXPECT_NE(log().find(line), std::string::npos) << log();
  const std::vector<std::string> warmed = greedy_outputs(port());
  start({"--no-warmup"});
  EXPECT_EQ(log().find(line), std::string::npos) << log();
  EXPECT_EQ(greedy_outputs(port()), warmed);
  start({"--warmup"});
  EXPECT_NE(log().find(line), std::string::npos);
}

}  // namespace
}  // namespace hearth::test
