#include "scheduler/step_loop.h"

namespace hearth::scheduler::detail {

StepLoop::StepLoop(const engine::Model& model, const tokenizer::Tokenizer& tok,
                   const SchedulerConfig& config, engine::Context& ctx,
                   std::unique_ptr<engine::Context> draft_ctx, Intake& intake, StatusBoard& board)
    : config_(config),
      tok_(tok),
      limits_(model, config),
      ctx_(ctx),
      intake_(intake),
      board_(board),
      slots_(config, ctx.kv_cache(), board),
      tasks_(tok),
      cache_(config, ctx.kv_cache()),
      files_(model, ctx, config.n_ctx_slot),
      speculator_(config, model.hparams().n_vocab, ctx.kv_cache(), std::move(draft_ctx)),
      embedder_(model.hparams(), config.pooling, ctx),
      mrope_(model.hparams().mrope != engine::MultiRope::kNone) {
  slots_.publish();
}

void StepLoop::run() {
  for (;;) {
    run_slot_actions();
    Work work;
    if (!take_work(work)) break;
    // A slot action that became runnable goes first: no step was planned.
    if (work.plan.decode.empty()) continue;
    for (size_t i = 0; i < work.plan.admitted.size(); ++i)
      launch(work.plan.admitted[i], std::move(work.admitted[i]));
    // Published before the step runs: a client that sees its first token must find its
    // slot busy in /slots.
    if (!work.plan.admitted.empty()) slots_.publish();
    execute(work.plan);
    slots_.publish();
  }
}

// Drops cancelled work, waits while there is nothing to do, and plans the next step
// (intake.h); then fails the tasks that cannot run. False once stop() was called.
bool StepLoop::take_work(Work& work) {
  // The scheduler may go to sleep next (no work left): /slots must show the slot free now.
  if (slots_.drop_cancelled()) slots_.publish();
  if (!intake_.take(plan_input(), work)) return false;
  // Outside the intake's lock, so a sink may call back into the scheduler.
  for (auto& [p, err] : work.rejected) {
    for (int32_t j = 0; j < p.req.n_cmpl; ++j) p.req.sink->on_error(p.req.index + j, err);
  }
  return true;
}

// The slots as the planner sees them; the intake adds the queue and the pending actions.
PlanInput StepLoop::plan_input() const {
  PlanInput in;
  in.n_batch = config_.n_batch;
  in.cont_batching = config_.cont_batching;
  in.similarity = config_.slot_prompt_similarity;
  for (const Slot& s : slots_) {
    PlanSlot ps;
    ps.id = s.id;
    ps.busy = s.task != nullptr;
    // A request whose client has not taken its output yet generates nothing more for now.
    ps.generating =
        s.task && s.task->prompt_done && s.task->has_next_token && !s.task->sink->backlogged();
    if (s.task && !s.task->is_child && !s.task->prompt_done) {
      ps.prompt_left = s.task->n_prompt() - static_cast<int32_t>(s.cached.size());
      ps.whole_prompt = limits_.needs_one_step(s.task->kind);
      ps.media = s.task->media;
      ps.prompt_at = static_cast<int32_t>(s.cached.size());
    }
    ps.started = s.started;
    ps.t_last_used = s.t_last_used;
    ps.cached = s.cached;
    ps.min_truncation = ctx_.kv_cache().min_truncation(s.id);
    in.slots.push_back(ps);
  }
  return in;
}

// Runs, in queue order, every slot action whose slot is idle.
void StepLoop::run_slot_actions() {
  for (auto& a : intake_.take_actions(slots_.busy_mask())) {
    Result<SlotFileResult> r = files_.run(*a, slots_[a->slot]);
    slots_.publish();  // /slots shows the new cache before the caller sees the result
    a->done(std::move(r));
  }
}

void StepLoop::shutdown() {
  const TaskError err{TaskError::Kind::kUnavailable, "the server is shutting down"};
  for (Slot& s : slots_) {
    if (!s.task) continue;
    s.task->sink->on_error(s.task->index, err);
    slots_.release(s);
  }
  for (Pending& p : intake_.drain_tasks()) {
    for (int32_t j = 0; j < p.req.n_cmpl; ++j) p.req.sink->on_error(p.req.index + j, err);
  }
  // Nothing will run the queued actions any more.
  for (auto& a : intake_.drain_actions())
    a->done(error(ErrorCode::kResourceExhausted, "the server is shutting down"));
  slots_.publish();
}

}  // namespace hearth::scheduler::detail
