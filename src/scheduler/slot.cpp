#include "scheduler/slot.h"

#include <algorithm>
#include <cmath>
#include <numeric>

#include "base/timer.h"

namespace hearth::scheduler {
namespace {

double ms_between(int64_t from_us, int64_t to_us) {
  return to_us > from_us ? static_cast<double>(to_us - from_us) / 1000.0 : 0.0;
}

// Pre-sampling view: softmax over the raw logits (no bias, no filters), the top entries
// by logit with ties in id order, and the sampled token's probability.
TokenProbs pre_sampling_probs(std::span<const float> logits, int32_t token, int32_t n_probs) {
  TokenProbs out;
  out.id = token;
  std::vector<int32_t> ids(logits.size());
  std::iota(ids.begin(), ids.end(), 0);
  const auto before = [&](int32_t a, int32_t b) {
    const float la = logits[static_cast<size_t>(a)], lb = logits[static_cast<size_t>(b)];
    return la > lb || (la == lb && a < b);
  };
  std::sort(ids.begin(), ids.end(), before);
  const float max_l = logits[static_cast<size_t>(ids.front())];
  // Summed in descending order in float, as the reference does.
  float sum = 0.0f;
  for (int32_t id : ids) sum += std::exp(logits[static_cast<size_t>(id)] - max_l);
  const auto prob = [&](int32_t id) {
    return std::exp(logits[static_cast<size_t>(id)] - max_l) / sum;
  };
  out.p = prob(token);
  const size_t n = std::min(static_cast<size_t>(n_probs), ids.size());
  for (size_t i = 0; i < n; ++i) out.top.push_back({ids[i], prob(ids[i])});
  return out;
}

// Post-sampling view: the chain's surviving candidates with their probabilities, cut at
// the first zero; a token missing from the list counts as certain.
TokenProbs post_sampling_probs(const sampling::Candidates& cands, int32_t token, int32_t n_probs) {
  TokenProbs out;
  out.id = token;
  out.p = 1.0f;
  for (const auto& c : cands.entries()) {
    if (c.id == token) {
      out.p = c.p;
      break;
    }
  }
  const size_t n = std::min(static_cast<size_t>(n_probs), cands.size());
  for (size_t i = 0; i < n && cands[i].p != 0.0f; ++i) out.top.push_back({cands[i].id, cands[i].p});
  return out;
}

// n_indent: once a new line was seen, a line that starts with less indentation ends the
// generation and is cut (the reference checks the line after the one it last found).
void check_indent(RunningTask& task) {
  const int32_t want = task.params.n_indent;
  if (!task.has_new_line || want <= 0) return;
  const std::string& text = task.funnel.text();
  if (task.last_nl_pos > 0) {
    size_t pos = task.last_nl_pos;
    int32_t n_indent = 0;
    while (pos < text.size() && (text[pos] == ' ' || text[pos] == '\t')) {
      ++n_indent;
      ++pos;
    }
    if (pos < text.size() && n_indent < want) {
      task.stop = StopType::kLimit;
      task.has_next_token = false;
      task.funnel.cut(pos);
    }
  }
  const size_t nl = task.funnel.text().find('\n', task.last_nl_pos);
  if (nl != std::string::npos) task.last_nl_pos = nl + 1;
}

void send_partial(RunningTask& task, int32_t token, const std::string& text,
                  const TokenProbs* probs) {
  PartialResult p;
  p.index = task.index;
  p.content = text;
  p.token = token;
  p.n_predicted = task.n_decoded;
  p.n_evaluated = task.n_prompt();
  p.timings = task.timings();
  p.after_stop = task.stop != StopType::kNone;
  if (probs) p.probs = *probs;
  task.sink->on_partial(std::move(p));
}

// The stop rules after the text step, in the reference's order.
void apply_limits(RunningTask& task, const std::string& released, bool eog, int32_t kv_len,
                  int32_t n_ctx_slot) {
  if (kv_len + 1 >= n_ctx_slot) {
    task.truncated = true;
    task.stop = StopType::kLimit;
    task.has_next_token = false;
  }
  const int32_t n_predict = task.params.n_predict;
  if (task.n_decoded > 0 && task.has_next_token && n_predict != -1 &&
      n_predict - task.n_decoded <= 0) {
    task.stop = StopType::kLimit;
    task.has_next_token = false;
  }
  check_indent(task);
  if (released.find('\n') != std::string::npos) {
    task.has_new_line = true;
    const int64_t limit = task.params.t_max_predict_ms;
    if (limit > 0 && ms_between(task.t_prompt_us, now_us()) > static_cast<double>(limit)) {
      task.stop = StopType::kLimit;
      task.has_next_token = false;
    }
  }
  if (eog) {
    task.stop = StopType::kEos;
    task.has_next_token = false;
  }
}

}  // namespace

// Laplace's rule: (accepted + 1) / (accepted + rejections + 2), a half before any draft.
double RunningTask::acceptance_rate(DraftSource source) const {
  const auto i = static_cast<size_t>(source);
  return (source_accepted[i] + 1.0) / (source_accepted[i] + source_rejections[i] + 2.0);
}

Timings RunningTask::timings() const {
  Timings t;
  t.cache_n = n_past;
  t.prompt_n = n_prompt_decoded;
  t.prompt_ms = prompt_done ? ms_between(t_start_us, t_prompt_us) : 0.0;
  t.predicted_n = n_decoded;
  t.predicted_ms = n_decoded > 0 ? ms_between(t_prompt_us, t_last_us) : 0.0;
  t.draft_n = n_draft;
  t.draft_n_accepted = n_draft_accepted;
  return t;
}

bool sample_token(RunningTask& task, std::span<const float> logits, const TokenContext& ctx,
                  int32_t kv_len) {
  auto sampled = task.sampler.sample(logits);
  if (!sampled.is_ok() && sampled.status().code() == ErrorCode::kOutOfRange) {
    // The grammar is complete and ignore_eos bans the end of generation that alone could
    // follow: the answer ends as an end of generation would end it.
    task.stop = StopType::kEos;
    task.has_next_token = false;
    return true;
  }
  if (!sampled.is_ok()) {
    // Only the request's own constraints leave nothing to sample (every token banned by
    // logit_bias or ignore_eos, or a grammar that allows none of the rest): its mistake.
    // A grammar too large for the matcher says so itself.
    const ErrorCode code = sampled.status().code();
    const bool constrained = code == ErrorCode::kInvalidArgument;
    task.sink->on_error(
        task.index, code == ErrorCode::kResourceExhausted
                        ? TaskError{TaskError::Kind::kInvalidRequest, sampled.status().message()}
                    : constrained
                        ? TaskError{TaskError::Kind::kInvalidRequest,
                                    "No token can be sampled: the request's logit_bias, ignore_eos "
                                    "and grammar exclude every token"}
                        : TaskError{TaskError::Kind::kServer, sampled.status().message()});
    return false;
  }
  const int32_t token = *sampled;
  if (Status st = task.sampler.accept(token, true); !st.is_ok()) {
    // A limit of the request's own grammar or trigger patterns is its mistake; a refused
    // token is not reachable when the grammar constrained the step (grammar.md §2.3), so
    // that is an internal error of the request.
    task.sink->on_error(task.index,
                        st.code() == ErrorCode::kResourceExhausted
                            ? TaskError{TaskError::Kind::kInvalidRequest, st.message()}
                            : TaskError{TaskError::Kind::kServer, "grammar: " + st.message()});
    return false;
  }
  const int64_t now = now_us();
  if (task.n_decoded == 0) task.t_prompt_us = now;
  task.t_last_us = now;
  ++task.n_decoded;
  task.generated.push_back(token);
  task.pending = token;

  TokenProbs probs;
  const int32_t n_probs = task.params.n_probs;
  if (n_probs > 0) {
    probs = task.params.post_sampling_probs
                ? post_sampling_probs(task.sampler.candidates(), token, n_probs)
                : pre_sampling_probs(logits, token, n_probs);
  }
  const bool eog = ctx.tok.is_eog(token);
  // Preserved tokens (tool-call markers) reach the text even when special tokens are hidden.
  const auto& preserved = task.params.grammar.preserved_tokens;
  const bool special = ctx.special || std::binary_search(preserved.begin(), preserved.end(), token);
  const std::string piece = eog && !special ? "" : ctx.tok.token_to_piece(token, special);
  task.has_next_token = true;
  const FunnelStep step = task.funnel.push(piece, !eog);
  if (!step.incomplete) {
    if (step.matched) {
      task.stop = StopType::kWord;
      task.has_next_token = false;
    }
    probs.text = step.released;
    if (n_probs > 0) task.probs.push_back(probs);
    if (task.params.stream)
      send_partial(task, token, step.released, n_probs > 0 ? &probs : nullptr);
  }
  apply_limits(task, step.released, eog, kv_len, ctx.n_ctx_slot);
  return true;
}

FinalResult make_final(RunningTask& task, int32_t id_slot, int32_t n_cached,
                       const tokenizer::Tokenizer& tok) {
  FinalResult r;
  r.index = task.index;
  r.id_slot = id_slot;
  r.id_task = task.id_task;
  r.content = task.funnel.text();
  r.generated = task.generated;
  r.prompt = *task.prompt;
  r.n_predicted = task.n_decoded;
  r.n_evaluated = task.n_prompt();
  r.n_cached = n_cached;
  r.has_new_line = task.has_new_line;
  r.truncated = task.truncated;
  r.stop_type = task.stop;
  r.stopping_word = task.stop == StopType::kWord ? task.funnel.stopping_word() : "";
  r.timings = task.timings();
  r.seed = task.seed_echo;
  r.probs = std::move(task.probs);
  if (!task.params.stream && task.stop == StopType::kWord) {
    // The reference drops as many entries as the stop string has tokens on its own.
    const size_t k = std::min(r.probs.size(), tok.tokenize(r.stopping_word, false, false).size());
    r.probs.resize(r.probs.size() - k);
  }
  return r;
}

FinalResult make_empty_final(const RunningTask& task, int32_t id_slot, int32_t n_cached) {
  FinalResult r;
  r.index = task.index;
  r.id_slot = id_slot;
  r.id_task = task.id_task;
  r.n_cached = n_cached;
  r.seed = task.seed_echo;
  return r;
}

}  // namespace hearth::scheduler
