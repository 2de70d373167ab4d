#include "scheduler/cpu_placement.h"

#include <algorithm>
#include <string>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "base/log.h"

namespace hearth::scheduler {
namespace {

// `own` with each field it leaves unset taken from `base`.
PoolCpuSettings inherit(const PoolCpuSettings& own, const PoolCpuSettings& base) {
  PoolCpuSettings out = own;
  if (!own.mask_given) {
    out.mask_given = base.mask_given;
    out.cpus = base.cpus;
  }
  if (!out.strict) out.strict = base.strict;
  if (!out.priority) out.priority = base.priority;
  if (!out.poll) out.poll = base.poll;
  return out;
}

std::string cpu_list(const std::vector<int>& cpus) {
  return cpus.empty() ? std::string("none") : fmt::format("{}", fmt::join(cpus, ","));
}

// The mask's CPUs the process may use; an error when there is none.
Result<std::vector<int>> usable_cpus(const PoolCpuSettings& s, const char* pool,
                                     const CpuEnvironment& env) {
  std::vector<int> usable;
  for (int cpu : s.cpus) {
    if (std::binary_search(env.allowed_cpus.begin(), env.allowed_cpus.end(), cpu))
      usable.push_back(cpu);
  }
  if (usable.empty())
    return error(ErrorCode::kInvalidArgument,
                 fmt::format("the CPU mask of the {} threads names no CPU this process may use "
                             "(named: {}; allowed: {})",
                             pool, cpu_list(s.cpus), cpu_list(env.allowed_cpus)));
  if (usable.size() < s.cpus.size())
    log_warn(
        "CPU mask of the {} threads: CPUs this process may not use are left out (named: "
        "{}; used: {})",
        pool, cpu_list(s.cpus), cpu_list(usable));
  return usable;
}

Result<ThreadPlacement> resolve_pool(const PoolCpuSettings& s, int n_threads, const char* pool,
                                     const char* thread_name, NumaStrategy numa,
                                     const CpuEnvironment& env) {
  ThreadPlacement p;
  p.name = thread_name;
  p.priority = s.priority.value_or(0);
  p.poll = s.poll.value_or(kDefaultPollLevel);
  if (s.mask_given) {
    HEARTH_ASSIGN_OR_RETURN(std::vector<int> cpus, usable_cpus(s, pool, env));
    if (static_cast<int>(cpus.size()) < n_threads)
      log_warn("Not enough set bits in CPU mask ({}) to satisfy requested thread count: {}",
               cpus.size(), n_threads);
    p.thread_cpus = spread_cpus(cpus, s.strict.value_or(false), n_threads);
  }
  // As the reference, a NUMA strategy places the threads over the mask.
  auto by_node = numa_thread_cpus(numa, env.topology, n_threads, env.start_node, env.allowed_cpus);
  if (!by_node.empty()) p.thread_cpus = std::move(by_node);
  return p;
}

}  // namespace

CpuEnvironment CpuEnvironment::current() {
  return {current_thread_cpus(), read_numa_topology(), current_numa_node()};
}

Status check_cpu_masks(const SchedulerSettings& settings, const CpuEnvironment& env) {
  const std::pair<const PoolCpuSettings*, const char*> pools[] = {
      {&settings.cpu, "generation"},
      {&settings.cpu_batch, "batch"},
      {&settings.cpu_draft, "draft"},
      {&settings.cpu_draft_batch, "draft batch"}};
  for (const auto& [s, name] : pools) {
    if (s->mask_given) HEARTH_RETURN_IF_ERROR(usable_cpus(*s, name, env).status());
  }
  return Status::ok();
}

Result<PoolPlacements> resolve_placements(const SchedulerSettings& settings,
                                          const PoolThreads& threads, const CpuEnvironment& env) {
  const PoolCpuSettings batch = inherit(settings.cpu_batch, settings.cpu);
  const PoolCpuSettings draft = inherit(settings.cpu_draft, settings.cpu);
  const PoolCpuSettings draft_batch = inherit(settings.cpu_draft_batch, batch);
  PoolPlacements out;
  HEARTH_ASSIGN_OR_RETURN(out.gen, resolve_pool(settings.cpu, threads.gen, "generation",
                                                "hearth-gen", settings.numa, env));
  HEARTH_ASSIGN_OR_RETURN(
      out.batch, resolve_pool(batch, threads.batch, "batch", "hearth-batch", settings.numa, env));
  if (threads.draft < 1) return out;  // no draft model
  HEARTH_ASSIGN_OR_RETURN(
      out.draft, resolve_pool(draft, threads.draft, "draft", "hearth-draft", settings.numa, env));
  HEARTH_ASSIGN_OR_RETURN(out.draft_batch,
                          resolve_pool(draft_batch, threads.draft_batch, "draft batch",
                                       "hearth-draft-b", settings.numa, env));
  return out;
}

}  // namespace hearth::scheduler
