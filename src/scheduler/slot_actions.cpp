// Slot actions (POST /slots/:id?action=save|restore|erase): queued by HTTP threads, run on
// the scheduler thread between engine steps once their slot is idle. A slot with a pending
// action takes no new task (plan_input marks it busy), so the action runs as soon as the
// slot's current task is released.
#include <fmt/format.h>

#include "base/timer.h"
#include "scheduler/scheduler_impl.h"

namespace hearth::scheduler::detail {

void SchedulerImpl::slot_action(SlotActionKind kind, int32_t id, std::string path,
                                SlotActionDone done) {
  if (id < 0 || id >= config_.n_slots) {
    done(error(ErrorCode::kInvalidArgument,
               fmt::format("slot id {} is outside [0, {})", id, config_.n_slots)));
    return;
  }
  auto action = std::make_unique<SlotAction>();
  action->kind = kind;
  action->slot = id;
  action->path = std::move(path);
  action->done = std::move(done);
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (!stopping_ && !stopped_) {
      actions_.push_back(std::move(action));
      action = nullptr;
    }
  }
  if (action) {
    action->done(error(ErrorCode::kResourceExhausted, "the server is shutting down"));
    return;
  }
  cv_.notify_all();
}

bool SchedulerImpl::action_pending(int32_t slot) const {
  for (const auto& a : actions_)
    if (a->slot == slot) return true;
  return false;
}

bool SchedulerImpl::action_runnable() const {
  for (const auto& a : actions_)
    if (!slots_[static_cast<size_t>(a->slot)].task) return true;
  return false;
}

// Runs, in queue order, every action whose slot is idle.
void SchedulerImpl::run_slot_actions() {
  std::vector<std::unique_ptr<SlotAction>> ready;
  {
    std::lock_guard<std::mutex> lock(mu_);
    for (auto it = actions_.begin(); it != actions_.end();) {
      if (slots_[static_cast<size_t>((*it)->slot)].task) {
        ++it;
        continue;
      }
      ready.push_back(std::move(*it));
      it = actions_.erase(it);
    }
  }
  for (auto& a : ready) {
    Result<SlotFileResult> r = run_action(*a);
    publish();  // /slots shows the new cache before the caller sees the result
    a->done(std::move(r));
  }
}

Result<SlotFileResult> SchedulerImpl::run_action(const SlotAction& action) {
  Slot& slot = slots_[static_cast<size_t>(action.slot)];
  switch (action.kind) {
    case SlotActionKind::kSave:
      return save_to_file(slot, action.path);
    case SlotActionKind::kRestore:
      return restore_from_file(slot, action.path);
    case SlotActionKind::kErase: {
      SlotFileResult r;
      r.n_tokens = static_cast<int32_t>(slot.cached.size());
      clear_slot(slot);
      return r;
    }
  }
  return error(ErrorCode::kInternal, "unknown slot action");
}

SlotFileShape SchedulerImpl::file_shape() const {
  SlotFileShape s;
  s.kv = ctx_->kv_cache().config().shape;
  s.type_k = static_cast<uint32_t>(ctx_->params().type_k);
  s.type_v = static_cast<uint32_t>(ctx_->params().type_v);
  s.n_vocab = model_->hparams().n_vocab;
  return s;
}

Result<SlotFileResult> SchedulerImpl::save_to_file(Slot& slot, const std::string& path) {
  const int64_t t0 = now_us();
  const auto n = static_cast<int32_t>(slot.cached.size());
  const engine::KvSnapshot kv = ctx_->kv_cache().save(slot.id, n);
  if (kv.n_tokens != n)
    return error(ErrorCode::kInternal,
                 fmt::format("slot {} holds {} tokens but {} KV rows", slot.id, n, kv.n_tokens));
  const std::vector<uint8_t> bytes = encode_slot_file(file_shape(), slot.cached, kv);
  HEARTH_RETURN_IF_ERROR(write_file(path, bytes));
  SlotFileResult r;
  r.n_tokens = n;
  r.n_bytes = bytes.size();
  r.ms = static_cast<double>(now_us() - t0) / 1000.0;
  return r;
}

// On any failure the slot ends up empty, as the reference clears it.
Result<SlotFileResult> SchedulerImpl::restore_from_file(Slot& slot, const std::string& path) {
  const int64_t t0 = now_us();
  const SlotFileShape shape = file_shape();
  Result<std::vector<uint8_t>> bytes =
      read_file_bounded(path, max_slot_file_bytes(shape, config_.n_ctx_slot) + 1);
  if (!bytes.is_ok()) {
    clear_slot(slot);
    // An unreadable file fails like a malformed one in the reference.
    return error(bytes.status().code(), kRestoreInvalidFile);
  }
  Result<SlotState> state = decode_slot_file(*bytes, shape, config_.n_ctx_slot);
  if (!state.is_ok()) {
    clear_slot(slot);
    return state.status();
  }
  if (!ctx_->kv_cache().restore(slot.id, state->kv).is_ok()) {
    clear_slot(slot);
    return error(ErrorCode::kInvalidArgument, kRestoreInvalidFile);
  }
  slot.cached = std::move(state->tokens);
  SlotFileResult r;
  r.n_tokens = static_cast<int32_t>(slot.cached.size());
  r.n_bytes = bytes->size();
  r.ms = static_cast<double>(now_us() - t0) / 1000.0;
  return r;
}

void SchedulerImpl::clear_slot(Slot& slot) {
  ctx_->kv_cache().clear(slot.id);
  slot.cached.clear();
}

// After the scheduler thread stopped: nothing will run the queued actions any more.
void SchedulerImpl::fail_actions() {
  std::deque<std::unique_ptr<SlotAction>> actions;
  {
    std::lock_guard<std::mutex> lock(mu_);
    actions.swap(actions_);
  }
  for (auto& a : actions)
    a->done(error(ErrorCode::kResourceExhausted, "the server is shutting down"));
}

}  // namespace hearth::scheduler::detail
