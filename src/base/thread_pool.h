// A fixed set of worker threads that split one loop at a time. The calling thread takes
// part, so a pool of n threads runs n-1 workers. Work is split into contiguous ranges
// whose boundaries depend only on the item count and the thread count.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

namespace hearth {

class ThreadPool {
 public:
  // fn(begin, end, thread_index) handles items [begin, end).
  using RangeFn = std::function<void(int64_t begin, int64_t end, int thread_index)>;

  explicit ThreadPool(int n_threads);
  ~ThreadPool();
  ThreadPool(const ThreadPool&) = delete;
  ThreadPool& operator=(const ThreadPool&) = delete;

  int n_threads() const { return n_threads_; }

  // Splits [0, n_items) over the threads and returns when every range is done.
  // Not reentrant: call from one thread at a time.
  void parallel_for(int64_t n_items, const RangeFn& fn);

  // The number of hardware threads, at least 1.
  static int hardware_threads();

 private:
  void worker_loop(int thread_index);
  void run_range(int thread_index);

  int n_threads_;
  std::vector<std::thread> workers_;
  std::mutex mutex_;
  std::condition_variable work_cv_;
  std::condition_variable done_cv_;
  const RangeFn* job_ = nullptr;
  int64_t job_items_ = 0;
  uint64_t generation_ = 0;
  int pending_ = 0;
  bool stopping_ = false;
};

}  // namespace hearth
