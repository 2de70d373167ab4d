// What the server hands the scheduler (a tokenized prompt plus generation settings) and
// what comes back (progress, per-token partial results, one final result or an error),
// in llama-server's terms. Everything here is plain data: the server turns it into JSON.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "sampling/grammar_sampler.h"
#include "sampling/params.h"

namespace hearth::scheduler {

inline constexpr uint32_t kRandomSeed = sampling::kRandomSeed;

// llama-server's sampling parameters (every sampler of the chain, seed, merged logit bias).
using SamplingSettings = sampling::SamplerParams;

// A lazy-grammar trigger as the request gave it (echoed in generation_settings).
struct GrammarTrigger {
  int32_t type = 0;  // 0 token, 1 word, 2 pattern, 3 full pattern
  std::string value;
  int32_t token = -1;  // type 0 only
};

// The grammar constraint of a task: the compiled grammar and its lazy triggers, plus what
// generation_settings echoes.
struct GrammarSettings {
  std::string text;  // the GBNF (a converted JSON schema included); "" when none
  sampling::GrammarConfig config;
  std::vector<GrammarTrigger> triggers;
  std::vector<int32_t> preserved_tokens;  // sorted; rendered as text when generated
};

// The reasoning budget of a task (sampling.md §7.1): active when both tags are known.
struct ReasoningSettings {
  std::string start_tag;  // e.g. "<think>"
  std::string end_tag;    // e.g. "</think>"
  int32_t budget = -1;    // tokens inside the thinking block; -1 unlimited
  std::string message;    // forced before the end tag when the budget runs out
  std::string prefix;     // the generation prompt, replayed to place the block
  // reasoning_control: the control route sets it to end the block now. Null otherwise.
  std::shared_ptr<std::atomic<bool>> end_now;
  bool active() const { return !start_tag.empty() && !end_tag.empty(); }
};

// Per-task generation settings (llama-server's request fields after defaults).
struct TaskParams {
  int32_t n_predict = -1;  // -1: no budget; 0 behaves as 1 (the reference generates one token)
  std::vector<std::string> stop;  // stop strings, searched in the generated text only
  int32_t n_indent = 0;           // 0: off
  int64_t t_max_predict_ms = -1;  // <= 0: off
  bool cache_prompt = true;       // reuse the common prefix of the slot's cache
  int32_t n_probs = 0;            // > 0: top-N probabilities per generated token
  bool post_sampling_probs = false;
  bool stream = false;           // deliver on_partial() per token
  bool return_progress = false;  // deliver on_progress() per prompt batch (stream only)
  SamplingSettings sampling;
  GrammarSettings grammar;
  ReasoningSettings reasoning;
};

// What a task computes: text (sampled tokens), or one forward pass over the prompt whose
// final hidden states become an embedding or a rerank score (server started with
// --embedding; SchedulerConfig::pooling says how the rows are pooled).
enum class TaskKind { kCompletion, kEmbedding, kRerank };

enum class StopType { kNone, kEos, kLimit, kWord };
const char* stop_type_name(StopType type);  // "none", "eos", "limit", "word"

// Raw per-slot timing counters; the server derives the per-token and per-second values.
struct Timings {
  int32_t cache_n = 0;   // prompt tokens reused from the cache
  int32_t prompt_n = 0;  // prompt tokens decoded
  double prompt_ms = 0.0;
  int32_t predicted_n = 0;
  double predicted_ms = 0.0;
  int32_t draft_n = 0;           // tokens drafted for the request (speculative decoding)
  int32_t draft_n_accepted = 0;  // of those, accepted
};

struct TokenCandidate {
  int32_t id = 0;
  float p = 0.0f;  // probability in [0, 1] (pre-sampling: softmax of the raw logits)
};

// One completion_probabilities entry.
struct TokenProbs {
  int32_t id = 0;    // the sampled token
  float p = 0.0f;    // its probability in the same distribution as `top`
  std::string text;  // text emitted at this step (after stop-string hold-back), raw bytes
  std::vector<TokenCandidate> top;  // pre: exactly min(n_probs, n_vocab) by logit; post: <= n_probs
};

struct ProgressInfo {
  int32_t total = 0;      // prompt tokens of the task
  int32_t cache = 0;      // reused from the cache
  int32_t processed = 0;  // now in the slot's cache
  int64_t time_ms = 0;    // since the slot started this prompt
  Timings timings;        // the task's timings so far (sent with timings_per_token)
};

struct PartialResult {
  int32_t index = 0;
  std::string content;  // text released at this step (raw bytes; "" when withheld)
  int32_t token = 0;    // the token generated at this step
  int32_t n_predicted = 0;
  int32_t n_evaluated = 0;
  Timings timings;                  // running values
  bool after_stop = false;          // emitted after the task already stopped
  std::optional<TokenProbs> probs;  // when n_probs > 0
};

struct FinalResult {
  int32_t index = 0;
  int32_t id_slot = -1;
  int32_t id_task = 0;
  std::string content;             // raw bytes, stop string and what follows removed
  std::vector<int32_t> generated;  // every generated token id (EOG included)
  std::vector<int32_t> prompt;     // the prompt tokens as evaluated
  int32_t n_predicted = 0;         // tokens_predicted
  int32_t n_evaluated = 0;         // tokens_evaluated
  int32_t n_cached = 0;            // tokens_cached (slot occupancy after the task)
  bool has_new_line = false;
  bool truncated = false;
  StopType stop_type = StopType::kNone;
  std::string stopping_word;
  Timings timings;
  uint32_t seed = kRandomSeed;    // the seed this copy echoes (s + j for n_cmpl children)
  std::vector<TokenProbs> probs;  // when n_probs > 0 (trimmed after a stop string)
};

// The answer of an embedding or rerank task.
struct EmbeddingResult {
  int32_t index = 0;
  int32_t n_tokens = 0;  // prompt tokens evaluated
  // Pooling none: one unnormalized vector per prompt token [n_tokens][n_embd]. Mean, cls and
  // last: one vector [n_embd], normalized per embd_normalize. Rank: the rank head's outputs.
  std::vector<std::vector<float>> vectors;
  float score = -1e6f;  // rerank tasks: the rank head's first output
};

// Errors a task can end with; the server maps `kind` to HTTP status and envelope.
struct TaskError {
  enum class Kind { kInvalidRequest, kExceedContext, kServer, kUnavailable };
  Kind kind = Kind::kServer;
  std::string message;
  int32_t n_prompt_tokens = 0;  // kExceedContext only
  int32_t n_ctx = 0;            // kExceedContext only
};

// Receives the events of one request (all its prompts and n_cmpl copies). Called on the
// scheduler thread: implementations must only queue the event and return quickly.
class TaskSink {
 public:
  virtual ~TaskSink() = default;
  // The slot started processing the prompt of result `index` (the stream's begin marker).
  virtual void on_start(int32_t /*index*/) {}
  virtual void on_progress(int32_t /*index*/, const ProgressInfo& /*progress*/) {}
  virtual void on_partial(PartialResult&& /*partial*/) {}
  virtual void on_final(FinalResult&& result) = 0;
  // Embedding and rerank tasks end here instead of on_final.
  virtual void on_embedding(EmbeddingResult&& /*result*/) {}
  virtual void on_error(int32_t index, const TaskError& error) = 0;
  // True while the request's client has not taken what was already produced (a streamed
  // answer waiting for a slow reader): the scheduler generates nothing more for it until it
  // catches up. Called on the scheduler thread; must be cheap.
  virtual bool backlogged() const { return false; }
  // True once the client went away: the scheduler drops the task within one step.
  bool cancelled() const { return cancelled_.load(std::memory_order_acquire); }
  void cancel() { cancelled_.store(true, std::memory_order_release); }

