// The scheduler's mailbox (the shape of TGI's queue actor): what the server's threads hand
// the scheduler thread (queued tasks, slot actions, the stop request) behind one lock and
// one condition variable. The scheduler thread takes its work out of it: tasks that cannot
// run are screened out once, and the next step is planned under the lock from the queue as
// it stands, with the pure planner.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <deque>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "base/status.h"
#include "scheduler/planner.h"
#include "scheduler/scheduler.h"
#include "scheduler/status_board.h"

namespace hearth::scheduler::detail {

struct Pending {
  TaskRequest req;
  std::shared_ptr<const std::vector<int32_t>> prompt;
  bool checked = false;  // TaskLimits::check() ran
  int64_t t_queued_us = 0;
};

// A slot action (save, restore, erase) waiting for its slot to be idle; `done` gets the
// outcome.
struct SlotAction {
  SlotActionKind kind = SlotActionKind::kErase;
  int32_t slot = 0;
  std::string path;
  SlotActionDone done;
};

// What decides whether a queued task can run at all and how the planner must treat it:
// the model's shape and the scheduler's limits, nothing that changes.
struct TaskLimits {
  TaskLimits(const engine::Model& model, const SchedulerConfig& config);
  // The reference lets such a prompt exceed one ubatch.
  bool splittable(TaskKind kind) const;
  // The planner must give such a prompt one whole step.
  bool needs_one_step(TaskKind kind) const;
  // The error a task fails with before it is planned; nullopt when it can run.
  std::optional<TaskError> check(const Pending& p) const;
  // The task as the planner sees it.
  PlanTask plan_task(const Pending& p) const;

  // The request's media chunks against its prompt (see MediaChunk); nullopt when sound.
  std::optional<TaskError> check_media(const Pending& p) const;

  int32_t n_vocab;
  int32_t n_embd;  // a media row's width: the model's input width (n_embd_inp)
  bool causal;
  bool has_lm_head;
  bool embeddings;
  engine::PoolingType pooling;
  int32_t n_ubatch;  // the smaller of -ub and -b
  int32_t n_call;    // -ub: the most rows of one forward call
  int32_t n_ctx_slot;
};

// One turn of the scheduler thread, taken out of the intake.
struct Work {
  StepPlan plan;
  std::vector<Pending> admitted;  // admitted[i] is the task of plan.admitted[i]
  std::vector<std::pair<Pending, TaskError>> rejected;  // failed outside the lock
};

class Intake {
 public:
  Intake(const TaskLimits& limits, int32_t max_queued, StatusBoard& board)
      : limits_(limits), max_queued_(max_queued), board_(board) {}

  // Server threads. push() queues all the tasks or none.
  Status push(std::vector<Pending> tasks);
  // False once the scheduler is stopping: the caller answers the action itself.
  bool push_action(std::unique_ptr<SlotAction>& action);
  bool stopped() const;
  // False when stop() already ran; else the scheduler thread wakes up to leave.
  bool begin_stop();
  void end_stop();

  // Scheduler thread. take() waits while there is nothing to do, screens the queue and
  // plans the next step; `in` holds the slots (busy: running a task) and the step's limits.
  // False once stopping.
  bool take(PlanInput in, Work& work);
  // The actions whose slot runs no task (`busy` per slot), in queue order.
  std::vector<std::unique_ptr<SlotAction>> take_actions(const std::vector<bool>& busy);
  // After the scheduler thread stopped: what nothing will run any more.
  std::deque<Pending> drain_tasks();
  std::deque<std::unique_ptr<SlotAction>> drain_actions();

 private:
  // Under mu_.
  bool action_pending(int32_t slot) const;
  bool action_runnable(const std::vector<PlanSlot>& slots) const;
  void screen(std::vector<std::pair<Pending, TaskError>>& rejected);
  void plan(PlanInput& in, Work& work);

  const TaskLimits limits_;
  const int32_t max_queued_;
  StatusBoard& board_;
  mutable std::mutex mu_;
  std::condition_variable cv_;
  std::deque<Pending> queue_;
  std::deque<std::unique_ptr<SlotAction>> actions_;
  bool stopping_ = false;
  bool stopped_ = false;
};

}  // namespace hearth::scheduler::detail
