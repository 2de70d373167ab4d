#include "scheduler/intake.h"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>

namespace hearth::scheduler::detail {

TaskLimits::TaskLimits(const engine::Model& model, const SchedulerConfig& config)
    : n_vocab(model.hparams().n_vocab),
      n_embd(model.hparams().n_embd_inp()),
      causal(model.hparams().causal),
      has_lm_head(model.has_lm_head()),
      embeddings(config.embeddings),
      pooling(config.pooling),
      n_ubatch(std::min(config.n_ubatch, config.n_batch)),
      n_call(config.n_ubatch),
      n_ctx_slot(config.n_ctx_slot) {}

bool TaskLimits::splittable(TaskKind kind) const {
  // As the reference's can_split(): only last pooling reads nothing but the final row, which
  // a causal model computes the same in any chunking. (Hearth gathers every row, so it could
  // split the others too; it keeps the reference's limit and its error.)
  return kind == TaskKind::kCompletion || (pooling == engine::PoolingType::kLast && causal);
}

bool TaskLimits::needs_one_step(TaskKind kind) const {
  // An encoder's input is one forward call. A decoder's rows are gathered across steps and
  // pooled at the end, so an input within the reference's limit need not wait for a step of
  // its own: with slots generating, such a step might never come.
  return kind != TaskKind::kCompletion && !causal;
}

std::optional<TaskError> TaskLimits::check_media(const Pending& p) const {
  const auto invalid = [](std::string message) {
    return TaskError{TaskError::Kind::kInvalidRequest, std::move(message), 0, 0};
  };
  if (p.req.media.empty()) return std::nullopt;
  // A decoder's embedding input is evaluated in its slot like a prompt, media rows included
  // (the reference's /embeddings takes multimodal_data); an encoder's input and rerank's
  // query/document pairs are text only.
  if (p.req.kind == TaskKind::kRerank || (p.req.kind == TaskKind::kEmbedding && !causal))
    return invalid("images and audio are not supported in rerank inputs or by encoder models");
  const auto n = static_cast<int64_t>(p.prompt->size());
  int64_t end = 0;  // of the previous chunk
  for (size_t i = 0; i < p.req.media.size(); ++i) {
    const MediaChunk& c = p.req.media[i];
    if (c.n_tokens <= 0 || c.begin < end || int64_t{c.begin} + c.n_tokens > n ||
        !is_media_placeholder(c.placeholder))
      return invalid(
          fmt::format("media chunk {} (positions {} to {}, placeholder {}) is "
                      "empty, overlaps another or lies outside the prompt",
                      i, c.begin, int64_t{c.begin} + c.n_tokens, c.placeholder));
    if (!c.embd || c.embd->size() != static_cast<size_t>(c.n_tokens) * static_cast<size_t>(n_embd))
      return invalid(fmt::format("media chunk {} has {} embedding values, expected {} x {}", i,
                                 c.embd ? c.embd->size() : 0, c.n_tokens, n_embd));
    // M-RoPE positions need the grid to cover the rows exactly.
    if (c.grid_nx < 0 || c.grid_ny < 0 || (c.grid_nx > 0) != (c.grid_ny > 0) ||
        int64_t{c.grid_nx} * c.grid_ny != (c.grid_nx > 0 ? c.n_tokens : 0))
      return invalid(fmt::format("media chunk {} has a {} x {} grid for {} rows", i, c.grid_nx,
                                 c.grid_ny, c.n_tokens));
    // Its rows see each other, so they go in one forward call, which -ub bounds (the
    // reference aborts there: "non-causal attention requires n_ubatch >= n_tokens").
    if (c.non_causal && c.n_tokens > n_call)
      return invalid(
          fmt::format("media chunk {} ({} positions, attending to each other) is "
                      "too large to process. increase the physical batch size "
                      "(current batch size: {})",
                      i, c.n_tokens, n_call));
    end = int64_t{c.begin} + c.n_tokens;
    for (int64_t k = c.begin; k < end; ++k) {
      if ((*p.prompt)[static_cast<size_t>(k)] != c.placeholder)
        return invalid(
            fmt::format("media chunk {}: prompt position {} does not hold its "
                        "placeholder",
                        i, k));
    }
  }
  return std::nullopt;
}

std::optional<TaskError> TaskLimits::check(const Pending& p) const {
  if (std::optional<TaskError> err = check_media(p)) return err;
  // Placeholders are valid where a chunk fills them (check_media checked those positions).
  size_t next_chunk = 0;
  for (size_t k = 0; k < p.prompt->size(); ++k) {
    const int32_t t = (*p.prompt)[k];
    while (next_chunk < p.req.media.size() &&
           static_cast<int64_t>(k) >=
               int64_t{p.req.media[next_chunk].begin} + p.req.media[next_chunk].n_tokens)
      ++next_chunk;
    const bool in_chunk =
        next_chunk < p.req.media.size() && static_cast<int64_t>(k) >= p.req.media[next_chunk].begin;
    if (in_chunk) continue;
    if (t < 0 || t >= n_vocab)
      return TaskError{TaskError::Kind::kInvalidRequest, "Prompt contains invalid tokens", 0, 0};
  }
  const auto n = static_cast<int32_t>(p.prompt->size());
  if (p.req.kind != TaskKind::kCompletion && !embeddings)
    return TaskError{TaskError::Kind::kInvalidRequest, "embeddings are not enabled", 0, 0};
  if (p.req.kind == TaskKind::kCompletion && !has_lm_head) {
    // The reference answers 500 "the current context does not logits computation".
    return TaskError{TaskError::Kind::kInvalidRequest,
                     "this model computes embeddings only: it has no output head to generate text",
                     0, 0};
  }
  if (!splittable(p.req.kind)) {
    // The reference evaluates such an input in one physical batch, without its cache.
    if (n > n_ubatch) {
      // The reference's words, with a 400 for its 500: the input exceeds a server limit.
      return TaskError{TaskError::Kind::kInvalidRequest,
                       fmt::format("input ({} tokens) is too large to process. increase the "
                                   "physical batch size (current batch size: {})",
                                   n, n_ubatch),
                       0, 0};
    }
    if (n > n_ctx_slot) {
      return TaskError{TaskError::Kind::kExceedContext,
                       fmt::format("input ({} tokens) is larger than the max context size ({} "
                                   "tokens). skipping",
                                   n, n_ctx_slot),
                       n, n_ctx_slot};
    }
    return std::nullopt;
  }
  if (n >= n_ctx_slot) {
    return TaskError{TaskError::Kind::kExceedContext,
                     fmt::format("request ({} tokens) exceeds the available context size ({} "
                                 "tokens), try increasing it",
                                 n, n_ctx_slot),
                     n, n_ctx_slot};
  }
  return std::nullopt;
}

PlanTask TaskLimits::plan_task(const Pending& p) const {
  const bool whole = needs_one_step(p.req.kind);
  // Embedding tasks keep nothing of the slot's cache (their rows are all needed).
  const bool reuse = p.req.kind == TaskKind::kCompletion && p.req.params.cache_prompt;
  // An embedding input keeps nothing of a slot: it takes the least recently used one (the
  // host cache first stores that slot's state), never a slot by prompt similarity.
  const int32_t id_slot = p.req.kind == TaskKind::kCompletion ? p.req.id_slot : -2;
  return {*p.prompt, id_slot, p.req.n_cmpl, reuse, whole, p.req.media};
}

Status Intake::push(std::vector<Pending> tasks) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (stopping_ || stopped_) return error(ErrorCode::kResourceExhausted, "scheduler stopped");
    if (queue_.size() + tasks.size() > static_cast<size_t>(max_queued_))
      return error(ErrorCode::kResourceExhausted,
                   fmt::format("{} tasks are already waiting for a slot", queue_.size()));
    for (Pending& p : tasks) queue_.push_back(std::move(p));
    board_.set_deferred(queue_.size());
  }
  cv_.notify_all();
  return Status::ok();
}

