// Where a thread pool's threads run and how they are scheduled: llama-server's -C/-Cr,
// --cpu-strict, --prio and --poll (and their batch and draft forms) and --numa, reduced to
// what a pool applies to its own threads. The option layer resolves the options into this;
// the pool knows nothing of options.
#pragma once

#include <chrono>
#include <string>
#include <vector>

#include "base/status.h"

namespace hearth {

// The reference's default poll level, which keeps Hearth's usual spin before sleeping.
inline constexpr int kDefaultPollLevel = 50;

struct ThreadPlacement {
  // Thread i's CPUs: i = 0 is the thread that calls parallel_for, 1.. the workers. Empty:
  // the threads run wherever they were started (no pinning). A thread past the end of a
  // non-empty list is not pinned either.
  std::vector<std::vector<int>> thread_cpus;
  // -1 low, 0 normal (the inherited policy is kept), 1 medium, 2 high, 3 realtime.
  int priority = 0;
  // 0: an idle worker sleeps at once; 100: the longest spin before sleeping.
  int poll = kDefaultPollLevel;
  // The workers' thread name (at most 15 characters; empty: unnamed).
  std::string name;

  bool pins() const { return !thread_cpus.empty(); }
  // The same CPUs, priority and poll level (the name aside): one pool can serve both.
  bool places_like(const ThreadPlacement& other) const {
    return thread_cpus == other.thread_cpus && priority == other.priority && poll == other.poll;
  }
};

// Lays `cpus` out over `n_threads` threads as the reference's thread pool does: without
// `strict` every thread may use all of them; with it the workers (1..n-1) and then the
// calling thread (0) each take the next CPU of the list, wrapping around, so the calling
// thread gets the last. Empty `cpus`: no pinning (an empty result).
std::vector<std::vector<int>> spread_cpus(const std::vector<int>& cpus, bool strict, int n_threads);

// How long an idle worker spins before it sleeps at poll level `poll` (clamped to 0..100).
std::chrono::microseconds spin_time_for_poll(int poll);

// The CPUs the calling thread may run on, ascending.
std::vector<int> current_thread_cpus();
// Restricts the calling thread to `cpus`.
Status pin_current_thread(const std::vector<int>& cpus);
// The reference's thread priority levels: -1 SCHED_BATCH; 1, 2, 3 SCHED_FIFO at 40, 80, 90
// (which needs privileges); 0 keeps what the thread inherited.
Status set_current_thread_priority(int level);
// The reference's process priority: nice 5, 0, -5, -10, -20 for levels -1..3 (0 changes
// nothing). On Linux this sets the calling thread's nice value, which the threads it starts
// afterwards inherit. Lowering the priority needs no privilege; raising it does.
Status set_process_priority(int level);
// Names the calling thread (cut to the 15 characters Linux keeps).
void name_current_thread(const std::string& name);

}  // namespace hearth
