#include "base/thread_pool.h"

#include <algorithm>
#include <chrono>

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#endif

namespace hearth {
namespace {

void cpu_relax() {
#if defined(__x86_64__) || defined(__i386__)
  _mm_pause();
#else
  std::this_thread::yield();
#endif
}

// How long an idle worker spins before it sleeps: long enough to bridge the serial work
// between two loops of a forward pass, short enough not to burn a core between requests.
constexpr auto kSpinFor = std::chrono::microseconds(300);

}  // namespace

ThreadPool::ThreadPool(int n_threads) : n_threads_(std::max(1, n_threads)) {
  workers_.reserve(static_cast<size_t>(n_threads_ - 1));
  for (int i = 1; i < n_threads_; ++i) workers_.emplace_back([this, i] { worker_loop(i); });
}

ThreadPool::~ThreadPool() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stopping_.store(true);
  }
  work_cv_.notify_all();
  for (auto& w : workers_) w.join();
}

int ThreadPool::hardware_threads() {
  unsigned n = std::thread::hardware_concurrency();
  return n == 0 ? 1 : static_cast<int>(n);
}

namespace {

// Chunks per thread: enough that a late or slow thread's share is picked up by the
// others in small pieces, few enough that claiming stays cheap.
constexpr int64_t kChunksPerThread = 4;

// Chunks per loop are capped so that the count fits its field of the claim word.
constexpr int64_t kMaxChunks = 0xFFFF;

// The claim word: generation (bits 32..63), the loop's chunk count (16..31) and the next
// unclaimed chunk (0..15). A claim is judged on this one word alone, so a late thread can
// never combine one loop's counter with another loop's chunk count.
uint64_t claim_word(uint32_t gen, int64_t n_chunks) {
  return (static_cast<uint64_t>(gen) << 32) | (static_cast<uint64_t>(n_chunks) << 16);
}
uint32_t generation_of(uint64_t claim) {
  return static_cast<uint32_t>(claim >> 32);
}
int64_t chunk_count_of(uint64_t claim) {
  return static_cast<int64_t>((claim >> 16) & 0xFFFF);
}
int64_t next_chunk_of(uint64_t claim) {
  return static_cast<int64_t>(claim & 0xFFFF);
}

}  // namespace

void ThreadPool::run_chunks(uint32_t gen, int thread_index) {
  uint64_t v = claim_.load(std::memory_order_acquire);
  for (;;) {
    if (generation_of(v) != gen) return;  // a later loop: not ours to touch
    const int64_t chunk = next_chunk_of(v);
    const int64_t n_chunks = chunk_count_of(v);
    if (chunk >= n_chunks) return;
    if (!claim_.compare_exchange_weak(v, v + 1, std::memory_order_acq_rel)) continue;
    // A successful claim of a chunk of loop `gen` means that loop is not finished, so
    // the job fields published with it are still valid.
    const int64_t n_items = job_items_.load(std::memory_order_relaxed);
    const int64_t per = n_items / n_chunks;
    const int64_t extra = n_items % n_chunks;
    const int64_t begin = chunk * per + std::min(chunk, extra);
    const int64_t end = begin + per + (chunk < extra ? 1 : 0);
    (*job_.load(std::memory_order_relaxed))(begin, end, thread_index);
    chunks_done_.fetch_add(1, std::memory_order_acq_rel);
    v = claim_.load(std::memory_order_acquire);
  }
}

uint32_t ThreadPool::wait_for_work(uint32_t seen) {
  const auto spin_until = std::chrono::steady_clock::now() + kSpinFor;
  for (int spins = 0;; ++spins) {
    const uint32_t g = generation_of(claim_.load(std::memory_order_acquire));
    if (g != seen || stopping_.load(std::memory_order_acquire)) return g;
    cpu_relax();
    if ((spins & 255) == 255 && std::chrono::steady_clock::now() > spin_until) break;
  }
  // Sleep. The caller publishes a new generation before it reads sleepers_, and this
  // thread counts itself in sleepers_ before it re-reads the generation (all sequentially
  // consistent), so either the caller sees a sleeper and notifies under the lock, or the
  // check below sees the new generation: no wake-up is lost.
  std::unique_lock<std::mutex> lock(mutex_);
  sleepers_.fetch_add(1);
  work_cv_.wait(lock, [&] { return stopping_.load() || generation_of(claim_.load()) != seen; });
  sleepers_.fetch_sub(1);
  return generation_of(claim_.load());
}

void ThreadPool::worker_loop(int thread_index) {
  uint32_t seen = 0;
  for (;;) {
    seen = wait_for_work(seen);
    if (stopping_.load()) return;
    run_chunks(seen, thread_index);
  }
}

void ThreadPool::parallel_for(int64_t n_items, const RangeFn& fn) {
  if (n_items <= 0) return;
  if (n_threads_ == 1 || n_items == 1) {
    fn(0, n_items, 0);
    return;
  }
  const int64_t n_chunks = std::min({n_items, int64_t{n_threads_} * kChunksPerThread, kMaxChunks});
  job_.store(&fn, std::memory_order_relaxed);
  job_items_.store(n_items, std::memory_order_relaxed);
  chunks_done_.store(0, std::memory_order_relaxed);
  const uint32_t gen = generation_of(claim_.load()) + 1;
  claim_.store(claim_word(gen, n_chunks));  // publishes the job (seq_cst)
  if (sleepers_.load() > 0) {
    std::lock_guard<std::mutex> lock(mutex_);
    work_cv_.notify_all();
  }
  run_chunks(gen, 0);
  // Every chunk is claimed; wait for the ones other threads are still running.
  for (int spins = 0; chunks_done_.load(std::memory_order_acquire) != n_chunks; ++spins) {
    if (spins < 4096) {
      cpu_relax();
    } else {
      std::this_thread::yield();  // the thread running a chunk was descheduled
    }
  }
  job_.store(nullptr, std::memory_order_relaxed);
}

}  // namespace hearth
