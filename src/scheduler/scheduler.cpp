#include "scheduler/scheduler.h"

#include <fmt/format.h>

#include <algorithm>
#include <future>
#include <utility>

#include "base/timer.h"
#include "scheduler/scheduler_impl.h"

namespace hearth::scheduler {
namespace detail {

void SchedulerImpl::start() {
  std::lock_guard<std::mutex> lock(mu_);
  if (thread_.joinable() || stopped_) return;
  thread_ = std::thread([this] { run(); });
}

void SchedulerImpl::stop() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (stopped_) return;
    stopping_ = true;
  }
  cv_.notify_all();
  if (thread_.joinable()) thread_.join();
  shutdown_tasks();
  std::lock_guard<std::mutex> lock(mu_);
  stopped_ = true;
}

Status SchedulerImpl::submit(TaskRequest request) {
  std::vector<TaskRequest> one;
  one.push_back(std::move(request));
  return submit_all(std::move(one));
}

Status SchedulerImpl::submit_all(std::vector<TaskRequest> requests) {
  std::vector<Pending> pending;
  pending.reserve(requests.size());
  for (TaskRequest& request : requests) {
    if (!request.sink) return error(ErrorCode::kInvalidArgument, "task without a sink");
    if (request.kind != TaskKind::kCompletion && request.n_cmpl != 1)
      return error(ErrorCode::kInvalidArgument, "embedding and rerank tasks run once (n_cmpl 1)");
    if (request.n_cmpl < 1 || request.n_cmpl > config_.n_slots)
      return error(ErrorCode::kInvalidArgument,
                   fmt::format("n_cmpl {} is outside [1, {}]", request.n_cmpl, config_.n_slots));
    Pending p;
    p.t_queued_us = now_us();
    p.prompt = std::make_shared<const std::vector<int32_t>>(std::move(request.prompt));
    p.req = std::move(request);
    pending.push_back(std::move(p));
  }
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (stopping_ || stopped_) return error(ErrorCode::kResourceExhausted, "scheduler stopped");
    if (queue_.size() + pending.size() > static_cast<size_t>(config_.max_queued))
      return error(ErrorCode::kResourceExhausted,
                   fmt::format("{} tasks are already waiting for a slot", queue_.size()));
    for (Pending& p : pending) queue_.push_back(std::move(p));
    metrics_.requests_deferred = static_cast<int32_t>(queue_.size());
  }
  cv_.notify_all();
  return Status::ok();
}

std::vector<SlotInfo> SchedulerImpl::slots() const {
  std::lock_guard<std::mutex> lock(mu_);
  return snapshot_;
}

bool SchedulerImpl::has_idle_slot() const {
  std::lock_guard<std::mutex> lock(mu_);
  return std::any_of(snapshot_.begin(), snapshot_.end(),
                     [](const SlotInfo& s) { return !s.is_processing; });
}

MetricsSnapshot SchedulerImpl::metrics(bool reset_window) {
  std::lock_guard<std::mutex> lock(mu_);
  MetricsSnapshot out = metrics_;
  if (reset_window) {
    metrics_.window_prompt_tokens = 0;
    metrics_.window_prompt_seconds = 0.0;
    metrics_.window_predicted_tokens = 0;
    metrics_.window_predicted_seconds = 0.0;
  }
  return out;
}

int32_t SchedulerImpl::busy_slots() const {
  return static_cast<int32_t>(
      std::count_if(slots_.begin(), slots_.end(), [](const Slot& s) { return s.task != nullptr; }));
}

void SchedulerImpl::run() {
  for (;;) {
    run_slot_actions();
    StepPlan plan;
    std::vector<Pending> admitted;
    if (!take_work(plan, admitted)) break;
    for (size_t i = 0; i < plan.admitted.size(); ++i)
      launch(plan.admitted[i], std::move(admitted[i]));
    // Published before the step runs: a client that sees its first token must find its
    // slot busy in /slots.
    if (!plan.admitted.empty()) publish();
    execute(plan);
    publish();
  }
}

