// A pool's placement: the CPUs each thread is pinned to (read back inside the threads with
// pthread_getaffinity_np), the scheduling policy of a priority level, the poll level's spin
// (level 0: workers sleep without spinning), the calling thread taking the pool's placement,
// and the NUMA layouts over a made-up /sys tree.
#include <gtest/gtest.h>
#include <linux/capability.h>
#include <pthread.h>
#include <sched.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <map>
#include <mutex>
#include <thread>
#include <vector>

#include "base/numa.h"
#include "base/thread_placement.h"
#include "base/thread_pool.h"

namespace hearth {
namespace {

using Cpus = std::vector<int>;

// What each thread of the pool sees of itself, by thread index.
struct ThreadView {
  Cpus cpus;
  int policy = -1;
};

// Runs one loop of n_threads items in which every item waits until all have started: a
// thread holds its item while it waits, so each item runs on a different thread and every
// thread of the pool reports. (A generous deadline keeps a broken pool from hanging.)
std::map<int, ThreadView> view_every_thread(ThreadPool& pool) {
  const int n = pool.n_threads();
  std::atomic<int> started{0};
  std::mutex mu;
  std::map<int, ThreadView> views;
  pool.parallel_for(n, [&](int64_t begin, int64_t end, int thread_index) {
    for (int64_t i = begin; i < end; ++i) {
      ThreadView v;
      v.cpus = current_thread_cpus();
      sched_param param{};
      pthread_getschedparam(pthread_self(), &v.policy, &param);
      {
        std::lock_guard<std::mutex> lock(mu);
        views[thread_index] = v;
      }
      started.fetch_add(1);
      const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
      while (started.load() < n && std::chrono::steady_clock::now() < deadline)
        std::this_thread::yield();
    }
  });
  return views;
}

bool wait_until_all_sleep(const ThreadPool& pool) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
  while (pool.sleeping_workers() != pool.n_threads() - 1) {
    if (std::chrono::steady_clock::now() > deadline) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  return true;
}

TEST(ThreadPlacement, StrictGivesEachThreadTheNextCpuAndTheCallerTheLast) {
  // As the reference: workers 1..n-1 first, then the calling thread, wrapping around.
  EXPECT_EQ(spread_cpus({2, 5, 7}, true, 3), (std::vector<Cpus>{{7}, {2}, {5}}));
  EXPECT_EQ(spread_cpus({2, 5}, true, 4), (std::vector<Cpus>{{5}, {2}, {5}, {2}}));
  EXPECT_EQ(spread_cpus({2, 5}, false, 2), (std::vector<Cpus>{{2, 5}, {2, 5}}));
  EXPECT_TRUE(spread_cpus({}, true, 2).empty());
}

TEST(ThreadPlacement, PollLevelScalesTheSpin) {
  EXPECT_EQ(spin_time_for_poll(0).count(), 0);
  EXPECT_EQ(spin_time_for_poll(kDefaultPollLevel), std::chrono::microseconds(300));
  EXPECT_GT(spin_time_for_poll(100), spin_time_for_poll(kDefaultPollLevel));
  EXPECT_EQ(spin_time_for_poll(1000), spin_time_for_poll(100));
}

TEST(ThreadPlacement, NonStrictPinsEveryThreadToTheWholeSet) {
  const Cpus allowed = current_thread_cpus();
  ASSERT_FALSE(allowed.empty());
  const Cpus set = {allowed.front()};
  ThreadPlacement p;
  p.thread_cpus = spread_cpus(set, false, 3);
  std::thread caller([&] {  // the calling thread gets pinned too: not the test's own
    ThreadPool pool(3, p);
    auto views = view_every_thread(pool);
    ASSERT_EQ(views.size(), 3u);
    for (const auto& [index, v] : views) EXPECT_EQ(v.cpus, set) << "thread " << index;
  });
  caller.join();
}

TEST(ThreadPlacement, StrictPinsOneThreadPerCpu) {
  const Cpus allowed = current_thread_cpus();
  if (allowed.size() < 2) GTEST_SKIP() << "needs 2 usable CPUs, the process has " << allowed.size();
  ThreadPlacement p;
  p.thread_cpus = spread_cpus({allowed[0], allowed[1]}, true, 2);
  std::thread caller([&] {
    ThreadPool pool(2, p);
    auto views = view_every_thread(pool);
    ASSERT_EQ(views.size(), 2u);
    EXPECT_EQ(views[1].cpus, Cpus{allowed[0]});
    EXPECT_EQ(views[0].cpus, Cpus{allowed[1]});  // the calling thread, placed last
  });
  caller.join();
}

TEST(ThreadPlacement, CallerTakesEachPoolsPlacementAndGetsItsOwnBack) {
  const Cpus allowed = current_thread_cpus();
  if (allowed.size() < 2) GTEST_SKIP() << "needs 2 usable CPUs, the process has " << allowed.size();
  ThreadPlacement pinned;
  pinned.thread_cpus = {{allowed[0]}, {allowed[0]}};
  pinned.priority = -1;
  std::thread caller([&] {
    ThreadPool a(2, pinned);
    ThreadPool b(2);
    a.parallel_for(4, [](int64_t, int64_t, int) {});
    EXPECT_EQ(current_thread_cpus(), Cpus{allowed[0]});
    int policy = -1;
    sched_param param{};
    pthread_getschedparam(pthread_self(), &policy, &param);
    EXPECT_EQ(policy, SCHED_BATCH);
    b.parallel_for(4, [](int64_t, int64_t, int) {});
    EXPECT_EQ(current_thread_cpus(), allowed);
    pthread_getschedparam(pthread_self(), &policy, &param);
    EXPECT_EQ(policy, SCHED_OTHER);
  });
  caller.join();
}

TEST(ThreadPlacement, LowPriorityRunsWorkersUnderSchedBatch) {
  ThreadPlacement p;
  p.priority = -1;
  std::thread caller([&] {
    ThreadPool pool(3, p);
    auto views = view_every_thread(pool);
    ASSERT_EQ(views.size(), 3u);
    for (const auto& [index, v] : views) EXPECT_EQ(v.policy, SCHED_BATCH) << "thread " << index;
  });
  caller.join();
}

TEST(ThreadPlacement, PollZeroWorkersSleepWithoutSpinning) {
  ThreadPlacement p;
  p.poll = 0;
  ThreadPool pool(3, p);
  ASSERT_TRUE(wait_until_all_sleep(pool));
  for (int round = 0; round < 50; ++round) {
    std::atomic<int64_t> sum{0};
    pool.parallel_for(100, [&](int64_t b, int64_t e, int) { sum.fetch_add(e - b); });
    ASSERT_EQ(sum.load(), 100);
  }
  ASSERT_TRUE(wait_until_all_sleep(pool));
  EXPECT_EQ(pool.spin_phases(), 0u);
}

TEST(ThreadPlacement, DefaultPollSpinsBeforeSleeping) {
  ThreadPool pool(3);
  ASSERT_TRUE(wait_until_all_sleep(pool));
  EXPECT_GE(pool.spin_phases(), 2u);  // each worker spun before its first sleep
}

TEST(ThreadPlacement, ProcessPriorityLowIsNiceFiveAndInherited) {
  std::thread t([] {
    ASSERT_TRUE(set_process_priority(-1).is_ok());  // lowering needs no privilege
    EXPECT_EQ(getpriority(PRIO_PROCESS, static_cast<id_t>(gettid())), 5);
    int child_nice = -100;
    std::thread child([&] { child_nice = getpriority(PRIO_PROCESS, static_cast<id_t>(gettid())); });
    child.join();
    EXPECT_EQ(child_nice, 5);
  });
  t.join();
}

// Drops CAP_SYS_NICE from the calling thread's effective capabilities (capabilities are
// per thread on Linux, and threads it starts inherit them): what an unprivileged process has.
bool drop_sys_nice() {
  __user_cap_header_struct header{_LINUX_CAPABILITY_VERSION_3, 0};
  __user_cap_data_struct data[2]{};
  if (syscall(SYS_capget, &header, data) != 0) return false;
  data[CAP_SYS_NICE / 32].effective &= ~(1u << (CAP_SYS_NICE % 32));
  return syscall(SYS_capset, &header, data) == 0;
}

// Without the privilege, raising the priority fails: the process priority call says so (the
// server warns) and the pool still runs every item, its threads under the inherited policy.
TEST(ThreadPlacement, PriorityItMayNotRaiseLeavesThePoolWorking) {
  std::thread caller([] {
    ASSERT_TRUE(drop_sys_nice());
    sched_param param{};
    param.sched_priority = 1;
    if (pthread_setschedparam(pthread_self(), SCHED_FIFO, &param) == 0) {
      GTEST_SKIP() << "real-time priority still allowed (RLIMIT_RTPRIO)";
    }
    EXPECT_FALSE(set_process_priority(2).is_ok());
    ThreadPlacement p;
    p.priority = 2;
    ThreadPool pool(3, p);
    auto views = view_every_thread(pool);
    ASSERT_EQ(views.size(), 3u);
    for (const auto& [index, v] : views) EXPECT_EQ(v.policy, SCHED_OTHER) << "thread " << index;
  });
  caller.join();
}

class NumaTree : public ::testing::Test {
 protected:
  // Two nodes: CPUs 0,1 on node0 and 2,3 on node1.
  void SetUp() override {
    root_ = std::filesystem::temp_directory_path() /
            ("hearth_numa_" + std::to_string(getpid()) + "_" +
             ::testing::UnitTest::GetInstance()->current_test_info()->name());
    for (int cpu = 0; cpu < 4; ++cpu)
      std::filesystem::create_directories(root_ / "cpu" / ("cpu" + std::to_string(cpu)));
    for (int cpu = 0; cpu < 4; ++cpu)
      std::filesystem::create_directories(root_ / "node" / ("node" + std::to_string(cpu / 2)) /
                                          ("cpu" + std::to_string(cpu)));
  }
  void TearDown() override { std::filesystem::remove_all(root_); }
  std::filesystem::path root_;
};

TEST_F(NumaTree, ReadsNodesAndTheirCpus) {
  NumaTopology t = read_numa_topology(root_.string());
  EXPECT_EQ(t.node_cpus, (std::vector<Cpus>{{0, 1}, {2, 3}}));
  EXPECT_TRUE(read_numa_topology((root_ / "missing").string()).node_cpus.empty());
}

TEST_F(NumaTree, StrategiesPlaceThreadsAsTheReference) {
  const NumaTopology t = read_numa_topology(root_.string());
  EXPECT_EQ(numa_thread_cpus(NumaStrategy::kDistribute, t, 3, 0, {}),
            (std::vector<Cpus>{{0, 1}, {2, 3}, {0, 1}}));
  EXPECT_EQ(numa_thread_cpus(NumaStrategy::kIsolate, t, 2, 1, {}),
            (std::vector<Cpus>{{2, 3}, {2, 3}}));
  EXPECT_EQ(numa_thread_cpus(NumaStrategy::kNumactl, t, 2, 0, {1, 2}),
            (std::vector<Cpus>{{1, 2}, {1, 2}}));
  EXPECT_TRUE(numa_thread_cpus(NumaStrategy::kDisabled, t, 2, 0, {1}).empty());
}

TEST(Numa, OneNodeLeavesThreadsUnpinned) {
  NumaTopology one{{{0, 1}}};
  EXPECT_TRUE(numa_thread_cpus(NumaStrategy::kDistribute, one, 2, 0, {0, 1}).empty());
  EXPECT_TRUE(numa_thread_cpus(NumaStrategy::kIsolate, one, 2, 0, {0, 1}).empty());
}

}  // namespace
}  // namespace hearth
