// The thread pool hands loops to spinning or sleeping workers; every item must be run
// exactly once, in chunks whose boundaries never change, whether the workers were awake,
// asleep or late.
#include "base/thread_pool.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <mutex>
#include <thread>
#include <vector>

namespace hearth {
namespace {

// Runs one loop and checks that every item was handled exactly once.
void expect_each_item_once(ThreadPool& pool, int64_t n_items) {
  std::vector<std::atomic<int>> hits(static_cast<size_t>(n_items));
  pool.parallel_for(n_items, [&](int64_t begin, int64_t end, int) {
    for (int64_t i = begin; i < end; ++i) hits[static_cast<size_t>(i)].fetch_add(1);
  });
  for (int64_t i = 0; i < n_items; ++i) ASSERT_EQ(hits[static_cast<size_t>(i)].load(), 1) << i;
}

TEST(ThreadPool, RunsEveryItemOnceInManyBackToBackLoops) {
  ThreadPool pool(3);
  for (int round = 0; round < 2000; ++round) expect_each_item_once(pool, 1 + round % 97);
}

// More threads than cores and loops of alternating chunk counts: a late thread must never
// claim a chunk of a finished loop against the next loop's chunk count (that once ran a
// stale range and left the caller waiting forever).
TEST(ThreadPool, LateThreadsNeverMixTwoLoops) {
  ThreadPool pool(6);
  for (int round = 0; round < 5000; ++round) expect_each_item_once(pool, round % 2 ? 40 : 3);
}

TEST(ThreadPool, WakesSleepingWorkers) {
  ThreadPool pool(2);
  for (int round = 0; round < 5; ++round) {
    std::this_thread::sleep_for(std::chrono::milliseconds(5));  // past the spin window
    // The caller's chunk waits until another thread has run a chunk: only a woken worker
    // can release it.
    std::atomic<bool> worker_ran{false};
    pool.parallel_for(2, [&](int64_t, int64_t, int thread) {
      if (thread != 0) {
        worker_ran = true;
        return;
      }
      while (!worker_ran) std::this_thread::yield();
    });
    EXPECT_TRUE(worker_ran);
  }
}

TEST(ThreadPool, ChunkBoundariesDependOnlyOnItemAndThreadCounts) {
  ThreadPool pool(2);
  for (int round = 0; round < 50; ++round) {
    std::mutex m;
    std::vector<std::pair<int64_t, int64_t>> ranges;
    pool.parallel_for(30, [&](int64_t begin, int64_t end, int) {
      std::lock_guard<std::mutex> lock(m);
      ranges.emplace_back(begin, end);
    });
    std::sort(ranges.begin(), ranges.end());
    ASSERT_EQ(ranges.size(), 8u);  // 4 chunks per thread
    int64_t next = 0;
    for (const auto& [begin, end] : ranges) {
      EXPECT_EQ(begin, next);
      EXPECT_EQ(end - begin, begin < 24 ? 4 : 3);  // 30 = 6 x 4 + 2 x 3
      next = end;
    }
  }
}

// A slow chunk does not hold the others back: the remaining chunks are taken by whichever
// thread is free, and every item still runs once.
TEST(ThreadPool, OtherThreadsTakeTheChunksOfASlowOne) {
  ThreadPool pool(2);
  std::vector<std::atomic<int>> hits(64);
  std::atomic<int> calls_beside_slow{0};
  std::atomic<bool> slow_running{false};
  pool.parallel_for(64, [&](int64_t begin, int64_t end, int) {
    if (begin == 0) {
      slow_running = true;
      std::this_thread::sleep_for(std::chrono::milliseconds(30));
      slow_running = false;
    } else if (slow_running) {
      calls_beside_slow.fetch_add(1);
    }
    for (int64_t i = begin; i < end; ++i) hits[static_cast<size_t>(i)].fetch_add(1);
  });
  for (auto& h : hits) EXPECT_EQ(h.load(), 1);
  EXPECT_GE(calls_beside_slow.load(), 1) << "no chunk ran while the slow one slept";
}

TEST(ThreadPool, SingleThreadAndEmptyLoops) {
  ThreadPool one(1);
  expect_each_item_once(one, 10);
  ThreadPool pool(2);
  bool called = false;
  pool.parallel_for(0, [&](int64_t, int64_t, int) { called = true; });
  EXPECT_FALSE(called);
}

TEST(ThreadPool, DestroysWhileWorkersSleepOrSpin) {
  for (int i = 0; i < 20; ++i) {
    ThreadPool pool(4);
    expect_each_item_once(pool, 100);
    if (i % 2 == 0) std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
}

}  // namespace
}  // namespace hearth
