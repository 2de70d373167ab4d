// The scheduler's settings that command-line options set as they are. SchedulerConfig
// (scheduler/scheduler.h) extends this struct; the option parser fills one in ServerArgs, so
// each option row names its member here and the initializer below is the option's default,
// written once.
#pragma once

#include <cstdint>

#include "base/serving_defaults.h"

namespace hearth::scheduler {

struct SchedulerSettings {
  int32_t n_ubatch = kDefaultUbatchSize;                  // -ub: tokens per forward call
  bool cont_batching = true;                              // -cb / --no-cont-batching
  float slot_prompt_similarity = kDefaultSlotSimilarity;  // -sps
  int64_t cache_ram_mib = kDefaultCacheRamMib;  // --cache-ram: host prompt cache; 0 off, -1 no cap
  bool cache_idle_slots = true;                 // --cache-idle-slots
  bool swa_full = false;                        // --swa-full: windowed layers keep every position

  bool operator==(const SchedulerSettings&) const = default;
};

}  // namespace hearth::scheduler
