#include "scheduler/slot_table.h"

#include <algorithm>

#include "base/timer.h"

namespace hearth::scheduler::detail {

void forget(Slot& slot, engine::KvCache& kv) {
  kv.clear(slot.id);
  slot.cached.clear();
}

SlotTable::SlotTable(const SchedulerConfig& config, engine::KvCache& kv, StatusBoard& board)
    : n_ctx_slot_(config.n_ctx_slot),
      speculative_(config.spec.enabled()),
      kv_(kv),
      board_(board),
      slots_(static_cast<size_t>(config.n_slots)) {
  for (int32_t i = 0; i < config.n_slots; ++i) slots_[static_cast<size_t>(i)].id = i;
}

int32_t SlotTable::busy() const {
  return static_cast<int32_t>(
      std::count_if(slots_.begin(), slots_.end(), [](const Slot& s) { return s.task != nullptr; }));
}

std::vector<bool> SlotTable::busy_mask() const {
  std::vector<bool> out;
  for (const Slot& s : slots_) out.push_back(s.task != nullptr);
  return out;
}

void SlotTable::assign(Slot& slot, std::unique_ptr<RunningTask> task) {
  slot.echo = task->echo;
  slot.last_id_task = task->id_task;
  slot.task = std::move(task);
  slot.has_task = true;
  slot.started = next_start_++;
}

void SlotTable::release(Slot& slot) {
  RunningTask& t = *slot.task;
  board_.account_release(t);
  if (t.is_child) {
    // Children never keep their cache (llama-server clears it on release).
    forget(slot, kv_);
  }
  if (!t.prompt_done && !t.is_child) drop_waiting_children(slot, t);
  slot.task.reset();
  slot.t_last_used = now_us();
}

// Children still waiting for this parent's prompt cannot run any more.
void SlotTable::drop_waiting_children(const Slot& parent, const RunningTask& t) {
  for (Slot& c : slots_) {
    if (&c != &parent && c.waiting() && c.task->parent_slot == parent.id &&
        c.task->sink == t.sink) {
      if (!c.task->sink->cancelled())
        c.task->sink->on_error(c.task->index,
                               {TaskError::Kind::kServer, "the shared prompt was not evaluated"});
      c.task.reset();
      c.t_last_used = now_us();
    }
  }
}

void SlotTable::fail(Slot& slot, const TaskError& error) {
  slot.task->sink->on_error(slot.task->index, error);
  forget(slot, kv_);
  release(slot);
}

// Idle slots' prompts stay reusable through the host prompt cache when it is on.
bool SlotTable::evict_idle() {
  bool freed = false;
  for (Slot& s : slots_) {
    if (s.task || s.cached.empty()) continue;
    forget(s, kv_);
    freed = true;
  }
  return freed;
}

bool SlotTable::drop_cancelled() {
  bool released = false;
  for (Slot& s : slots_) {
    if (s.task && s.task->sink->cancelled()) {
      release(s);
      released = true;
    }
  }
  return released;
}

void SlotTable::publish() {
  std::vector<SlotInfo> out;
  for (const Slot& s : slots_) {
    SlotInfo info;
    info.id = s.id;
    info.n_ctx = n_ctx_slot_;
    info.speculative = speculative_;
    info.is_processing = s.task != nullptr;
    info.has_task = s.has_task;
    info.id_task = s.last_id_task;
    info.n_prompt_tokens = static_cast<int32_t>(s.cached.size());
    info.echo = s.echo;
    if (s.task) {
      const RunningTask& t = *s.task;
      info.n_prompt_tokens_processed = t.n_prompt_decoded;
      info.n_prompt_tokens_cache = t.n_past;
      info.has_next_token = t.has_next_token;
      info.has_new_line = t.has_new_line;
      info.n_remain = t.params.n_predict == -1 ? -1 : t.params.n_predict - t.n_decoded;
      info.n_decoded = t.n_decoded;
    }
    out.push_back(std::move(info));
  }
  board_.publish(std::move(out), busy(), kv_);
}

}  // namespace hearth::scheduler::detail