 private:
  std::atomic<bool> cancelled_{false};
};

// A run of prompt positions that an encoded image or audio clip fills instead of token
// embeddings (the reference's media chunk). prompt[begin, begin + n_tokens) all hold
// `placeholder`, a negative id the scheduler gives each distinct content (never reused), so
// the prefix reuse and the prompt cache compare media by content like tokens.
struct MediaChunk {
  int32_t begin = 0;         // first prompt index
  int32_t n_tokens = 0;      // positions it fills (n_tokens rows of embd)
  int32_t placeholder = -1;  // < 0
  // Its rows attend to the whole chunk, not only to what precedes them (gemma3's images,
  // as the reference decodes them with causal attention off). Such a chunk is evaluated in
  // one step.
  bool non_causal = false;
  // M-RoPE text models (qwen2vl, qwen3vl): the rows form a grid_nx x grid_ny grid in raster
  // order and take 2-D rope positions (the reference's mtmd_image_tokens_get_decoder_pos);
  // the chunk then advances the positions after it by max(grid_nx, grid_ny), not n_tokens.
  // 0: the rows take ordinary 1-D positions.
  int32_t grid_nx = 0;
  int32_t grid_ny = 0;
  // Positions the chunk advances the rope position by (the reference's
  // mtmd_input_chunk_get_n_pos).
  int32_t n_pos() const { return grid_nx > 0 ? (grid_nx > grid_ny ? grid_nx : grid_ny) : n_tokens; }
  // [n_tokens][row width]: the text model's n_embd, or for deepstack models (qwen3vl)
  // n_embd * (1 + deepstack layers), the main embedding first.
  std::shared_ptr<const std::vector<float>> embd;
};

// Prompt ids below 0 are media placeholders: never looked up in the vocabulary, never
// sampled, drafted or detokenized.
inline bool is_media_placeholder(int32_t id) {
  return id < 0;
}

// One prompt of a request, generated n_cmpl times (the copies share the prompt pass).
struct TaskRequest {
  std::vector<int32_t> prompt;
  // The media chunks of the prompt, ascending and not overlapping; empty for text.
  std::vector<MediaChunk> media;
  TaskKind kind = TaskKind::kCompletion;
  TaskParams params;       // completion tasks
  int embd_normalize = 2;  // embedding tasks with mean, cls or last pooling
  int32_t id_slot = -1;    // >= 0: pin the parent to slot id_slot % n_slots; < -1: LRU only
  int32_t n_cmpl = 1;      // 1 <= n_cmpl <= n_slots (checked by the server)
  int32_t index = 0;       // result index of the parent; copy j reports index + j
  std::shared_ptr<TaskSink> sink;
  // Opaque settings echo kept with the slot for GET /slots (the server's own type).
  std::shared_ptr<const void> echo;
};

}  // namespace hearth::scheduler
