#include "base/thread_pool.h"

#include <algorithm>

namespace hearth {

ThreadPool::ThreadPool(int n_threads) : n_threads_(std::max(1, n_threads)) {
  workers_.reserve(static_cast<size_t>(n_threads_ - 1));
  for (int i = 1; i < n_threads_; ++i) workers_.emplace_back([this, i] { worker_loop(i); });
}

ThreadPool::~ThreadPool() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stopping_ = true;
  }
  work_cv_.notify_all();
  for (auto& w : workers_) w.join();
}

int ThreadPool::hardware_threads() {
  unsigned n = std::thread::hardware_concurrency();
  return n == 0 ? 1 : static_cast<int>(n);
}

void ThreadPool::run_range(int thread_index) {
  const int64_t per = job_items_ / n_threads_;
  const int64_t extra = job_items_ % n_threads_;
  const int64_t begin = thread_index * per + std::min<int64_t>(thread_index, extra);
  const int64_t end = begin + per + (thread_index < extra ? 1 : 0);
  if (begin < end) (*job_)(begin, end, thread_index);
}

void ThreadPool::worker_loop(int thread_index) {
  uint64_t seen = 0;
  for (;;) {
    {
      std::unique_lock<std::mutex> lock(mutex_);
      work_cv_.wait(lock, [&] { return stopping_ || generation_ != seen; });
      if (stopping_) return;
      seen = generation_;
    }
    run_range(thread_index);
    {
      std::lock_guard<std::mutex> lock(mutex_);
      if (--pending_ == 0) done_cv_.notify_one();
    }
  }
}

void ThreadPool::parallel_for(int64_t n_items, const RangeFn& fn) {
  if (n_items <= 0) return;
  if (n_threads_ == 1 || n_items == 1) {
    fn(0, n_items, 0);
    return;
  }
  {
    std::lock_guard<std::mutex> lock(mutex_);
    job_ = &fn;
    job_items_ = n_items;
    pending_ = n_threads_ - 1;
    ++generation_;
  }
  work_cv_.notify_all();
  run_range(0);
  std::unique_lock<std::mutex> lock(mutex_);
  done_cv_.wait(lock, [&] { return pending_ == 0; });
  job_ = nullptr;
}

}  // namespace hearth
