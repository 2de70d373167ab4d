// One slot's task while it runs: the sampler chain, llama-server's stop rules in their
// order, per-token probabilities and the results sent to the task's sink. The SlotTable
// owns the slots (slot_table.h); this file holds what happens to one sampled token.
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "sampling/sampler.h"
#include "scheduler/stop_funnel.h"
#include "scheduler/task.h"
#include "tokenizer/tokenizer.h"

namespace hearth::scheduler {

struct RunningTask {
  int32_t id_task = 0;
  int32_t index = 0;
  bool is_child = false;
  int32_t parent_slot = -1;  // children: the slot evaluating the shared prompt
  TaskKind kind = TaskKind::kCompletion;
  TaskParams params;
  int embd_normalize = 2;   // embedding tasks
  std::vector<float> rows;  // embedding tasks: final hidden states so far [n][n_embd]
  std::shared_ptr<TaskSink> sink;
  std::shared_ptr<const void> echo;
  std::shared_ptr<const std::vector<int32_t>> prompt;
  std::vector<MediaChunk> media;  // the prompt's media chunks (TaskRequest::media)
  uint32_t seed_echo = kRandomSeed;
  std::string init_error;  // the sampler could not be built: the task fails at launch

  sampling::Sampler sampler;
  StopFunnel funnel;
  int32_t n_past = 0;            // prompt tokens reused from the cache (cache_n)
  int32_t n_prompt_decoded = 0;  // prompt tokens evaluated (prompt_n)
  bool prompt_done = false;
  int32_t n_decoded = 0;
  int32_t pending = -1;  // sampled token not yet decoded
  std::vector<int32_t> generated;
  std::vector<TokenProbs> probs;
  bool has_new_line = false;
  bool truncated = false;
  size_t last_nl_pos = 0;
  StopType stop = StopType::kNone;
  bool has_next_token = true;
  int64_t t_queued_us = 0;  // the request was queued
  int64_t t_start_us = 0;   // the slot started the prompt
  int64_t t_prompt_us = 0;  // prompt evaluated, first token sampled
  int64_t t_last_us = 0;    // latest generated token
  // Speculative decoding: the tokens drafted after `pending` in the running step, and the
  // request's totals (verification steps with a draft; accepted tokens per draft position).
  std::vector<int32_t> draft;
  enum class DraftSource {
    kNone,
    kNgramSimple,
    kNgramMapK,
    kNgramMapK4v,
    kNgramMod,
    kNgramCache,
    kDraftModel
  } draft_source = DraftSource::kNone;
  static constexpr size_t kDraftSources = static_cast<size_t>(DraftSource::kDraftModel) + 1;
  int32_t n_draft = 0;
  int32_t n_draft_accepted = 0;
  int32_t n_draft_steps = 0;
  std::vector<int32_t> n_accepted_per_pos;
  // Adaptive drafting: the longest draft worth verifying now (-1: the source's maximum),
  // drafts in a row with nothing accepted, and steps to skip before drafting again.
  int32_t draft_cap = -1;
  int32_t draft_misses = 0;
  int32_t draft_skip = 0;
  // Per draft source: tokens accepted and drafts cut short by a rejection, whose ratio
  // estimates the per-token acceptance rate the step's draft budget weighs (draft_budget.h).
  std::array<int32_t, kDraftSources> source_accepted{};
  std::array<int32_t, kDraftSources> source_rejections{};
  std::array<int32_t, kDraftSources> source_drafts{};  // drafts verified
  int32_t drafts_starved = 0;                          // drafts in a row the budget gave no rows
  double acceptance_rate(DraftSource source) const;

  int32_t n_prompt() const { return static_cast<int32_t>(prompt->size()); }
  Timings timings() const;
};

struct TokenContext {
  const tokenizer::Tokenizer& tok;
  bool special = false;  // render special tokens (--special)
  int32_t n_ctx_slot = 0;
};

// Samples from `logits` (logit_bias first), records probabilities, runs the stop rules
// (stop string, context full, budget, n_indent, t_max_predict_ms, end of generation) and
// sends the streamed partial. `kv_len` is the slot's cache length when the token is
// sampled. Returns false when sampling failed (the error was sent to the sink).
bool sample_token(RunningTask& task, std::span<const float> logits, const TokenContext& ctx,
                  int32_t kv_len);

// The final result of a stopped task; `n_cached` is the slot's cache length.
FinalResult make_final(RunningTask& task, int32_t id_slot, int32_t n_cached,
                       const tokenizer::Tokenizer& tok);

// A result for an empty prompt: nothing evaluated, stop_type none.
FinalResult make_empty_final(const RunningTask& task, int32_t id_slot, int32_t n_cached);

}  // namespace hearth::scheduler
