// What the server's threads read about the scheduler: the /slots snapshot and the /metrics
// counters. The scheduler thread writes them; the board has its own lock so that a scrape
// never waits for the task queue. When both are held, the intake's lock is taken first.
#pragma once

#include <cstdint>
#include <mutex>
#include <vector>

#include "engine/kv_cache.h"
#include "scheduler/scheduler.h"
#include "scheduler/slot.h"

namespace hearth::scheduler::detail {

class StatusBoard {
 public:
  // Server threads.
  std::vector<SlotInfo> slots() const;
  bool has_idle_slot() const;
  MetricsSnapshot metrics(bool reset_window);

  // Scheduler thread (set_deferred also from the intake, under its lock).
  void set_deferred(size_t queued);
  void count_decode(int32_t busy_slots);          // one engine step with tokens
  void note_longest_sequence(uint64_t tokens);    // n_tokens_max
  void account_prompt(const RunningTask& task);   // the task's prompt is evaluated
  void account_release(const RunningTask& task);  // generation totals and drafts
  // Latencies are kept off the lock until the next publish(): the per-token path locks
  // nothing.
  void observe_first_token(double seconds) { unpublished_ttft_.observe(seconds); }
  void observe_next_token(double seconds) { unpublished_tpot_.observe(seconds); }
  void publish(std::vector<SlotInfo> slots, int32_t busy_slots, const engine::KvCache& kv);

 private:
  mutable std::mutex mu_;
  std::vector<SlotInfo> snapshot_;
  MetricsSnapshot metrics_;
  Histogram unpublished_ttft_{time_to_first_token_buckets()};  // scheduler thread only
  Histogram unpublished_tpot_{time_per_output_token_buckets()};
};

}  // namespace hearth::scheduler::detail
