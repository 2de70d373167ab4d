#include "base/thread_placement.h"

#include <pthread.h>
#include <sched.h>
#include <sys/resource.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include <fmt/format.h>

namespace hearth {

std::vector<std::vector<int>> spread_cpus(const std::vector<int>& cpus, bool strict,
                                          int n_threads) {
  if (cpus.empty() || n_threads < 1) return {};
  std::vector<std::vector<int>> out(static_cast<size_t>(n_threads));
  if (!strict) {
    for (auto& set : out) set = cpus;
    return out;
  }
  // The reference creates the workers first, each taking the next CPU, then places the
  // calling thread: with as many CPUs as threads it ends up on the last one.
  size_t next = 0;
  for (int i = 1; i <= n_threads; ++i) {
    out[static_cast<size_t>(i % n_threads)] = {cpus[next]};
    next = (next + 1) % cpus.size();
  }
  return out;
}

std::chrono::microseconds spin_time_for_poll(int poll) {
  // Level 50 (the default) is the spin the pool always had: long enough to bridge the serial
  // work between two loops of a forward pass, short enough not to burn a core between
  // requests. The scale is linear, so 100 spins twice as long.
  constexpr int kMicrosecondsPerLevel = 6;
  return std::chrono::microseconds(std::clamp(poll, 0, 100) * kMicrosecondsPerLevel);
}

std::vector<int> current_thread_cpus() {
  cpu_set_t set;
  CPU_ZERO(&set);
  std::vector<int> cpus;
  if (pthread_getaffinity_np(pthread_self(), sizeof(set), &set) != 0) return cpus;
  for (int cpu = 0; cpu < CPU_SETSIZE; ++cpu) {
    if (CPU_ISSET(cpu, &set)) cpus.push_back(cpu);
  }
  return cpus;
}

Status pin_current_thread(const std::vector<int>& cpus) {
  cpu_set_t set;
  CPU_ZERO(&set);
  for (int cpu : cpus) {
    if (cpu < 0 || cpu >= CPU_SETSIZE)
      return error(ErrorCode::kInvalidArgument, fmt::format("CPU {} is out of range", cpu));
    CPU_SET(cpu, &set);
  }
  if (int err = pthread_setaffinity_np(pthread_self(), sizeof(set), &set); err != 0)
    return error(ErrorCode::kIo,
                 fmt::format("failed to set the CPU affinity: {}", std::strerror(err)));
  return Status::ok();
}

Status set_current_thread_priority(int level) {
  if (level == 0) return Status::ok();
  int policy = SCHED_BATCH;
  sched_param param{};
  switch (level) {
    case 1:
      policy = SCHED_FIFO, param.sched_priority = 40;
      break;
    case 2:
      policy = SCHED_FIFO, param.sched_priority = 80;
      break;
    case 3:
      policy = SCHED_FIFO, param.sched_priority = 90;
      break;
    default:
      break;  // -1: SCHED_BATCH at priority 0
  }
  if (int err = pthread_setschedparam(pthread_self(), policy, &param); err != 0)
    return error(ErrorCode::kIo, fmt::format("failed to set thread priority {} : {} ({})", level,
                                             std::strerror(err), err));
  return Status::ok();
}

Status set_process_priority(int level) {
  if (level == 0) return Status::ok();
  constexpr int kNice[] = {5, 0, -5, -10, -20};  // levels -1..3
  const int nice = kNice[std::clamp(level, -1, 3) + 1];
  if (setpriority(PRIO_PROCESS, 0, nice) != 0) {
    const int err = errno;
    return error(ErrorCode::kIo, fmt::format("failed to set process priority {} : {} ({})", level,
                                             std::strerror(err), err));
  }
  return Status::ok();
}

void name_current_thread(const std::string& name) {
  if (name.empty()) return;
  pthread_setname_np(pthread_self(), name.substr(0, 15).c_str());
}

}  // namespace hearth
