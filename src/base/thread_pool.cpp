#include "base/thread_pool.h"

#include <pthread.h>
#include <sched.h>

#include <algorithm>
#include <chrono>

#include "base/log.h"

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

std::atomic<uint64_t> g_next_pool_id{1};

// The pool whose placement the calling thread holds, and what the thread had before a pool
// first changed it. Thread-local: each thread that hands out loops carries its own.
struct CallerPlacement {
  uint64_t pool_id = 0;
  bool saved = false;
  std::vector<int> cpus;
  int policy = SCHED_OTHER;
  sched_param param{};
};
thread_local CallerPlacement t_caller;

}  // namespace

ThreadPool::ThreadPool(int n_threads, ThreadPlacement placement)
    : n_threads_(std::max(1, n_threads)),
      placement_(std::move(placement)),
      spin_for_(spin_time_for_poll(placement_.poll)),
      id_(g_next_pool_id.fetch_add(1)) {
  workers_.reserve(static_cast<size_t>(n_threads_ - 1));
  for (int i = 1; i < n_threads_; ++i) {
    workers_.emplace_back([this, i] {
      name_current_thread(placement_.name);
      apply_placement(i);
      worker_loop(i);
    });
  }
}

void ThreadPool::apply_placement(int thread_index) {
  Status st = set_current_thread_priority(placement_.priority);
  const auto index = static_cast<size_t>(thread_index);
  if (st.is_ok() && index < placement_.thread_cpus.size())
    st = pin_current_thread(placement_.thread_cpus[index]);
  if (!st.is_ok() && !warned_.exchange(true)) log_warn("thread pool: {}", st.message());
}

void ThreadPool::take_caller_placement() {
  if (t_caller.pool_id == id_) return;
  t_caller.pool_id = id_;
  const bool places = placement_.pins() || placement_.priority != 0;
  if (!places && !t_caller.saved) return;  // nothing to apply and nothing to undo
  if (!t_caller.saved) {
    t_caller.cpus = current_thread_cpus();
    pthread_getschedparam(pthread_self(), &t_caller.policy, &t_caller.param);
    t_caller.saved = true;
  }
  // Undo what another pool set first, then apply this pool's placement over it.
  pthread_setschedparam(pthread_self(), t_caller.policy, &t_caller.param);
  if (!t_caller.cpus.empty()) (void)pin_current_thread(t_caller.cpus);
  apply_placement(0);
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
  // Poll level 0: no spinning; the sleep below still checks for work first.
  const auto spin_until = std::chrono::steady_clock::now() + spin_for_;
  for (int spins = 0; spin_for_.count() > 0; ++spins) {
    const uint32_t g = generation_of(claim_.load(std::memory_order_acquire));
    if (g != seen || stopping_.load(std::memory_order_acquire)) return g;
    cpu_relax();
    if ((spins & 255) == 255 && std::chrono::steady_clock::now() > spin_until) {
      spin_phases_.fetch_add(1, std::memory_order_relaxed);  // counted off the hot path
      break;
    }
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
  take_caller_placement();
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
