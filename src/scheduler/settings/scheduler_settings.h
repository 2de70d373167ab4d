// The scheduler's settings that command-line options set as they are. SchedulerConfig
// (scheduler/scheduler.h) extends this struct; the option parser fills one in ServerArgs, so
// each option row names its member here and the initializer below is the option's default,
// written once.
#pragma once

#include <cstdint>

#include "base/load_mode.h"
#include "base/serving_defaults.h"

namespace hearth::scheduler {

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
  bool check_tensors = false;  // --check-tensors: refuse a model with NaN/Inf in its data
  bool warmup = true;          // --warmup / --no-warmup: one forward pass before serving
};

}  // namespace hearth::scheduler
