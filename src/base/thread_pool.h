// A fixed set of worker threads that split one loop at a time. The calling thread takes
// part, so a pool of n threads runs n-1 workers. Work is cut into contiguous chunks whose
// boundaries depend only on the item count and the thread count; threads claim chunks
// from an atomic counter, so a worker that is slow to wake (asleep, or descheduled on a
// busy machine) costs nothing: the others take its share. Which thread runs a chunk
// varies; what a chunk covers does not.
//
// A forward pass hands the pool a few hundred short loops per token, so hand-off cost
// matters: workers spin on the claim counter for a short while after each loop (the next
// one usually follows within microseconds) and only then sleep on a condition variable.
// How long is the placement's poll level; the placement also pins and prioritizes the
// workers as they start, and the calling thread when it hands this pool a loop.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

#include "base/thread_placement.h"

namespace hearth {

class ThreadPool {
 public:
  // fn(begin, end, thread_index) handles items [begin, end); it may be called several
  // times per thread (one chunk at a time), never concurrently with the same thread_index.
  using RangeFn = std::function<void(int64_t begin, int64_t end, int thread_index)>;

  explicit ThreadPool(int n_threads, ThreadPlacement placement = {});
  ~ThreadPool();
  ThreadPool(const ThreadPool&) = delete;
  ThreadPool& operator=(const ThreadPool&) = delete;

  int n_threads() const { return n_threads_; }
  const ThreadPlacement& placement() const { return placement_; }

  // What the workers are doing, for tests: how many sleep now, and how many times a worker
  // spun for its whole poll time and then went to sleep.
  int sleeping_workers() const { return sleepers_.load(); }
  uint64_t spin_phases() const { return spin_phases_.load(); }

  // Splits [0, n_items) over the threads and returns when every range is done.
  // Not reentrant: call from one thread at a time.
  void parallel_for(int64_t n_items, const RangeFn& fn);

  // The number of hardware threads, at least 1.
  static int hardware_threads();

 private:
  void worker_loop(int thread_index);
  // Applies the placement's priority and CPUs for thread `thread_index` to the calling
  // thread; a failure is warned about once per pool, and the thread runs on as it was.
  void apply_placement(int thread_index);
  // Gives the thread calling parallel_for this pool's placement for thread 0 (or back the
  // placement it had, when another pool changed it and this one has none).
  void take_caller_placement();
  // Waits until the generation moves past `seen` (or the pool stops); returns the new one.
  uint32_t wait_for_work(uint32_t seen);
  // Claims and runs chunks of generation `gen` until none is left.
  void run_chunks(uint32_t gen, int thread_index);

  int n_threads_;
  ThreadPlacement placement_;
  std::chrono::microseconds spin_for_;
  uint64_t id_;  // tells the pools apart for take_caller_placement()
  std::atomic<bool> warned_{false};
  std::atomic<uint64_t> spin_phases_{0};
  std::vector<std::thread> workers_;
  std::mutex mutex_;
  std::condition_variable work_cv_;
  // The current loop. Atomic (relaxed) because a late worker may read them while the
  // caller publishes the next loop; it only acts on them after a successful claim.
  std::atomic<const RangeFn*> job_{nullptr};
  std::atomic<int64_t> job_items_{0};
  // generation | chunk count | next unclaimed chunk (thread_pool.cpp, claim_word): a claim
  // succeeds only for a chunk of the current loop.
  std::atomic<uint64_t> claim_{0};
  std::atomic<int64_t> chunks_done_{0};
  std::atomic<int> sleepers_{0};
  std::atomic<bool> stopping_{false};
};

}  // namespace hearth
