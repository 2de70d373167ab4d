// One engine step of the step loop: launching the admitted tasks on their slots, collecting
// the step's tokens, the forward calls, and what their logits and hidden states become.
#include <fmt/format.h>

#include <algorithm>

#include "base/timer.h"
#include "scheduler/media_positions.h"
#include "scheduler/step_loop.h"

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
  const int64_t now = now_us();
  info.time_ms = (now - task.t_start_us) / 1000;
  info.timings = task.timings();
  // While the prompt is evaluated its time so far counts, so the updates never go back;
  // before its first batch nothing was evaluated and no time is reported.
  if (!task.prompt_done && task.n_prompt_decoded > 0)
    info.timings.prompt_ms = ms_since(task.t_start_us, now);
  task.sink->on_progress(task.index, info);
}

}  // namespace

void StepLoop::launch(const Admission& adm, Pending&& p) {
  Slot& parent = slots_[adm.slot];
  std::vector<Slot*> copies{&parent};
  for (int32_t c : adm.child_slots) copies.push_back(&slots_[c]);
  for (size_t j = 0; j < copies.size(); ++j)
    slots_.assign(*copies[j], tasks_.make(p, static_cast<int32_t>(j), adm.slot));
  if (ended_at_launch(copies, p)) return;
  // A state from the host cache may replace the slot's own (a longer reusable prefix).
  // (truncate() keeps n_past: both came from reusable_prefix() with the KV's own limit.)
  const int32_t n_past = ctx_.kv_cache().truncate(
      parent.id, adm.update_cache ? cache_.prepare(parent, p) : adm.n_past);
  parent.cached.resize(static_cast<size_t>(n_past));
  parent.task->n_past = n_past;
  parent.task->sink->on_start(parent.task->index);
  send_progress(*parent.task, n_past);
  // As the reference, once a task is launched: idle slots go to the host cache.
  cache_.after_launch(slots_);
}

// The copies of a task that cannot start end at once: true when they did.
bool StepLoop::ended_at_launch(const std::vector<Slot*>& copies, const Pending& p) {
  Slot& parent = *copies.front();
  // Sampler construction failed (the server validates first, so this is rare): every copy
  // ends with the error.
  for (Slot* slot : copies) {
    if (slot->task->init_error.empty()) continue;
    const TaskError err{TaskError::Kind::kInvalidRequest, slot->task->init_error};
    for (Slot* c : copies) {
      c->task->sink->on_error(c->task->index, err);
      slots_.release(*c);
    }
    return true;
  }
  if (p.prompt->empty() && parent.task->kind != TaskKind::kCompletion) {
    parent.task->sink->on_error(
        parent.task->index, {TaskError::Kind::kInvalidRequest, "Input content cannot be empty"});
    slots_.release(parent);
    return true;
  }
  if (!p.prompt->empty()) return false;
  // Nothing to evaluate: every copy ends at once with stop_type none.
  for (Slot* slot : copies) {
    slot->task->sink->on_final(
        make_empty_final(*slot->task, slot->id, static_cast<int32_t>(slot->cached.size())));
    slots_.release(*slot);
  }
  cache_.after_launch(slots_);
  return true;
}

namespace {

// Prompt rows [from, end) of `task` as step tokens; a media position carries its chunk's
// embedding row (and, in a non-causal chunk, the chunk's last position).
void add_prompt_rows(const Slot& s, int32_t from, int32_t end, std::vector<StepToken>& tokens) {
  const RunningTask& t = *s.task;
  // Embedding tasks read final hidden states, never logits.
  const bool sampled = t.kind == TaskKind::kCompletion;
  auto chunk = t.media.begin();
  for (int32_t k = from; k < end; ++k) {
    while (chunk != t.media.end() && k >= chunk->begin + chunk->n_tokens) ++chunk;
    StepToken row{s.id, (*t.prompt)[static_cast<size_t>(k)], sampled && k + 1 == t.n_prompt(),
                  true};
    if (chunk != t.media.end() && k >= chunk->begin) {
      const auto E = chunk->embd->size() / static_cast<size_t>(chunk->n_tokens);
      row.embd = chunk->embd->data() + static_cast<size_t>(k - chunk->begin) * E;
      if (chunk->non_causal) row.visible_end = chunk->begin + chunk->n_tokens - 1;
    }
    tokens.push_back(row);
  }
}

// True when tokens[i - 1] and tokens[i] are rows of one non-causal media chunk, which one
// forward call must hold together (each row sees the whole chunk).
bool inside_chunk(std::span<const StepToken> tokens, size_t i) {
  if (i == 0 || i >= tokens.size()) return false;
  const StepToken& a = tokens[i - 1];
  const StepToken& b = tokens[i];
  return b.visible_end >= 0 && a.slot == b.slot && a.visible_end == b.visible_end && a.prompt &&
         b.prompt;
}

// The end of the forward call starting at tokens[at] that would end at `end`, moved so it
// never splits a non-causal chunk: back to the chunk's start, or past its end when the chunk
// starts the call (such a chunk is at most -ub rows: TaskLimits::check_media).
size_t call_end(std::span<const StepToken> tokens, size_t at, size_t end) {
  if (!inside_chunk(tokens, end)) return end;
  size_t start = end;
  while (start > at && inside_chunk(tokens, start)) --start;
  if (start > at) return start;
  while (inside_chunk(tokens, end)) ++end;
  return end;
}

}  // namespace

