// Built with -O3 (tools/bench/CMakeLists.txt) so that the portable sum loop vectorizes.
#include "tools/bench/bandwidth.h"

#include <fmt/format.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <new>

#include "base/thread_pool.h"

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#define HEARTH_BENCH_X86 1
#endif

namespace hearth::bench {
namespace {

constexpr size_t kWordsPerStep = 16;  // 128 bytes: four 32-byte loads
constexpr int kPasses = 5;

std::atomic<uint64_t> g_sink{0};  // keeps the sums alive

#ifdef HEARTH_BENCH_X86
__attribute__((target("avx2"))) uint64_t sum_avx2(const uint64_t* p, size_t n) {
  __m256i a0 = _mm256_setzero_si256(), a1 = a0, a2 = a0, a3 = a0;
  for (size_t i = 0; i < n; i += kWordsPerStep) {
    a0 = _mm256_add_epi64(a0, _mm256_load_si256(reinterpret_cast<const __m256i*>(p + i)));
    a1 = _mm256_add_epi64(a1, _mm256_load_si256(reinterpret_cast<const __m256i*>(p + i + 4)));
    a2 = _mm256_add_epi64(a2, _mm256_load_si256(reinterpret_cast<const __m256i*>(p + i + 8)));
    a3 = _mm256_add_epi64(a3, _mm256_load_si256(reinterpret_cast<const __m256i*>(p + i + 12)));
  }
  const __m256i s = _mm256_add_epi64(_mm256_add_epi64(a0, a1), _mm256_add_epi64(a2, a3));
  alignas(32) uint64_t lanes[4];
  _mm256_store_si256(reinterpret_cast<__m256i*>(lanes), s);
  return lanes[0] + lanes[1] + lanes[2] + lanes[3];
}
#endif

// Independent accumulators so the compiler can keep several vector sums in flight.
uint64_t sum_plain(const uint64_t* p, size_t n) {
  uint64_t s[kWordsPerStep] = {};
  for (size_t i = 0; i < n; i += kWordsPerStep)
    for (size_t j = 0; j < kWordsPerStep; ++j) s[j] += p[i + j];
  uint64_t total = 0;
  for (uint64_t v : s) total += v;
  return total;
}

using SumFn = uint64_t (*)(const uint64_t*, size_t);

SumFn pick_sum() {
#ifdef HEARTH_BENCH_X86
  if (__builtin_cpu_supports("avx2")) return sum_avx2;
#endif
  return sum_plain;
}

struct FreeDeleter {
  void operator()(uint64_t* p) const { std::free(p); }
};
using Buffer = std::unique_ptr<uint64_t[], FreeDeleter>;

double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

// Best GB/s of kPasses passes in which each of the pool's threads sums its own region.
double measure_one(ThreadPool& pool, const uint64_t* buffer, size_t words, SumFn sum) {
  const int n = pool.n_threads();
  const size_t per = words / static_cast<size_t>(n) / kWordsPerStep * kWordsPerStep;
  double best = 0;
  for (int pass = 0; pass < kPasses; ++pass) {
    const auto t0 = std::chrono::steady_clock::now();
    pool.parallel_for(n, [&](int64_t begin, int64_t end, int) {
      for (int64_t r = begin; r < end; ++r)
        g_sink.fetch_add(sum(buffer + static_cast<size_t>(r) * per, per),
                         std::memory_order_relaxed);
    });
    const double s = seconds_since(t0);
    const double bytes = static_cast<double>(per) * n * sizeof(uint64_t);
    if (s > 0) best = std::max(best, bytes / s / 1e9);
  }
  return best;
}

bool read_all(int fd, void* dst, size_t n) {
  auto* p = static_cast<char*>(dst);
  while (n > 0) {
    const ssize_t got = read(fd, p, n);
    if (got <= 0) return false;
    p += got;
    n -= static_cast<size_t>(got);
  }
  return true;
}

bool write_all(int fd, const void* src, size_t n) {
  const auto* p = static_cast<const char*>(src);
  while (n > 0) {
    const ssize_t put = write(fd, p, n);
    if (put <= 0) return false;
    p += put;
    n -= static_cast<size_t>(put);
  }
  return true;
}

[[noreturn]] void child_main(int fd, const std::vector<int32_t>& threads, size_t buffer_bytes) {
  auto r = measure_read_bandwidth_here(threads, buffer_bytes);
  const bool ok = r.is_ok() && write_all(fd, r->data(), r->size() * sizeof(double));
  close(fd);
  _exit(ok ? 0 : 1);
}

}  // namespace

Result<std::vector<double>> measure_read_bandwidth_here(const std::vector<int32_t>& threads,
                                                        size_t buffer_bytes) {
  const size_t words = buffer_bytes / sizeof(uint64_t) / kWordsPerStep * kWordsPerStep;
  Buffer buffer(static_cast<uint64_t*>(std::aligned_alloc(4096, words * sizeof(uint64_t))));
  if (!buffer)
    return error(
        ErrorCode::kResourceExhausted,
        fmt::format("cannot allocate {} MiB for the bandwidth measurement", buffer_bytes >> 20));
  const int32_t max_threads = *std::max_element(threads.begin(), threads.end());
  {
    // Touch every page first (each thread its share), so no pass pays for page faults.
    ThreadPool pool(max_threads);
    pool.parallel_for(max_threads, [&](int64_t begin, int64_t end, int) {
      const size_t per = words / static_cast<size_t>(max_threads);
      for (int64_t r = begin; r < end; ++r) {
        const size_t first = static_cast<size_t>(r) * per;
        const size_t last = r + 1 == max_threads ? words : first + per;
        for (size_t i = first; i < last; ++i) buffer[i] = i;
      }
    });
  }
  const SumFn sum = pick_sum();
  std::vector<double> out;
  for (int32_t n : threads) {
    ThreadPool pool(n);
    out.push_back(measure_one(pool, buffer.get(), words, sum));
  }
  return out;
}

Result<std::vector<double>> measure_read_bandwidth(const std::vector<int32_t>& threads,
                                                   size_t buffer_bytes) {
  if (threads.empty()) return std::vector<double>{};
  int fds[2];
  if (pipe(fds) != 0) return measure_read_bandwidth_here(threads, buffer_bytes);
  std::fflush(nullptr);
  const pid_t pid = fork();
  if (pid < 0) {
    close(fds[0]);
    close(fds[1]);
    return measure_read_bandwidth_here(threads, buffer_bytes);
  }
  if (pid == 0) {
    close(fds[0]);
    child_main(fds[1], threads, buffer_bytes);
  }
  close(fds[1]);
  std::vector<double> out(threads.size());
  const bool got = read_all(fds[0], out.data(), out.size() * sizeof(double));
  close(fds[0]);
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  if (!got || !WIFEXITED(status) || WEXITSTATUS(status) != 0)
    return error(
        ErrorCode::kInternal,
        fmt::format("the bandwidth measurement failed (buffer of {} MiB)", buffer_bytes >> 20));
  return out;
}

}  // namespace hearth::bench