bool Intake::push_action(std::unique_ptr<SlotAction>& action) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (stopping_ || stopped_) return false;
    actions_.push_back(std::move(action));
  }
  cv_.notify_all();
  return true;
}

bool Intake::stopped() const {
  std::lock_guard<std::mutex> lock(mu_);
  return stopped_;
}

bool Intake::begin_stop() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (stopped_) return false;
    stopping_ = true;
  }
  cv_.notify_all();
  return true;
}

void Intake::end_stop() {
  std::lock_guard<std::mutex> lock(mu_);
  stopped_ = true;
}

bool Intake::take(PlanInput in, Work& work) {
  std::unique_lock<std::mutex> lock(mu_);
  const auto busy_slots =
      std::count_if(in.slots.begin(), in.slots.end(), [](const PlanSlot& s) { return s.busy; });
  for (;;) {
    if (stopping_) return false;
    screen(work.rejected);
    if (!queue_.empty() || busy_slots > 0 || !work.rejected.empty() || action_runnable(in.slots))
      break;
    board_.set_deferred(0);
    cv_.wait(lock);
  }
  const bool action_first = action_runnable(in.slots);
  // A slot action that can run now goes first: the loop comes back to it before planning.
  if (!action_first) plan(in, work);
  board_.set_deferred(queue_.size());
  if (work.plan.admitted.empty() && work.plan.n_tokens == 0 && work.rejected.empty() &&
      !action_first) {
    // Nothing can run: every busy slot waits for its client to catch up (backlogged), or
    // nothing can start (should not happen: n_cmpl <= n_slots). Look again shortly rather
    // than spin.
    cv_.wait_for(lock, std::chrono::milliseconds(busy_slots > 0 ? 2 : 10));
  }
  return true;
}