void StepLoop::collect(const StepPlan& plan, std::vector<StepToken>& tokens) const {
  for (const Slot& s : slots_) {
    const auto i = static_cast<size_t>(s.id);
    if (!s.task) continue;
    if (plan.decode[i] && s.task->prompt_done && s.task->has_next_token) {
      tokens.push_back({s.id, s.task->pending, true, false});
      for (int32_t token : s.task->draft) tokens.push_back({s.id, token, true, false, true});
    }
    const int32_t n = plan.prompt_tokens[i];
    if (n <= 0 || s.task->prompt_done || s.task->is_child) continue;
    const auto from = static_cast<int32_t>(s.cached.size());
    // The plan kept media chunks whole from where it expected the prompt to start; the host
    // cache may have moved that start, so the end is kept off a chunk's inside here too.
    int32_t end = media_boundary(s.task->media, std::min(from + n, s.task->n_prompt()));
    if (end <= from) end = std::min(s.task->n_prompt(), from + n);
    for (const MediaChunk& c : s.task->media)
      if (c.begin <= from && from < c.begin + c.n_tokens) end = std::max(end, c.begin + c.n_tokens);
    add_prompt_rows(s, from, end, tokens);
  }
}

void StepLoop::execute(const StepPlan& plan) {
  std::vector<StepToken> tokens;
  speculator_.prepare(plan, slots_);
  // The step's cost (forward calls, sampling, streaming) against its rows, for the draft
  // budget; drafting itself is not part of it.
  const int64_t t_start = now_us();
  collect(plan, tokens);
  if (tokens.empty()) return;
  board_.count_decode(slots_.busy());
  const auto ub = static_cast<size_t>(config_.n_ubatch);
  for (size_t at = 0, end = 0; at < tokens.size(); at = end) {
    // A slot's draft stays in the forward call of its pending token (drafts are < ub).
    end = std::min(at + ub, tokens.size());
    while (end < tokens.size() && end > at + 1 && tokens[end].draft) --end;
    end = call_end(tokens, at, end);
    const std::span<const StepToken> chunk(tokens.data() + at, end - at);
    // A slot that failed or was finished earlier in this step drops its remaining tokens.
    std::vector<StepToken> live;
    for (const StepToken& t : chunk)
      if (slots_[t.slot].task) live.push_back(t);
    if (live.empty()) continue;
    if (forward(live)) after_forward(live);
  }
  const auto rows = static_cast<int32_t>(tokens.size());
  speculator_.observe_step(rows, config_.spec.step_seconds
                                     ? config_.spec.step_seconds(rows)
                                     : static_cast<double>(now_us() - t_start) * 1e-6);
}

bool StepLoop::forward(std::vector<StepToken>& chunk) {
  engine::Batch batch;
  std::vector<int32_t> next(static_cast<size_t>(slots_.size()));
  for (const Slot& s : slots_)
    next[static_cast<size_t>(s.id)] = static_cast<int32_t>(s.cached.size());
  for (const StepToken& t : chunk) {
    const int32_t pos = next[static_cast<size_t>(t.slot)]++;
    const bool hidden = embedder_.wants_hidden(slots_[t.slot], pos);
    if (t.embd != nullptr) {
      batch.add_embd(t.embd, pos, t.slot, t.logits, t.visible_end, hidden);
    } else {
      batch.add(t.token, pos, t.slot, t.logits, hidden);
    }
    // M-RoPE: the row's rope position from its task's chunks (other models use pos).
    if (mrope_)
      batch.set_rope(batch.size() - 1, media_rope_position(slots_[t.slot].task->media, pos));
  }
  Status st = ctx_.decode(batch);
  if (st.code() == ErrorCode::kResourceExhausted && slots_.evict_idle()) {
    slots_.publish();
    st = ctx_.decode(batch);
  }
  if (st.code() == ErrorCode::kResourceExhausted && drop_drafts(chunk)) return forward(chunk);
  if (st.is_ok()) return true;
  // A shared (unified) KV pool can run out before any slot reaches its context limit.
  const TaskError err{TaskError::Kind::kServer,
                      st.code() == ErrorCode::kResourceExhausted
                          ? std::string("Context size has been exceeded.")
                          : fmt::format("Compute error. ({})", st.message())};
  for (const StepToken& t : chunk) {
    Slot& s = slots_[t.slot];
    if (s.task) slots_.fail(s, err);
  }
  return false;
}

