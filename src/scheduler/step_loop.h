// The scheduler thread's loop: slot actions, then work from the intake (planned by the
// pure planner), then one engine step: launch the admitted tasks, draft, collect the step's
// tokens, forward them, sample and emit. It owns the scheduler-thread components and
// composes them; each owns its state:
//   SlotTable   the slots, their tasks and their lifecycle (slot_table.h)
//   TaskFactory a request's RunningTask and sampler chain (task_factory.h)
//   SlotCache   the host prompt cache (slot_cache.h)
//   SlotFiles   save / restore / erase actions (slot_files.h)
//   Speculator  drafts and their verification (speculator.h)
//   Embedder    embedding rows and pooling (embedder.h)
// and reaches the server's threads only through the Intake and the StatusBoard.
#pragma once

#include <memory>
#include <span>
#include <vector>

#include "engine/context.h"
#include "scheduler/embedder.h"
#include "scheduler/intake.h"
#include "scheduler/slot_cache.h"
#include "scheduler/slot_files.h"
#include "scheduler/slot_table.h"
#include "scheduler/speculator.h"
#include "scheduler/status_board.h"
#include "scheduler/task_factory.h"

namespace hearth::scheduler::detail {

class StepLoop {
 public:
  // `config` must outlive the loop (the speculator keeps a reference to its settings).
  StepLoop(const engine::Model& model, const tokenizer::Tokenizer& tok,
           const SchedulerConfig& config, engine::Context& ctx,
           std::unique_ptr<engine::Context> draft_ctx, Intake& intake, StatusBoard& board);

  // The scheduler thread's body: returns once the intake is stopping.
  void run();
  // After the thread ended: every running, queued or pending piece of work fails.
  void shutdown();

 private:
  // step_loop.cpp: between steps.
  bool take_work(Work& work);
  PlanInput plan_input() const;
  void run_slot_actions();
  // step.cpp: one step.
  void launch(const Admission& adm, Pending&& p);
  bool ended_at_launch(const std::vector<Slot*>& copies, const Pending& p);
  void execute(const StepPlan& plan);
  void collect(const StepPlan& plan, std::vector<StepToken>& tokens) const;
  bool forward(std::vector<StepToken>& chunk);
  bool drop_drafts(std::vector<StepToken>& chunk);
  void after_forward(std::span<const StepToken> chunk);
  void prompt_finished(Slot& slot, std::span<const float> logits);
  void finish_embedding(Slot& slot);
  void sample_into(Slot& slot, std::span<const float> logits);
  void finish(Slot& slot);

  const SchedulerConfig& config_;
  const tokenizer::Tokenizer& tok_;
  const TaskLimits limits_;
  engine::Context& ctx_;
  Intake& intake_;
  StatusBoard& board_;
  SlotTable slots_;
  TaskFactory tasks_;
  SlotCache cache_;
  SlotFiles files_;
  Speculator speculator_;
  Embedder embedder_;
  // The model rotates by M-RoPE positions (BatchToken::rope, media_positions.h).
  const bool mrope_;
};

}  // namespace hearth::scheduler::detail
