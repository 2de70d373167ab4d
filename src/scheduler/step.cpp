// Launching tasks on slots and running engine steps (the scheduler thread's work).
#include <fmt/format.h>

#include <algorithm>

#include "base/timer.h"
#include "engine/pooling.h"
#include "sampling/chain_builder.h"
#include "scheduler/scheduler_impl.h"

namespace hearth::scheduler::detail {
namespace {

double seconds(double ms) {
  return ms / 1000.0;
}

double ms_since(int64_t from_us, int64_t to_us) {
  return static_cast<double>(to_us - from_us) / 1000.0;
}

void send_progress(RunningTask& task, int32_t processed) {
  if (!task.params.stream || !task.params.return_progress) return;
  ProgressInfo info;
  info.total = task.n_prompt();
  info.cache = task.n_past;
  info.processed = processed;
  info.time_ms = (now_us() - task.t_start_us) / 1000;
  task.sink->on_progress(task.index, info);
}

}  // namespace

std::unique_ptr<RunningTask> SchedulerImpl::make_task(const Pending& p, int32_t copy,
                                                      int32_t parent_slot) {
  auto t = std::make_unique<RunningTask>();
  t->id_task = next_task_id_++;
  t->index = p.req.index + copy;
  t->is_child = copy > 0;
  t->parent_slot = parent_slot;
  t->kind = p.req.kind;
  t->params = p.req.params;
  t->embd_normalize = p.req.embd_normalize;
  t->sink = p.req.sink;
  t->echo = p.req.echo;
  t->prompt = p.prompt;
  t->t_queued_us = p.t_queued_us;
  t->t_start_us = now_us();
  if (t->kind != TaskKind::kCompletion) return t;  // nothing is sampled
  SamplingSettings s = t->params.sampling;
  // Copy j of an explicit seed s samples with s + j; random seeds stay random per copy.
  if (s.seed != kRandomSeed) s.seed += static_cast<uint32_t>(copy);
  t->seed_echo = s.seed;
  if (auto sampler = make_sampler(s, t->params.grammar.config, t->params.reasoning);
      sampler.is_ok()) {
    t->sampler = std::move(sampler.value());
    // The prompt is the samplers' history too (penalties and DRY count it).
    for (int32_t tok : *t->prompt) (void)t->sampler.accept(tok, false);
  } else {
    t->init_error = "Failed to initialize samplers: " + sampler.status().message();
  }
  t->funnel = StopFunnel(t->params.stop);
  return t;
}

Result<sampling::Sampler> SchedulerImpl::make_sampler(const SamplingSettings& settings,
                                                      const sampling::GrammarConfig& grammar,
                                                      const ReasoningSettings& reasoning) {
  if (!vocab_) vocab_ = std::make_unique<TokenizerVocab>(*tok_);
  auto chain = sampling::make_chain(settings, vocab_.get());
  if (!chain.is_ok()) return chain.status();
  std::unique_ptr<sampling::GrammarSampler> constraint;
  if (grammar.grammar) {
    if (!token_table_) token_table_ = make_token_table(*tok_);
    auto made = sampling::GrammarSampler::create(grammar, token_table_, *vocab_);
    if (!made.is_ok()) return made.status();
    constraint = std::move(made.value());
  }
  std::unique_ptr<sampling::ReasoningBudget> budget;
  if (reasoning.active()) {
    sampling::ReasoningBudgetConfig config;
    config.start_tag = reasoning.start_tag;
    config.end_tag = reasoning.end_tag;
    config.budget = reasoning.budget;
    config.forced = tok_->tokenize(reasoning.message + reasoning.end_tag, false, true);
    config.prefix = reasoning.prefix;
    config.end_now = reasoning.end_now;
    budget = std::make_unique<sampling::ReasoningBudget>(std::move(config), *vocab_);
  }
  return sampling::Sampler(std::move(chain.value()), std::move(constraint), std::move(budget));
}

void SchedulerImpl::launch(const Admission& adm, Pending&& p) {
  Slot& parent = slots_[static_cast<size_t>(adm.slot)];
  std::vector<Slot*> copies{&parent};
  for (int32_t c : adm.child_slots) copies.push_back(&slots_[static_cast<size_t>(c)]);
  for (size_t j = 0; j < copies.size(); ++j) {
    Slot& slot = *copies[j];
    slot.task = make_task(p, static_cast<int32_t>(j), adm.slot);
    slot.has_task = true;
    slot.last_id_task = slot.task->id_task;
    slot.echo = p.req.echo;
    slot.started = next_start_++;
  }
  // Sampler construction failed (the server validates first, so this is rare): every copy
  // ends with the error.
  for (Slot* slot : copies) {
    if (slot->task->init_error.empty()) continue;
    const TaskError err{TaskError::Kind::kInvalidRequest, slot->task->init_error};
    for (Slot* c : copies) {
      c->task->sink->on_error(c->task->index, err);
      release(*c);
    }
    return;
  }
  if (p.prompt->empty() && parent.task->kind != TaskKind::kCompletion) {
    parent.task->sink->on_error(
        parent.task->index, {TaskError::Kind::kInvalidRequest, "Input content cannot be empty"});
    release(parent);
    return;
  }
  if (p.prompt->empty()) {
    // Nothing to evaluate: every copy ends at once with stop_type none.
    for (Slot* slot : copies) {
      slot->task->sink->on_final(
          make_empty_final(*slot->task, slot->id, static_cast<int32_t>(slot->cached.size())));
      release(*slot);
    }
    if (config_.cache_idle_slots) cache_idle_slots();
    return;
  }
  // A state from the host cache may replace the slot's own (a longer reusable prefix).
  // (truncate() keeps n_past: both came from reusable_prefix() with the KV's own limit.)
  const int32_t n_past = ctx_->kv_cache().truncate(
      parent.id, adm.update_cache ? use_prompt_cache(parent, p) : adm.n_past);
  parent.cached.resize(static_cast<size_t>(n_past));
  parent.task->n_past = n_past;
  parent.task->sink->on_start(parent.task->index);
  send_progress(*parent.task, n_past);
  // As the reference, once a task is launched: idle slots go to the host cache.
  if (config_.cache_idle_slots) cache_idle_slots();
}

void SchedulerImpl::collect(const StepPlan& plan, std::vector<StepToken>& tokens) {
  for (Slot& s : slots_) {
    const auto i = static_cast<size_t>(s.id);
    if (!s.task) continue;
    if (plan.decode[i] && s.task->prompt_done && s.task->has_next_token) {
      tokens.push_back({s.id, s.task->pending, true, false});
      append_draft(s, tokens);
    }
    const int32_t n = plan.prompt_tokens[i];
    if (n <= 0 || s.task->prompt_done || s.task->is_child) continue;
    const auto from = static_cast<int32_t>(s.cached.size());
    const int32_t end = std::min(from + n, s.task->n_prompt());
    // Embedding tasks read final hidden states, never logits.
    const bool sampled = s.task->kind == TaskKind::kCompletion;
    for (int32_t k = from; k < end; ++k)
      tokens.push_back({s.id, (*s.task->prompt)[static_cast<size_t>(k)],
                        sampled && k + 1 == s.task->n_prompt(), true});
  }
}

void SchedulerImpl::execute(const StepPlan& plan) {
  std::vector<StepToken> tokens;
  prepare_drafts(plan);
  // The step's cost (forward calls, sampling, streaming) against its rows, for the draft
  // budget; drafting itself is not part of it.
  const int64_t t_start = now_us();
  collect(plan, tokens);
  if (tokens.empty()) return;
  {
    std::lock_guard<std::mutex> lock(mu_);
    ++metrics_.n_decode_total;
    metrics_.n_busy_slots_total += static_cast<uint64_t>(busy_slots());
  }
  const auto ub = static_cast<size_t>(config_.n_ubatch);
  for (size_t at = 0, end = 0; at < tokens.size(); at = end) {
    // A slot's draft stays in the forward call of its pending token (drafts are < ub).
    end = std::min(at + ub, tokens.size());
    while (end < tokens.size() && end > at + 1 && tokens[end].draft) --end;
    const std::span<const StepToken> chunk(tokens.data() + at, end - at);
    // A slot that failed or was finished earlier in this step drops its remaining tokens.
    std::vector<StepToken> live;
    for (const StepToken& t : chunk)
      if (slots_[static_cast<size_t>(t.slot)].task) live.push_back(t);
    if (live.empty()) continue;
    if (forward(live)) after_forward(live);
  }
  const auto rows = static_cast<int32_t>(tokens.size());
  step_cost_.observe(rows, config_.spec.step_seconds
                               ? config_.spec.step_seconds(rows)
                               : static_cast<double>(now_us() - t_start) * 1e-6);
}

bool SchedulerImpl::forward(std::vector<StepToken>& chunk) {
  engine::Batch batch;
  std::vector<int32_t> next(slots_.size());
  for (const Slot& s : slots_)
    next[static_cast<size_t>(s.id)] = static_cast<int32_t>(s.cached.size());
  for (const StepToken& t : chunk) {
    const Slot& s = slots_[static_cast<size_t>(t.slot)];
    const int32_t pos = next[static_cast<size_t>(t.slot)]++;
    batch.add(t.token, pos, t.slot, t.logits, wants_hidden(s, pos));
  }
  Status st = ctx_->decode(batch);
  if (st.code() == ErrorCode::kResourceExhausted && evict_idle_slots()) st = ctx_->decode(batch);
  if (st.code() == ErrorCode::kResourceExhausted && drop_drafts(chunk)) return forward(chunk);
  if (st.is_ok()) return true;
  // A shared (unified) KV pool can run out before any slot reaches its context limit.
  const TaskError err{TaskError::Kind::kServer,
                      st.code() == ErrorCode::kResourceExhausted
                          ? std::string("Context size has been exceeded.")
                          : fmt::format("Compute error. ({})", st.message())};
  for (const StepToken& t : chunk) {
    Slot& s = slots_[static_cast<size_t>(t.slot)];
    if (s.task) fail(s, err);
  }
  return false;
}

// Frees the KV blocks idle slots still hold (their prompts stay reusable through the host
// prompt cache when it is on). True when anything was freed.
bool SchedulerImpl::evict_idle_slots() {
  bool freed = false;
  for (Slot& s : slots_) {
    if (s.task || s.cached.empty()) continue;
    ctx_->kv_cache().clear(s.id);
    s.cached.clear();
    freed = true;
  }
  if (freed) publish();
  return freed;
}

void SchedulerImpl::after_forward(std::span<const StepToken> chunk) {
  std::vector<bool> had_prompt(slots_.size(), false);
  for (const StepToken& t : chunk) {
    if (t.draft) continue;  // cached once accepted (verify_draft)
    Slot& s = slots_[static_cast<size_t>(t.slot)];
    s.cached.push_back(t.token);
    if (t.prompt) {
      ++s.task->n_prompt_decoded;
      had_prompt[static_cast<size_t>(t.slot)] = true;
    }
  }
  uint64_t longest = 0;
  for (const Slot& s : slots_) longest = std::max<uint64_t>(longest, s.cached.size());
  {
    std::lock_guard<std::mutex> lock(mu_);
    metrics_.n_tokens_max = std::max(metrics_.n_tokens_max, longest);
  }
  for (Slot& s : slots_) {
    if (had_prompt[static_cast<size_t>(s.id)])
      send_progress(*s.task, static_cast<int32_t>(s.cached.size()));
  }
  gather_embeddings(chunk);
  for (size_t i = 0; i < chunk.size(); ++i) {
    const StepToken& t = chunk[i];
    Slot& s = slots_[static_cast<size_t>(t.slot)];
    if (t.draft || !t.logits) continue;
    if (!t.prompt && i + 1 < chunk.size() && chunk[i + 1].draft) {
      verify_draft(s, i);
      continue;
    }
    if (!s.task) continue;
    const std::span<const float> logits = ctx_->logits(static_cast<int32_t>(i));
    if (t.prompt) {
      prompt_finished(s, logits);
    } else {
      sample_into(s, logits);
    }
  }
}

// Whether the engine computes a token's final hidden state: the rows of embedding inputs
// that the pooling reads (an input starts at position 0: embedding tasks reuse no cache).
bool SchedulerImpl::wants_hidden(const Slot& slot, int32_t pos) const {
  if (!slot.task || slot.task->kind == TaskKind::kCompletion) return false;
  switch (engine::pooled_rows(model_->hparams(), config_.pooling)) {
    case engine::PooledRows::kFirst:
      return pos == 0;
    case engine::PooledRows::kLast:
      return pos == slot.task->n_prompt() - 1;
    default:
      return true;
  }
}

// Only the rows the pooling reads are kept: every row for none and mean, else the first (cls,
// rank) or the latest (last, Qwen3's rank), so a long last-pooled input holds one row.
void SchedulerImpl::keep_row(std::vector<float>& rows, std::span<const float> row) const {
  const engine::PooledRows read = engine::pooled_rows(model_->hparams(), config_.pooling);
  if (read == engine::PooledRows::kFirst && !rows.empty()) return;
  if (read == engine::PooledRows::kLast) rows.clear();
  rows.insert(rows.end(), row.begin(), row.end());
}

// Appends the final hidden states of embedding tasks' tokens in this chunk to their rows;
// a task whose whole input is in ends with its pooled result.
void SchedulerImpl::gather_embeddings(std::span<const StepToken> chunk) {
  std::vector<Slot*> done;
  for (size_t i = 0; i < chunk.size(); ++i) {
    Slot& s = slots_[static_cast<size_t>(chunk[i].slot)];
    if (!s.task || s.task->kind == TaskKind::kCompletion) continue;
    const std::span<const float> row = ctx_->embedding(static_cast<int32_t>(i));
    if (!row.empty()) keep_row(s.task->rows, row);  // empty: a row the pooling does not read
    if (static_cast<int32_t>(s.cached.size()) == s.task->n_prompt() &&
        std::find(done.begin(), done.end(), &s) == done.end())
      done.push_back(&s);
  }
  for (Slot* s : done) finish_embedding(*s);
}

void SchedulerImpl::account_prompt(const RunningTask& t) {
  std::lock_guard<std::mutex> lock(mu_);
  const double ms = static_cast<double>(now_us() - t.t_start_us) / 1000.0;
  metrics_.prompt_tokens_total += static_cast<uint64_t>(t.n_prompt_decoded);
  metrics_.prompt_tokens_cached_total += static_cast<uint64_t>(t.n_past);
  metrics_.prompt_seconds_total += seconds(ms);
  metrics_.window_prompt_tokens += static_cast<uint64_t>(t.n_prompt_decoded);
  metrics_.window_prompt_seconds += seconds(ms);
}

void SchedulerImpl::finish_embedding(Slot& slot) {
  RunningTask& t = *slot.task;
  t.prompt_done = true;
  account_prompt(t);
  EmbeddingResult result;
  result.index = t.index;
  result.n_tokens = t.n_prompt();
  const int64_t E = model_->hparams().n_embd;
  if (config_.pooling == engine::PoolingType::kNone) {
    for (int32_t k = 0; k < t.n_prompt(); ++k)
      result.vectors.emplace_back(t.rows.begin() + k * E, t.rows.begin() + (k + 1) * E);
  } else {
    std::vector<float> pooled =
        ctx_->pool(config_.pooling, t.rows.data(), static_cast<int64_t>(t.rows.size()) / E);
    if (config_.pooling == engine::PoolingType::kRank) {
      result.score = pooled.empty() ? -1e6f : pooled[0];
    } else {
      engine::normalize_embedding(pooled.data(), pooled.data(), static_cast<int64_t>(pooled.size()),
                                  t.embd_normalize);
    }
    result.vectors.push_back(std::move(pooled));
  }
  const std::shared_ptr<TaskSink> sink = t.sink;
  // An embedding input is not worth keeping: the slot's KV rows are freed at once.
  ctx_->kv_cache().clear(slot.id);
  slot.cached.clear();
  release(slot);
  publish();
  sink->on_embedding(std::move(result));
}

// The parent's prompt is in the cache: account for it, hand the prompt KV to the waiting
// children (shared blocks, no copy) and sample every copy's first token from these logits.
void SchedulerImpl::prompt_finished(Slot& slot, std::span<const float> logits) {
  RunningTask& t = *slot.task;
  t.prompt_done = true;
  account_prompt(t);
  std::vector<Slot*> children;
  for (Slot& c : slots_) {
    if (c.waiting() && c.task->parent_slot == slot.id && c.task->sink == t.sink) {
      const Status st = ctx_->kv_cache().share_prefix(slot.id, c.id, t.n_prompt());
      if (!st.is_ok()) {
        fail(c, {TaskError::Kind::kServer, st.message()});
        continue;
      }
      c.cached = slot.cached;
      c.task->prompt_done = true;
      c.task->n_past = t.n_past;
      c.task->n_prompt_decoded = t.n_prompt_decoded;
      c.task->t_start_us = t.t_start_us;
      children.push_back(&c);
    }
  }
  begin_drafting(slot);
  for (Slot* c : children) begin_drafting(*c);
  sample_into(slot, logits);
  for (Slot* c : children) sample_into(*c, logits);
}

void SchedulerImpl::sample_into(Slot& slot, std::span<const float> logits) {
  RunningTask& t = *slot.task;
  const TokenContext tc{*tok_, config_.special, config_.n_ctx_slot};
  const int64_t previous_token_us = t.t_last_us;
  if (!sample_token(t, logits, tc, static_cast<int32_t>(slot.cached.size()))) {
    release(slot);
    return;
  }
  if (t.n_decoded == 1) {
    unpublished_ttft_.observe(seconds(ms_since(t.t_queued_us, t.t_last_us)));
  } else {
    unpublished_tpot_.observe(seconds(ms_since(previous_token_us, t.t_last_us)));
  }
  if (!t.has_next_token) finish(slot);
}

void SchedulerImpl::finish(Slot& slot) {
  RunningTask& t = *slot.task;
  FinalResult result = make_final(t, slot.id, static_cast<int32_t>(slot.cached.size()), *tok_);
  const std::shared_ptr<TaskSink> sink = t.sink;
  // Released and published first, so a client acting on this result finds the slot, the
  // /slots snapshot and the metrics already updated.
  release(slot);
  publish();
  sink->on_final(std::move(result));
}

void SchedulerImpl::fail(Slot& slot, const TaskError& error) {
  slot.task->sink->on_error(slot.task->index, error);
  // The cache may hold a partial step: start the slot afresh.
  ctx_->kv_cache().clear(slot.id);
  slot.cached.clear();
  release(slot);
}

void SchedulerImpl::release(Slot& slot) {
  RunningTask& t = *slot.task;
  {
    std::lock_guard<std::mutex> lock(mu_);
    const double ms = t.timings().predicted_ms;
    metrics_.tokens_predicted_total += static_cast<uint64_t>(t.n_decoded);
    metrics_.tokens_predicted_seconds_total += seconds(ms);
    // The throughput gauge counts decode steps: the first token comes from the prompt pass.
    metrics_.window_predicted_tokens += static_cast<uint64_t>(std::max(t.n_decoded - 1, 0));
    metrics_.window_predicted_seconds += seconds(ms);
    account_drafts(t);
  }
  if (t.is_child) {
    // Children never keep their cache (llama-server clears it on release).
    ctx_->kv_cache().clear(slot.id);
    slot.cached.clear();
  }
  // Children still waiting for this parent's prompt cannot run any more.
  if (!t.prompt_done && !t.is_child) {
    for (Slot& c : slots_) {
      if (&c != &slot && c.waiting() && c.task->parent_slot == slot.id && c.task->sink == t.sink) {
        if (!c.task->sink->cancelled())
          c.task->sink->on_error(c.task->index,
                                 {TaskError::Kind::kServer, "the shared prompt was not evaluated"});
        c.task.reset();
        c.t_last_used = now_us();
      }
    }
  }
  slot.task.reset();
  slot.t_last_used = now_us();
}

void SchedulerImpl::drop_cancelled() {
  bool released = false;
  for (Slot& s : slots_) {
    if (s.task && s.task->sink->cancelled()) {
      release(s);
      released = true;
    }
  }
  // The scheduler may go to sleep next (no work left): /slots must show the slot free now.
  if (released) publish();
}

void SchedulerImpl::shutdown_tasks() {
  const TaskError err{TaskError::Kind::kUnavailable, "the server is shutting down"};
  for (Slot& s : slots_) {
    if (!s.task) continue;
    s.task->sink->on_error(s.task->index, err);
    release(s);
  }
  std::deque<Pending> queue;
  {
    std::lock_guard<std::mutex> lock(mu_);
    queue.swap(queue_);
    metrics_.requests_deferred = 0;
  }
  for (Pending& p : queue) {
    for (int32_t j = 0; j < p.req.n_cmpl; ++j) p.req.sink->on_error(p.req.index + j, err);
  }
  fail_actions();
  publish();
}

void SchedulerImpl::publish() {
  std::vector<SlotInfo> out;
  for (const Slot& s : slots_) {
    SlotInfo info;
    info.id = s.id;
    info.n_ctx = config_.n_ctx_slot;
    info.speculative = config_.spec.enabled();
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
  const engine::KvCache& kv = ctx_->kv_cache();
  std::lock_guard<std::mutex> lock(mu_);
  snapshot_ = std::move(out);
  metrics_.requests_processing = busy_slots();
  metrics_.kv_blocks_used = kv.used_blocks();
  metrics_.kv_blocks_total = kv.n_blocks();
  metrics_.time_to_first_token.absorb(unpublished_ttft_);
  metrics_.time_per_output_token.absorb(unpublished_tpot_);
}

}  // namespace hearth::scheduler::detail