// Drafts are optional: when a shared KV pool cannot hold them, the chunk runs without them
// (its slots' drafts count as not made). False when the chunk had none.
bool StepLoop::drop_drafts(std::vector<StepToken>& chunk) {
  bool dropped = false;
  for (const StepToken& t : chunk) {
    Slot& s = slots_[t.slot];
    if (t.draft && s.task) s.task->draft.clear();
    dropped = dropped || t.draft;
  }
  std::erase_if(chunk, [](const StepToken& t) { return t.draft; });
  return dropped;
}

void StepLoop::after_forward(std::span<const StepToken> chunk) {
  std::vector<bool> had_prompt(static_cast<size_t>(slots_.size()), false);
  for (const StepToken& t : chunk) {
    if (t.draft) continue;  // cached once accepted (Speculator::verify)
    Slot& s = slots_[t.slot];
    s.cached.push_back(t.token);
    if (t.prompt) {
      ++s.task->n_prompt_decoded;
      had_prompt[static_cast<size_t>(t.slot)] = true;
    }
  }
  uint64_t longest = 0;
  for (const Slot& s : slots_) longest = std::max<uint64_t>(longest, s.cached.size());
  board_.note_longest_sequence(longest);
  for (Slot& s : slots_) {
    if (had_prompt[static_cast<size_t>(s.id)])
      send_progress(*s.task, static_cast<int32_t>(s.cached.size()));
  }
  for (Slot* s : embedder_.gather(chunk, slots_)) finish_embedding(*s);
  const auto sample = [this](Slot& s, int32_t row) { sample_into(s, ctx_.logits(row)); };
  for (size_t i = 0; i < chunk.size(); ++i) {
    const StepToken& t = chunk[i];
    Slot& s = slots_[t.slot];
    if (t.draft || !t.logits) continue;
    if (!t.prompt && i + 1 < chunk.size() && chunk[i + 1].draft) {
      speculator_.verify(s, i, sample);
      continue;
    }
    if (!s.task) continue;
    const std::span<const float> logits = ctx_.logits(static_cast<int32_t>(i));
    if (t.prompt) {
      prompt_finished(s, logits);
    } else {
      sample_into(s, logits);
    }
  }
}

void StepLoop::finish_embedding(Slot& slot) {
  RunningTask& t = *slot.task;
  t.prompt_done = true;
  board_.account_prompt(t);
  EmbeddingResult result = embedder_.pool(t);
  const std::shared_ptr<TaskSink> sink = t.sink;
  // An embedding input is not worth keeping: the slot's KV rows are freed at once.
  forget(slot, ctx_.kv_cache());
  slots_.release(slot);
  slots_.publish();
  sink->on_embedding(std::move(result));
}

// The parent's prompt is in the cache: account for it, hand the prompt KV to the waiting
// children (shared blocks, no copy) and sample every copy's first token from these logits.
void StepLoop::prompt_finished(Slot& slot, std::span<const float> logits) {
  RunningTask& t = *slot.task;
  t.prompt_done = true;
  board_.account_prompt(t);
  std::vector<Slot*> children;
  for (Slot& c : slots_) {
    if (c.waiting() && c.task->parent_slot == slot.id && c.task->sink == t.sink) {
      const Status st = ctx_.kv_cache().share_prefix(slot.id, c.id, t.n_prompt());
      if (!st.is_ok()) {
        slots_.fail(c, {TaskError::Kind::kServer, st.message()});
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
  speculator_.begin(slot);
  for (Slot* c : children) speculator_.begin(*c);
  sample_into(slot, logits);
  for (Slot* c : children) sample_into(*c, logits);
}

void StepLoop::sample_into(Slot& slot, std::span<const float> logits) {
  RunningTask& t = *slot.task;
  const TokenContext tc{tok_, config_.special, config_.n_ctx_slot};
  const int64_t previous_token_us = t.t_last_us;
  if (!sample_token(t, logits, tc, static_cast<int32_t>(slot.cached.size()))) {
    slots_.release(slot);
    return;
  }
  if (t.n_decoded == 1) {
    board_.observe_first_token(seconds(ms_since(t.t_queued_us, t.t_last_us)));
  } else {
    board_.observe_next_token(seconds(ms_since(previous_token_us, t.t_last_us)));
  }
  if (!t.has_next_token) finish(slot);
}

void StepLoop::finish(Slot& slot) {
  RunningTask& t = *slot.task;
  FinalResult result = make_final(t, slot.id, static_cast<int32_t>(slot.cached.size()), tok_);
  const std::shared_ptr<TaskSink> sink = t.sink;
  // Released and published first, so a client acting on this result finds the slot, the
  // /slots snapshot and the metrics already updated.
  slots_.release(slot);
  slots_.publish();
  sink->on_final(std::move(result));
}

}  // namespace hearth::scheduler::detail