// Plans the step over the queue and takes the admitted tasks out of it.
void Intake::plan(PlanInput& in, Work& work) {
  // A slot with a pending action takes no new task until the action ran.
  for (PlanSlot& s : in.slots) s.busy = s.busy || action_pending(s.id);
  for (const Pending& p : queue_) in.queue.push_back(limits_.plan_task(p));
  work.plan = plan_step(in);
  // Admissions come in queue order; take them out back to front so indices stay valid.
  work.admitted.resize(work.plan.admitted.size());
  for (size_t i = work.plan.admitted.size(); i-- > 0;) {
    const auto at = queue_.begin() + static_cast<std::ptrdiff_t>(work.plan.admitted[i].task);
    work.admitted[i] = std::move(*at);
    queue_.erase(at);
  }
}

// Drops cancelled queued tasks and takes out the ones that cannot run (checked once each).
void Intake::screen(std::vector<std::pair<Pending, TaskError>>& rejected) {
  for (auto it = queue_.begin(); it != queue_.end();) {
    if (it->req.sink->cancelled()) {
      it = queue_.erase(it);
      continue;
    }
    if (!it->checked) {
      it->checked = true;
      if (std::optional<TaskError> err = limits_.check(*it)) {
        rejected.emplace_back(std::move(*it), std::move(*err));
        it = queue_.erase(it);
        continue;
      }
    }
    ++it;
  }
}

bool Intake::action_pending(int32_t slot) const {
  return std::any_of(actions_.begin(), actions_.end(),
                     [&](const auto& a) { return a->slot == slot; });
}

bool Intake::action_runnable(const std::vector<PlanSlot>& slots) const {
  return std::any_of(actions_.begin(), actions_.end(),
                     [&](const auto& a) { return !slots[static_cast<size_t>(a->slot)].busy; });
}

std::vector<std::unique_ptr<SlotAction>> Intake::take_actions(const std::vector<bool>& busy) {
  std::vector<std::unique_ptr<SlotAction>> ready;
  std::lock_guard<std::mutex> lock(mu_);
  for (auto it = actions_.begin(); it != actions_.end();) {
    if (busy[static_cast<size_t>((*it)->slot)]) {
      ++it;
      continue;
    }
    ready.push_back(std::move(*it));
    it = actions_.erase(it);
  }
  return ready;
}

std::deque<Pending> Intake::drain_tasks() {
  std::deque<Pending> out;
  std::lock_guard<std::mutex> lock(mu_);
  out.swap(queue_);
  board_.set_deferred(0);
  return out;
}

std::deque<std::unique_ptr<SlotAction>> Intake::drain_actions() {
  std::deque<std::unique_ptr<SlotAction>> out;
  std::lock_guard<std::mutex> lock(mu_);
  out.swap(actions_);
  return out;
}

}  // namespace hearth::scheduler::detail
