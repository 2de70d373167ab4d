// The slots and their lifecycle: which task each runs, the tokens its KV sequence holds,
// and what happens when a task is assigned, released or fails. Scheduler thread only; the
// table publishes its state to the status board for /slots and /metrics.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "engine/kv_cache.h"
#include "scheduler/scheduler.h"
#include "scheduler/slot.h"
#include "scheduler/status_board.h"

namespace hearth::scheduler::detail {

struct Slot {
  int32_t id = 0;
  std::vector<int32_t> cached;  // mirrors the KV sequence `id`
  int64_t t_last_used = -1;
  int64_t started = 0;
  bool has_task = false;
  int32_t last_id_task = -1;
  std::shared_ptr<const void> echo;
  std::unique_ptr<RunningTask> task;
  bool waiting() const { return task && task->is_child && !task->prompt_done; }
};

// Empties the slot's KV sequence and the tokens that mirror it.
void forget(Slot& slot, engine::KvCache& kv);

// One token of an engine step and where it came from.
struct StepToken {
  int32_t slot = 0;
  int32_t token = 0;
  bool logits = false;
  bool prompt = false;
  bool draft = false;  // drafted after the slot's previous token, verified by its logits
  // A media row: its input embedding [n_embd_inp] (owned by the task's MediaChunk) and, in a
  // non-causal chunk, the chunk's last position (engine::BatchToken::visible_end), else -1.
  const float* embd = nullptr;
  int32_t visible_end = -1;
};

class SlotTable {
 public:
  SlotTable(const SchedulerConfig& config, engine::KvCache& kv, StatusBoard& board);

  int32_t size() const { return static_cast<int32_t>(slots_.size()); }
  Slot& operator[](int32_t id) { return slots_[static_cast<size_t>(id)]; }
  const Slot& operator[](int32_t id) const { return slots_[static_cast<size_t>(id)]; }
  auto begin() { return slots_.begin(); }
  auto end() { return slots_.end(); }
  auto begin() const { return slots_.begin(); }
  auto end() const { return slots_.end(); }

  int32_t busy() const;                 // slots running a task
  std::vector<bool> busy_mask() const;  // per slot
  void assign(Slot& slot, std::unique_ptr<RunningTask> task);
  // Ends the slot's task: its totals go to the metrics, a child's cache is dropped, and
  // children still waiting for a parent's prompt end with an error.
  void release(Slot& slot);
  // Sends the error and starts the slot afresh (its cache may hold a partial step).
  void fail(Slot& slot, const TaskError& error);
  // Frees the KV rows idle slots hold; true when anything was freed.
  bool evict_idle();
  // Releases the slots whose client went away; true when any was.
  bool drop_cancelled();
  // The /slots snapshot and the slot gauges, to the status board.
  void publish();

 private:
  void drop_waiting_children(const Slot& parent, const RunningTask& t);

  const int32_t n_ctx_slot_;
  const bool speculative_;
  engine::KvCache& kv_;
  StatusBoard& board_;
  std::vector<Slot> slots_;
  int64_t next_start_ = 1;
};

}  // namespace hearth::scheduler::detail
