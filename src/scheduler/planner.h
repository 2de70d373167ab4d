// The scheduling decision of one engine step as a pure function over plain data: which
// queued tasks start on which slots (llama-server's slot selection), how much of each
// prompt the slot cache already holds, and how many prompt tokens each slot evaluates in
// this step under the -b budget. The Intake plans under its lock and the StepLoop applies
// the plan; tests drive it directly.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "base/serving_defaults.h"
#include "scheduler/task.h"

namespace hearth::scheduler {

struct PlanSlot {
  int32_t id = 0;
  bool busy = false;                // runs a task (or waits for its parent's prompt)
  bool generating = false;          // decodes its last sampled token in this step
  int32_t prompt_left = 0;          // prompt tokens still to evaluate
  int64_t started = 0;              // order in which the busy slots started their prompts
  int64_t t_last_used = -1;         // when the slot was last released; -1 never
  std::span<const int32_t> cached;  // tokens held in the slot's KV cache
  // The shortest non-empty prefix of `cached` its KV rows can be cut back to (a windowed
  // layer released the rows a shorter one would need); 0: any.
  int32_t min_truncation = 0;
  bool whole_prompt = false;  // the prompt left goes into one step together or waits
  // The running prompt's media chunks, and the index of its next prompt token: a step never
  // ends inside a chunk (see plan_step()).
  std::span<const MediaChunk> media{};
  int32_t prompt_at = 0;
};

struct PlanTask {
  std::span<const int32_t> prompt;
  int32_t id_slot = -1;  // >= 0: pinned to id_slot % n_slots; < -1: least recently used only
  int32_t n_cmpl = 1;
  bool cache_prompt = true;
  bool whole_prompt = false;            // the prompt is evaluated in one step (embeddings)
  std::span<const MediaChunk> media{};  // the prompt's media chunks (ascending)
};

struct PlanInput {
  std::vector<PlanSlot> slots;  // in slot-id order
  std::vector<PlanTask> queue;  // FIFO order
  int32_t n_batch = kDefaultBatchSize;
  bool cont_batching = true;
  float similarity = kDefaultSlotSimilarity;  // -sps; 0 turns the similarity choice off
};

struct Admission {
  size_t task = 0;                   // index into PlanInput::queue
  int32_t slot = 0;                  // the parent's slot
  std::vector<int32_t> child_slots;  // copies 1..n_cmpl-1
  int32_t n_past = 0;                // prompt tokens reused from the slot's cache
  // The reference would consult the host prompt cache for this slot: it was picked as the
  // least recently used one, or by similarity while keeping under half of its cache. Pinned
  // slots never are.
  bool update_cache = false;
};

struct StepPlan {
  std::vector<Admission> admitted;
  std::vector<int32_t> prompt_tokens;  // per slot: prompt tokens evaluated in this step
  std::vector<bool> decode;            // per slot: decodes one generated token
  int32_t n_tokens = 0;                // total tokens of the step
};

// Length of the common prefix of two token lists.
size_t common_prefix(std::span<const int32_t> a, std::span<const int32_t> b);

// `n` cut back to the start of the media chunk it would end inside (begin < n < end), else
// `n`: a prompt prefix that keeps media chunks whole.
int32_t media_boundary(std::span<const MediaChunk> media, int32_t n);

// Slot for a task among the free slots (not busy, not in `taken`): the pinned one (-1 when
// it is busy), else the free slot whose cache shares the largest fraction of the prompt above
// `similarity` (the first such slot on ties), else the least recently used one (the last
// such slot on ties, as llama-server's `<=` scan). -1 when none is free.
int32_t select_slot(const PlanInput& in, const PlanTask& task, const std::vector<bool>& taken);

// Prompt tokens the slot's cache can keep for `task`: the common prefix, leaving at least
// one prompt token to evaluate so the step yields logits, and never ending inside one of the
// prompt's media chunks (cut back to the chunk's start: its rows are evaluated together);
// 0 without cache_prompt, and 0 when that prefix is shorter than `min_truncation` (the KV
// rows it needs are gone).
int32_t reusable_prefix(std::span<const int32_t> cached, const PlanTask& task,
                        int32_t min_truncation = 0);

// Admits queued tasks in FIFO order (a task that cannot start waits without blocking the
// ones behind it, like the reference's deferred queue), then fills the step: one token per
// generating slot, then prompt chunks in the order the prompts started, up to n_batch (a
// whole-prompt slot that does not fit waits for a later step, as the reference's). With
// cont_batching off, prompts are evaluated only in steps without generated tokens.
// A media chunk is never split across steps: a slot's share ends before a chunk that does
// not fit the room left; a chunk that starts the slot's share and does not fit goes whole
// when the step has no other prompt tokens yet (so a chunk larger than -b takes a step of
// its own, beside the generated tokens, and exceeds -b), else it waits for the next step.
// (The reference splits an image into -b batches; Hearth keeps a chunk's rows together
// so a non-causal chunk's rows can all see each other.)
StepPlan plan_step(const PlanInput& in);

}  // namespace hearth::scheduler
