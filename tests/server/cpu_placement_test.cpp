// CPU placement, priority and the batch and draft pools' options, seen from outside: the
// real hearth-server on stories260K, its threads read from /proc/<pid>/task/* (comm for the
// pool a thread belongs to, Cpus_allowed_list from status, nice and policy from stat). The
// pools' workers are named hearth-gen, hearth-batch and hearth-draft; hearth-sched is the
// scheduler thread, which runs its share of every loop and takes the pool's placement.
#include <dirent.h>
#include <linux/capability.h>
#include <sched.h>
#include <sys/prctl.h>
#include <sys/resource.h>

#include <algorithm>
#include <fstream>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "server/server_fixture.h"
#include "support/process.h"

namespace hearth::test {
namespace {

struct TaskView {
  std::string comm;
  std::string cpus;  // Cpus_allowed_list
  int nice = 0;
  int policy = 0;
};

std::string first_line(const std::string& path) {
  std::ifstream in(path);
  std::string line;
  std::getline(in, line);
  return line;
}

std::string cpus_allowed_list(const std::string& status_path) {
  std::ifstream in(status_path);
  for (std::string line; std::getline(in, line);) {
    if (line.rfind("Cpus_allowed_list:", 0) == 0) {
      const size_t at = line.find_first_not_of(" \t", line.find(':') + 1);
      return line.substr(at);
    }
  }
  return "";
}

std::vector<TaskView> tasks_of(pid_t pid) {
  std::vector<TaskView> out;
  const std::string dir = "/proc/" + std::to_string(pid) + "/task";
  DIR* d = opendir(dir.c_str());
  if (d == nullptr) return out;
  while (dirent* e = readdir(d)) {
    const std::string name = e->d_name;
    if (name == "." || name == "..") continue;
    const std::string task = dir + "/" + name;
    TaskView v;
    v.comm = first_line(task + "/comm");
    v.cpus = cpus_allowed_list(task + "/status");
    // Fields after the parenthesized name start at field 3 (state): nice is field 19,
    // policy field 41.
    const std::string stat = first_line(task + "/stat");
    std::istringstream fields(stat.substr(stat.rfind(')') + 2));
    std::vector<std::string> f;
    for (std::string x; fields >> x;) f.push_back(x);
    if (f.size() < 39) continue;
    v.nice = std::stoi(f[19 - 3]);
    v.policy = std::stoi(f[41 - 3]);
    out.push_back(v);
  }
  closedir(d);
  return out;
}

std::vector<TaskView> named(const std::vector<TaskView>& tasks, const std::string& comm) {
  std::vector<TaskView> out;
  for (const auto& t : tasks) {
    if (t.comm == comm) out.push_back(t);
  }
  return out;
}

std::vector<int> usable_cpus() {
  cpu_set_t set;
  CPU_ZERO(&set);
  std::vector<int> cpus;
  if (sched_getaffinity(0, sizeof(set), &set) != 0) return cpus;
  for (int cpu = 0; cpu < CPU_SETSIZE; ++cpu) {
    if (CPU_ISSET(cpu, &set)) cpus.push_back(cpu);
  }
  return cpus;
}

bool may_use(std::initializer_list<int> want) {
  const std::vector<int> have = usable_cpus();
  for (int cpu : want) {
    if (std::find(have.begin(), have.end(), cpu) == have.end()) return false;
  }
  return true;
}

// A completion, so the scheduler thread has run loops of the pools (and taken their
// placement) before the threads are read.
void generate(int port) {
  const Json r = post_json(port, "/completion", {{"prompt", "Once upon a time"}, {"n_predict", 4}});
  ASSERT_TRUE(r.contains("content")) << r.dump();
}

class ServedCpuPlacement : public StoriesServer {
 protected:
  std::vector<TaskView> start_and_read(const std::vector<std::string>& extra) {
    start(extra);
    if (::testing::Test::HasFatalFailure()) return {};
    generate(port());
    return tasks_of(server_.pid());
  }
};

TEST(CpuPlacementMask, MaskOrRangePinsTheEngineThreadsToCpuZero) {
  if (!may_use({0})) GTEST_SKIP() << "CPU 0 is not usable by this process";
  const std::pair<const char*, const char*> options[] = {{"-C", "0x1"}, {"-Cr", "0-0"}};
  for (const auto& [option, value] : options) {
    SCOPED_TRACE(option);
    ServerProcess server;
    ASSERT_TRUE(server.start(stories_args({"-t", "2", option, value}))) << server.log();
    generate(server.port());
    const auto tasks = tasks_of(server.pid());
    const auto gen = named(tasks, "hearth-gen");
    ASSERT_EQ(gen.size(), 1u);  // -t 2: one worker beside the scheduler thread
    EXPECT_EQ(gen[0].cpus, "0");
    const auto sched = named(tasks, "hearth-sched");
    ASSERT_EQ(sched.size(), 1u);
    EXPECT_EQ(sched[0].cpus, "0");
  }
}

TEST_F(ServedCpuPlacement, StrictPutsOneThreadPerCpu) {
  if (!may_use({0, 1})) GTEST_SKIP() << "needs CPUs 0 and 1, the process may not use both";
  const auto tasks = start_and_read({"--cpu-strict", "1", "-t", "2", "-C", "0x3"});
  const auto gen = named(tasks, "hearth-gen");
  const auto sched = named(tasks, "hearth-sched");
  ASSERT_EQ(gen.size(), 1u);
  ASSERT_EQ(sched.size(), 1u);
  // As the reference: the worker takes the first CPU, the calling thread the next.
  EXPECT_EQ(gen[0].cpus, "0");
  EXPECT_EQ(sched[0].cpus, "1");
}

TEST_F(ServedCpuPlacement, LowPriorityGivesComputeThreadsNiceFive) {
  const auto tasks = start_and_read({"--prio", "-1", "-t", "2"});
  const auto gen = named(tasks, "hearth-gen");
  const auto sched = named(tasks, "hearth-sched");
  ASSERT_EQ(gen.size(), 1u);
  ASSERT_EQ(sched.size(), 1u);
  constexpr int kSchedBatch = 3;
  for (const auto& t : {gen[0], sched[0]}) {
    EXPECT_EQ(t.nice, 5) << t.comm;
    EXPECT_EQ(t.policy, kSchedBatch) << t.comm;
  }
}

// Starts `server` from a thread without CAP_SYS_NICE (dropped from its bounding set, so the
// server, even when run as root, starts without it): a server that may not raise priorities.
bool start_without_sys_nice(ServerProcess& server, const std::vector<std::string>& args) {
  bool started = false;
  std::thread starter([&] {
    if (prctl(PR_CAPBSET_DROP, CAP_SYS_NICE, 0, 0, 0) != 0) return;
    started = server.start(args);
  });
  starter.join();
  return started;
}

// Whether a process without CAP_SYS_NICE may still make a thread real-time (RLIMIT_RTPRIO).
bool rtprio_allowed_without_privilege() {
  rlimit limit{};
  return getrlimit(RLIMIT_RTPRIO, &limit) == 0 && limit.rlim_cur > 0;
}

TEST(ServedCpuPlacementPrivilege, RaisingPriorityWithoutPrivilegeWarnsAndServes) {
  if (rtprio_allowed_without_privilege())
    GTEST_SKIP() << "RLIMIT_RTPRIO lets this process raise priorities without privilege";
  ServerProcess server;
  ASSERT_TRUE(start_without_sys_nice(server, stories_args({"--prio", "2", "-t", "2"})))
      << server.log();
  generate(server.port());
  const auto gen = named(tasks_of(server.pid()), "hearth-gen");
  ASSERT_EQ(gen.size(), 1u);
  EXPECT_EQ(gen[0].policy, 0);  // SCHED_OTHER, as inherited
  EXPECT_EQ(gen[0].nice, 0);
  EXPECT_NE(server.log().find("failed to set thread priority 2"), std::string::npos)
      << server.log();
  EXPECT_NE(server.log().find("failed to set process priority 2"), std::string::npos)
      << server.log();
}

TEST_F(ServedCpuPlacement, BatchOptionsApplyToTheBatchPool) {
  if (!may_use({0})) GTEST_SKIP() << "CPU 0 is not usable by this process";
  const auto tasks = start_and_read({"-t", "2", "-Cb", "0x1", "--prio-batch", "0"});
  const auto batch = named(tasks, "hearth-batch");
  const auto gen = named(tasks, "hearth-gen");
  ASSERT_EQ(batch.size(), 1u);
  ASSERT_EQ(gen.size(), 1u);
  EXPECT_EQ(batch[0].cpus, "0");
  EXPECT_EQ(gen[0].cpus, cpus_allowed_list("/proc/self/status"));  // -C not given: unpinned
}

TEST_F(ServedCpuPlacement, DraftOptionsApplyToTheDraftPools) {
  if (!may_use({0})) GTEST_SKIP() << "CPU 0 is not usable by this process";
  const auto tasks = start_and_read({"-t", "2", "--spec-type", "draft-simple", "-md",
                                     stories_model(), "-Cd", "0x1", "--prio-draft", "-1"});
  const auto draft = named(tasks, "hearth-draft");
  ASSERT_EQ(draft.size(), 1u);  // the draft's pools are alike: one worker
  EXPECT_EQ(draft[0].cpus, "0");
  EXPECT_EQ(draft[0].policy, 3);  // SCHED_BATCH
  const auto gen = named(tasks, "hearth-gen");
  ASSERT_EQ(gen.size(), 1u);
  EXPECT_EQ(gen[0].cpus, cpus_allowed_list("/proc/self/status"));
}

TEST(CpuPlacementStartup, MaskOfNoUsableCpuIsAStartupError) {
  const std::vector<int> cpus = usable_cpus();
  ASSERT_FALSE(cpus.empty());
  const int beyond = cpus.back() + 1;
  if (beyond > 511) GTEST_SKIP() << "every CPU index is usable";
  const std::string range = std::to_string(beyond) + "-" + std::to_string(beyond);
  for (const std::vector<std::string>& extra :
       {std::vector<std::string>{"-Cr", range}, {"-C", "0x0"}, {"-Crb", range}}) {
    std::vector<std::string> argv = {bin_dir() + "/hearth-server", "--port", "0"};
    for (const auto& a : stories_args(extra)) argv.push_back(a);
    const ProcessResult r = run_process(argv, 60);
    EXPECT_EQ(r.exit_code, 1) << r.err;
    EXPECT_NE(r.err.find("names no CPU this process may use"), std::string::npos) << r.err;
  }
}

TEST(CpuPlacementStartup, BadMaskValueIsAnError) {
  const ProcessResult r =
      run_process({bin_dir() + "/hearth-server", "-m", stories_model(), "-C", "0xzz"}, 60);
  EXPECT_NE(r.exit_code, 0);
  EXPECT_NE(r.err.find("invalid cpumask"), std::string::npos) << r.err;
}

}  // namespace
}  // namespace hearth::test
