// The thread placement of the target's and the draft model's pools, resolved from the CPU
// options the way the reference resolves its cpu params: the batch and draft pools take each
// option not given for them from the generation pool (the draft batch pool from the batch
// pool), a mask is laid out over the threads strictly or not, and a NUMA strategy on a
// machine of several nodes replaces the mask's CPUs.
#pragma once

#include <vector>

#include "base/status.h"
#include "base/thread_placement.h"
#include "scheduler/settings/scheduler_settings.h"

namespace hearth::scheduler {

struct PoolPlacements {
  ThreadPlacement gen, batch, draft, draft_batch;
};

// What the placement is resolved against: the CPUs the process may use, the machine's NUMA
// nodes and the node it started on. current() reads them for the calling thread.
struct CpuEnvironment {
  std::vector<int> allowed_cpus;
  NumaTopology topology;
  int start_node = 0;
  static CpuEnvironment current();
};

// Each pool's thread count; draft 0: no draft model (its pools are left default).
struct PoolThreads {
  int gen = 1, batch = 1, draft = 0, draft_batch = 0;
};

// An error when a mask names no CPU the process may use; CPUs it may not use are dropped
// with a warning (as is a mask with fewer CPUs than threads, as the reference warns).
Result<PoolPlacements> resolve_placements(const SchedulerSettings& settings,
                                          const PoolThreads& threads, const CpuEnvironment& env);

// The masks' check alone, for a start-up error before anything is loaded.
Status check_cpu_masks(const SchedulerSettings& settings, const CpuEnvironment& env);

}  // namespace hearth::scheduler