// Under the lock: drops cancelled work, fails tasks that cannot run, waits while there is
// nothing to do, and plans the next step. False once stop() was called.
bool SchedulerImpl::take_work(StepPlan& plan, std::vector<Pending>& admitted) {
  drop_cancelled();
  std::vector<std::pair<Pending, TaskError>> rejected;
  {
    std::unique_lock<std::mutex> lock(mu_);
    for (;;) {
      if (stopping_) return false;
      screen_queue(rejected);
      if (!queue_.empty() || busy_slots() > 0 || !rejected.empty() || action_runnable()) break;
      metrics_.requests_deferred = 0;
      cv_.wait(lock);
    }
    // A slot action that can run now goes first: run() comes back to it before planning.
    if (!action_runnable()) plan = plan_step(plan_input(queue_));
    // Admissions come in queue order; take them out back to front so indices stay valid.
    admitted.resize(plan.admitted.size());
    for (size_t i = plan.admitted.size(); i-- > 0;) {
      const auto at = queue_.begin() + static_cast<std::ptrdiff_t>(plan.admitted[i].task);
      admitted[i] = std::move(*at);
      queue_.erase(at);
    }
    metrics_.requests_deferred = static_cast<int32_t>(queue_.size());
    if (plan.admitted.empty() && plan.n_tokens == 0 && rejected.empty() && !action_runnable()) {
      // Nothing can run: every busy slot waits for its client to catch up (backlogged), or
      // nothing can start (should not happen: n_cmpl <= n_slots). Look again shortly rather
      // than spin.
      cv_.wait_for(lock, std::chrono::milliseconds(busy_slots() > 0 ? 2 : 10));
    }
  }
  // Outside the lock, so a sink may call back into the scheduler.
  for (auto& [p, err] : rejected) {
    for (int32_t j = 0; j < p.req.n_cmpl; ++j) p.req.sink->on_error(p.req.index + j, err);
  }
  return true;
}

// Drops cancelled queued tasks and takes out the ones that cannot run (checked once each).
void SchedulerImpl::screen_queue(std::vector<std::pair<Pending, TaskError>>& rejected) {
  for (auto it = queue_.begin(); it != queue_.end();) {
    if (it->req.sink->cancelled()) {
      it = queue_.erase(it);
      continue;
    }
    if (!it->checked) {
      it->checked = true;
      if (std::optional<TaskError> err = check_task(*it)) {
        rejected.emplace_back(std::move(*it), std::move(*err));
        it = queue_.erase(it);
        continue;
      }
    }
    ++it;
  }
}

bool SchedulerImpl::splittable(TaskKind kind) const {
  // As the reference's can_split(): only last pooling reads nothing but the final row, which
  // a causal model computes the same in any chunking. (Hearth gathers every row, so it could
  // split the others too; it keeps the reference's limit and its error.)
  return kind == TaskKind::kCompletion ||
         (config_.pooling == engine::PoolingType::kLast && model_->hparams().causal);
}

bool SchedulerImpl::needs_one_step(TaskKind kind) const {
  // An encoder's input is one forward call. A decoder's rows are gathered across steps and
  // pooled at the end, so an input within the reference's limit need not wait for a step of
  // its own: with slots generating, such a step might never come.
  return kind != TaskKind::kCompletion && !model_->hparams().causal;
}

std::optional<TaskError> SchedulerImpl::check_task(const Pending& p) const {
  const int32_t n_vocab = model_->hparams().n_vocab;
  for (int32_t t : *p.prompt) {
    if (t < 0 || t >= n_vocab)
      return TaskError{TaskError::Kind::kInvalidRequest, "Prompt contains invalid tokens", 0, 0};
  }
  const auto n = static_cast<int32_t>(p.prompt->size());
  if (p.req.kind != TaskKind::kCompletion && !config_.embeddings)
    return TaskError{TaskError::Kind::kInvalidRequest, "embeddings are not enabled", 0, 0};
  if (p.req.kind == TaskKind::kCompletion && !model_->has_lm_head()) {
    // The reference answers 500 "the current context does not logits computation".
    return TaskError{TaskError::Kind::kInvalidRequest,
                     "this model computes embeddings only: it has no output head to generate text",
                     0, 0};
  }
  if (!splittable(p.req.kind)) {
    // The reference evaluates such an input in one physical batch, without its cache.
    const int32_t n_ubatch = std::min(config_.n_ubatch, config_.n_batch);
    if (n > n_ubatch) {
      // The reference's words, with a 400 for its 500: the input exceeds a server limit.
      return TaskError{TaskError::Kind::kInvalidRequest,
                       fmt::format("input ({} tokens) is too large to process. increase the "
                                   "physical batch size (current batch size: {})",
                                   n, n_ubatch),
                       0, 0};
    }
    if (n > config_.n_ctx_slot) {
      return TaskError{TaskError::Kind::kExceedContext,
                       fmt::format("input ({} tokens) is larger than the max context size ({} "
                                   "tokens). skipping",
                                   n, config_.n_ctx_slot),
                       n, config_.n_ctx_slot};
    }
    return std::nullopt;
  }
  if (n >= config_.n_ctx_slot) {
    return TaskError{TaskError::Kind::kExceedContext,
                     fmt::format("request ({} tokens) exceeds the available context size ({} "
                                 "tokens), try increasing it",
                                 n, config_.n_ctx_slot),
                     n, config_.n_ctx_slot};
  }
  return std::nullopt;
}

