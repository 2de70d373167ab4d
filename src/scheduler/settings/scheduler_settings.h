// The scheduler's settings that command-line options set as they are. SchedulerConfig
// (scheduler/scheduler.h) extends this struct; the option parser fills one in ServerArgs, so
// each option row names its member here and the initializer below is the option's default,
// written once.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "base/load_mode.h"
#include "base/numa.h"
#include "base/serving_defaults.h"

namespace hearth::scheduler {

// One thread pool's CPU options as given (-C/-Cr, --cpu-strict, --prio, --poll, or their
// batch and draft forms). An unset field is the generation pool's (the batch and draft
// pools) or the batch pool's (the draft batch pool); scheduler/cpu_placement.h resolves them.
struct PoolCpuSettings {
  bool mask_given = false;          // -C or -Cr was given (even naming no CPU)
  std::vector<int32_t> cpus;        // the CPUs they name, ascending
  std::optional<bool> strict;       // --cpu-strict: one CPU per thread
  std::optional<int32_t> priority;  // --prio: -1 low .. 3 realtime
  std::optional<int32_t> poll;      // --poll: 0 sleep at once .. 100

  bool operator==(const PoolCpuSettings&) const = default;
};

struct SchedulerSettings {
  int32_t n_ubatch = kDefaultUbatchSize;                  // -ub: tokens per forward call
  bool cont_batching = true;                              // -cb / --no-cont-batching
  float slot_prompt_similarity = kDefaultSlotSimilarity;  // -sps
  int64_t cache_ram_mib = kDefaultCacheRamMib;  // --cache-ram: host prompt cache; 0 off, -1 no cap
  bool cache_idle_slots = true;                 // --cache-idle-slots
  bool swa_full = false;                        // --swa-full: windowed layers keep every position
  // How the model file is brought into memory: -lm / --load-mode, and the deprecated
  // --mlock, --mmap/--no-mmap and -dio/-ndio that set it too (the last one given wins).
  LoadMode load_mode = LoadMode::kAuto;
  bool check_tensors = false;       // --check-tensors: refuse a model with NaN/Inf in its data
  bool warmup = true;               // --warmup / --no-warmup: one forward pass before serving
  PoolCpuSettings cpu;              // -C, -Cr, --cpu-strict, --prio, --poll
  PoolCpuSettings cpu_batch;        // -Cb, -Crb, --cpu-strict-batch, ...
  PoolCpuSettings cpu_draft;        // -Cd, -Crd, --cpu-strict-draft, ...
  PoolCpuSettings cpu_draft_batch;  // -Cbd, -Crbd, --cpu-strict-batch-draft, ...
  NumaStrategy numa = NumaStrategy::kDisabled;  // --numa

  bool operator==(const SchedulerSettings&) const = default;
};

}  // namespace hearth::scheduler