PlanInput SchedulerImpl::plan_input(const std::deque<Pending>& queue) const {
  PlanInput in;
  in.n_batch = config_.n_batch;
  in.cont_batching = config_.cont_batching;
  in.similarity = config_.slot_prompt_similarity;
  for (const Slot& s : slots_) {
    PlanSlot ps;
    ps.id = s.id;
    // A slot with a pending action takes no new task until the action ran.
    ps.busy = s.task != nullptr || action_pending(s.id);
    // A request whose client has not taken its output yet generates nothing more for now.
    ps.generating =
        s.task && s.task->prompt_done && s.task->has_next_token && !s.task->sink->backlogged();
    if (s.task && !s.task->is_child && !s.task->prompt_done) {
      ps.prompt_left = s.task->n_prompt() - static_cast<int32_t>(s.cached.size());
      ps.whole_prompt = needs_one_step(s.task->kind);
    }
    ps.started = s.started;
    ps.t_last_used = s.t_last_used;
    ps.cached = s.cached;
    ps.min_truncation = ctx_->kv_cache().min_truncation(s.id);
    in.slots.push_back(ps);
  }
  for (const Pending& p : queue) {
    const bool whole = needs_one_step(p.req.kind);
    // Embedding tasks keep nothing of the slot's cache (their rows are all needed).
    const bool reuse = p.req.kind == TaskKind::kCompletion && p.req.params.cache_prompt;
    // An embedding input keeps nothing of a slot: it takes the least recently used one (the
    // host cache first stores that slot's state), never a slot by prompt similarity.
    const int32_t id_slot = p.req.kind == TaskKind::kCompletion ? p.req.id_slot : -2;
    in.queue.push_back({*p.prompt, id_slot, p.req.n_cmpl, reuse, whole});
  }
  return in;
}

}  // namespace detail

Histogram::Histogram(std::vector<double> upper_bounds)
    : bounds(std::move(upper_bounds)), counts(bounds.size() + 1, 0) {}

void Histogram::observe(double value) {
  const auto at = std::lower_bound(bounds.begin(), bounds.end(), value) - bounds.begin();
  ++counts[static_cast<size_t>(at)];
  sum += value;
  ++count;
}

void Histogram::absorb(Histogram& other) {
  for (size_t i = 0; i < counts.size(); ++i) counts[i] += std::exchange(other.counts[i], 0);
  sum += std::exchange(other.sum, 0.0);
  count += std::exchange(other.count, 0);
}

std::vector<double> time_to_first_token_buckets() {
  return {0.001, 0.005, 0.01, 0.02, 0.04, 0.06, 0.08, 0.1,  0.25, 0.5,
          0.75,  1.0,   2.5,  5.0,  7.5,  10.0, 20.0, 40.0, 80.0};
}

std::vector<double> time_per_output_token_buckets() {
  return {0.01, 0.025, 0.05, 0.075, 0.1, 0.15, 0.2,  0.3,  0.4, 0.5,
          0.75, 1.0,   2.5,  5.0,   7.5, 10.0, 20.0, 40.0, 80.0};
}

namespace {

Result<SlotFileResult> wait_for_action(Scheduler& scheduler, SlotActionKind kind, int32_t id,
                                       std::string path) {
  std::promise<Result<SlotFileResult>> promise;
  std::future<Result<SlotFileResult>> future = promise.get_future();
  scheduler.slot_action(kind, id, std::move(path),
                        [&promise](Result<SlotFileResult> r) { promise.set_value(std::move(r)); });
  return future.get();
}

}  // namespace

Result<SlotFileResult> Scheduler::save_slot(int32_t id, const std::string& path) {
  return wait_for_action(*this, SlotActionKind::kSave, id, path);
}

Result<SlotFileResult> Scheduler::restore_slot(int32_t id, const std::string& path) {
  return wait_for_action(*this, SlotActionKind::kRestore, id, path);
}

Result<int32_t> Scheduler::erase_slot(int32_t id) {
  Result<SlotFileResult> r = wait_for_action(*this, SlotActionKind::kErase, id, {});
  if (!r.is_ok()) return r.status();
  return r->n_tokens;
}

namespace {

// The draft model's context: a sequence per slot, the target's context size, the draft's
// own KV types and threads. Its vocabulary must be the target's (the ids are compared).
Result<std::unique_ptr<engine::Context>> create_draft_context(const engine::Model& target,
                                                              const SchedulerConfig& config,
                                                              const engine::ContextParams& cp) {
  const DraftModelParams& d = config.spec.draft;
  if (!d.model) return error(ErrorCode::kInvalidArgument, "draft-simple needs a draft model (-md)");
  if (d.model->hparams().n_vocab != target.hparams().n_vocab)
    return error(ErrorCode::kInvalidArgument,
                 fmt::format("the draft model's vocabulary ({} tokens) differs from the target "
                             "model's ({} tokens)",
                             d.model->hparams().n_vocab, target.hparams().n_vocab));
  engine::ContextParams dp = cp;
  dp.type_k = d.type_k;
  dp.type_v = d.type_v;
  dp.n_threads = d.n_threads > 0 ? d.n_threads : cp.n_threads;
  dp.n_threads_batch = d.n_threads_batch > 0 ? d.n_threads_batch : dp.n_threads;
  dp.embeddings = false;
  dp.n_rollback = d.n_max + 1;
  return engine::Context::create(d.model, dp);
}

}  // namespace

Result<std::unique_ptr<Scheduler>> Scheduler::create(
    std::shared_ptr<const engine::Model> model, std::shared_ptr<const tokenizer::Tokenizer> tok,
    const SchedulerConfig& config) {
  if (!model || !tok)
    return error(ErrorCode::kInvalidArgument, "scheduler needs a model and a tokenizer");
  if (config.n_slots < 1 || config.n_ctx_slot < 2 || config.n_batch < 1 || config.n_ubatch < 1)
    return error(ErrorCode::kInvalidArgument,
                 fmt::format("invalid scheduler config: {} slots of {} tokens, batch {}, ubatch {}",
                             config.n_slots, config.n_ctx_slot, config.n_batch, config.n_ubatch));
  const engine::ModelHparams& hp = model->hparams();
  if (!engine::kv_type_supported(config.type_k, hp.head_dim))
    return error(ErrorCode::kInvalidArgument,
                 fmt::format("KV cache type {} (-ctk) is not supported for heads of {} values",
                             tensor_type_name(config.type_k), hp.head_dim));
  if (!engine::kv_type_supported(config.type_v, hp.head_dim_v))
    return error(ErrorCode::kInvalidArgument,
                 fmt::format("KV cache type {} (-ctv) is not supported for heads of {} values",
                             tensor_type_name(config.type_v), hp.head_dim_v));
  engine::ContextParams cp;
  // Separate slots get a context each; a unified cache is one pool of n_ctx_slot tokens that
  // every slot draws from (llama-server's -kvu, forced by -np auto).
  cp.n_ctx = config.kv_unified ? config.n_ctx_slot : config.n_slots * config.n_ctx_slot;
  cp.n_ctx_seq = config.n_ctx_slot;
  cp.n_seq_max = config.n_slots;
  cp.n_threads = config.n_threads;
  cp.n_threads_batch = config.n_threads_batch;
  cp.type_k = config.type_k;
  cp.type_v = config.type_v;
  cp.embeddings = config.embeddings;
  cp.n_ubatch = config.n_ubatch;
  cp.swa_full = config.swa_full;
  cp.n_rollback = config.spec.max_draft();
  SchedulerConfig adjusted = config;
  // An encoder attends to its whole input, so an input is one forward call: a step holds no
  // more than one physical batch.
  if (!hp.causal) adjusted.n_batch = std::min(config.n_batch, config.n_ubatch);
  if (config.embeddings && config.pooling == engine::PoolingType::kUnspecified)
    return error(ErrorCode::kInvalidArgument, "embeddings need a resolved pooling type");
  HEARTH_ASSIGN_OR_RETURN(auto ctx, engine::Context::create(model, cp));
  std::unique_ptr<engine::Context> draft_ctx;
  if (config.spec.draft_simple) {
    HEARTH_ASSIGN_OR_RETURN(draft_ctx, create_draft_context(*model, config, cp));
  }
  auto impl = std::make_unique<detail::SchedulerImpl>(std::move(model), std::move(tok), adjusted,
                                                      std::move(ctx));
  impl->set_draft_context(std::move(draft_ctx));
  return std::unique_ptr<Scheduler>(std::move(impl));
}

}  // namespace hearth::scheduler
