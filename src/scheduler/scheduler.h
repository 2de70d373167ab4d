// Continuous batching over llama-server's slots: one engine step carries the next token of
// every generating slot plus prompt chunks of starting slots, under the -b/-ub budget.
// Owns the engine Context; the server talks only to this class.
#pragma once

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "base/serving_defaults.h"
#include "base/status.h"
#include "base/tensor_type.h"
#include "engine/model.h"
#include "engine/pooling.h"
#include "scheduler/ngram_cache.h"
#include "scheduler/ngram_draft.h"
#include "scheduler/ngram_map.h"
#include "scheduler/ngram_mod.h"
#include "scheduler/settings/scheduler_settings.h"
#include "scheduler/task.h"
#include "tokenizer/tokenizer.h"

namespace hearth::media {
class Projector;
class AudioProjector;
}  // namespace hearth::media

namespace hearth::scheduler {

// Pooling of embedding tasks, as the server names and configures it.
using engine::pooling_from_name;
using engine::pooling_name;
using engine::PoolingType;

// Speculative decoding: which draft sources the slots use (--spec-type).
// Sources are tried in the reference's order (ngram-simple, ngram-map-k, ngram-map-k4v,
// ngram-mod, ngram-cache, then the draft model); the first that proposes a draft is used.
// draft-simple: a second, smaller model drafts greedily; one draft context holds a
// sequence per slot, and the slots draft together, one batched call per drafted position.
struct DraftModelParams {
  std::shared_ptr<const engine::Model> model;  // -md, loaded by the caller
  int32_t n_max = 3;                           // --spec-draft-n-max
  int32_t n_min = 0;                           // --spec-draft-n-min: shorter drafts are dropped
  float p_min = 0.0f;  // --spec-draft-p-min: stop below this probability (among the top 10)
  TensorType type_k = TensorType::kF16;  // -ctkd
  TensorType type_v = TensorType::kF16;  // -ctvd
  int32_t n_threads = 0;                 // -td (0: as -t)
  int32_t n_threads_batch = 0;           // -tbd (0: as -td)
};

struct SpeculativeConfig {
  bool ngram_simple = false;  // ngram-simple
  NgramSimpleParams ngram_simple_params;
  bool ngram_map_k = false;  // ngram-map-k
  NgramMapParams ngram_map_k_params;
  bool ngram_map_k4v = false;  // ngram-map-k4v
  NgramMapParams ngram_map_k4v_params;
  bool ngram_mod = false;  // ngram-mod
  NgramModParams ngram_mod_params;
  bool ngram_cache = false;                          // ngram-cache
  std::shared_ptr<const NgramCache> lookup_static;   // -lcs (null: none)
  std::shared_ptr<const NgramCache> lookup_dynamic;  // -lcd (null: none)
  bool draft_simple = false;                         // draft-simple (draft.model set)
  DraftModelParams draft;
  // The seconds a step of `rows` rows takes, in place of the measured times the draft budget
  // learns from. Unset in the server; tests set it, so what gets drafted depends on nothing
  // the machine is doing.
  std::function<double(int32_t rows)> step_seconds;
  bool enabled() const {
    return ngram_simple || ngram_map_k || ngram_map_k4v || ngram_mod || ngram_cache || draft_simple;
  }
  // The longest draft any source proposes (the KV rows a slot may have to drop again).
  int32_t max_draft() const {
    return std::max(
        {ngram_simple ? ngram_simple_params.size_m : 0, ngram_map_k ? ngram_map_k_params.size_m : 0,
         ngram_map_k4v ? ngram_map_k4v_params.size_m : 0, ngram_mod ? ngram_mod_params.n_max : 0,
         ngram_cache ? kNgramCacheDraft : 0, draft_simple ? draft.n_max : 0});
  }
};

// The multimodal projector (-mm) and the bounds the options put on its images.
struct MediaConfig {
  std::shared_ptr<const media::Projector> projector;             // null: no images
  std::shared_ptr<const media::AudioProjector> audio_projector;  // null: no audio
  int32_t image_min_tokens = -1;  // --image-min-tokens (<= 0: the file's value)
  int32_t image_max_tokens = -1;  // --image-max-tokens (<= 0: the file's value)
  // Encoded images kept for reuse, in bytes of embeddings.
  size_t cache_bytes = size_t{256} << 20;
};

// The settings options set as they are (SchedulerSettings, filled by the option parser and
// handed over whole), and what is derived from several options or from the model.
struct SchedulerConfig : SchedulerSettings {
  int32_t n_slots = 4;                  // -np
  int32_t n_ctx_slot = 512;             // context of each slot
  int32_t n_batch = kDefaultBatchSize;  // -b: tokens per engine step
  int32_t n_threads = 0;                // -t (0: hardware)
  int32_t n_threads_batch = 0;          // -tb (0: as -t)
  int32_t max_queued = 1024;            // tasks waiting for a slot before submit() refuses
  bool special = false;                 // --special: render special tokens in content
  bool kv_unified = false;              // -kvu (or -np auto): slots share one KV pool
  SpeculativeConfig spec;
  TensorType type_k = TensorType::kF16;  // -ctk
  TensorType type_v = TensorType::kF16;  // -ctv
  // --embedding: the context keeps final hidden states and embedding/rerank tasks run;
  // `pooling` is resolved (--pooling, else the model's pooling_type, else none).
  bool embeddings = false;
  PoolingType pooling = PoolingType::kNone;
  MediaConfig media;
};

// Outcome of a slot save or restore (POST /slots/:id?action=save|restore).
struct SlotFileResult {
  int32_t n_tokens = 0;  // tokens saved or restored
  uint64_t n_bytes = 0;  // bytes written or read
  double ms = 0.0;       // time taken
};

enum class SlotActionKind { kSave, kRestore, kErase };
using SlotActionDone = std::function<void(Result<SlotFileResult>)>;

// State of one slot for GET /slots.
struct SlotInfo {
  int32_t id = 0;
  int32_t n_ctx = 0;
  bool speculative = false;  // the slot drafts (--spec-type)
  bool is_processing = false;
  bool has_task = false;  // has run a task since start
  int32_t id_task = -1;
  int32_t n_prompt_tokens = 0;  // tokens held in the slot's cache
  int32_t n_prompt_tokens_processed = 0;
  int32_t n_prompt_tokens_cache = 0;
  std::shared_ptr<const void> echo;  // TaskRequest::echo of the current/last task
  bool has_next_token = false;
  bool has_new_line = false;
  int32_t n_remain = -1;
  int32_t n_decoded = 0;
};

// A Prometheus histogram: observations counted in buckets by upper bound.
struct Histogram {
  std::vector<double> bounds;    // upper bounds, ascending; +Inf is implied
  std::vector<uint64_t> counts;  // per bucket, not cumulative: bounds.size() + 1 entries
  double sum = 0.0;
  uint64_t count = 0;

  explicit Histogram(std::vector<double> upper_bounds = {});
  void observe(double value);
  // Adds `other`'s observations (same bounds) to this one and empties `other`.
  void absorb(Histogram& other);
};

// Bucket bounds, in seconds, as vLLM exports its latency histograms.
std::vector<double> time_to_first_token_buckets();
std::vector<double> time_per_output_token_buckets();

// Counters for GET /metrics (llama-server's llamacpp:* set, and Hearth's additions).
struct MetricsSnapshot {
  uint64_t prompt_tokens_total = 0;
  uint64_t prompt_tokens_cached_total = 0;
  double prompt_seconds_total = 0.0;
  uint64_t tokens_predicted_total = 0;
  double tokens_predicted_seconds_total = 0.0;
  uint64_t n_decode_total = 0;
  uint64_t n_tokens_max = 0;
  uint64_t n_busy_slots_total = 0;  // summed over decode calls
  // Windows since the previous scrape (reset by metrics(true)).
  uint64_t window_prompt_tokens = 0;
  double window_prompt_seconds = 0.0;
  uint64_t window_predicted_tokens = 0;
  double window_predicted_seconds = 0.0;
  int32_t requests_processing = 0;
  int32_t requests_deferred = 0;
  // Hearth's additions: KV-cache occupancy, latency histograms (time to first token counts
  // from when the request was queued).
  int64_t kv_blocks_used = 0;
  int64_t kv_blocks_total = 0;
  // Speculative decoding, added when a request ends (as the reference): tokens drafted,
  // drafted tokens accepted, verification steps with a draft, and per draft position the
  // accepted tokens there.
  uint64_t n_draft_tokens = 0;
  uint64_t n_draft_accepted = 0;
  uint64_t n_draft_steps = 0;
  std::vector<uint64_t> n_accepted_per_pos;
  Histogram time_to_first_token{time_to_first_token_buckets()};
  Histogram time_per_output_token{time_per_output_token_buckets()};
};

// The media the multimodal projector takes (GET /props modalities); none without one.
struct MediaSupport {
  bool vision = false;
  bool audio = false;
};

// One piece of an encoded image or audio clip, in prompt order: a text the reference
// tokenizes (special tokens parsed, none added), one vocabulary token it names by its piece
// (mtmd's lookup_token: the first id whose piece, special tokens rendered, equals `text`), or
// a chunk of embeddings (begin left 0: the prompt builder places it).
struct MediaPiece {
  enum class Kind { kText, kToken, kChunk };
  Kind kind = Kind::kText;
  std::string text;  // kText, kToken
  MediaChunk chunk;  // kChunk
};

// An image or audio clip encoded for a prompt: its pieces in order. Most files are one chunk
// between optional texts (gemma3: "<start_of_image>", the chunk, "<end_of_image>"); an image
// cut into tiles with text between them (idefics3) is several chunks, each with a placeholder
// of its own (distinct per content and tile, never reused).
struct EncodedMedia {
  std::vector<MediaPiece> pieces;

  // Appends a text piece (nothing when `text` is empty), a looked-up token, or a chunk.
  void add_text(std::string text) {
    if (!text.empty())
      pieces.push_back({.kind = MediaPiece::Kind::kText, .text = std::move(text), .chunk = {}});
  }
  void add_token(std::string piece) {
    pieces.push_back({.kind = MediaPiece::Kind::kToken, .text = std::move(piece), .chunk = {}});
  }
  void add_chunk(MediaChunk chunk) {
    pieces.push_back({.kind = MediaPiece::Kind::kChunk, .text = {}, .chunk = std::move(chunk)});
  }
};

class Scheduler {
 public:
  static Result<std::unique_ptr<Scheduler>> create(std::shared_ptr<const engine::Model> model,
                                                   std::shared_ptr<const tokenizer::Tokenizer> tok,
                                                   const SchedulerConfig& config);
  virtual ~Scheduler() = default;

  // Starts and stops the engine thread. stop() cancels queued and running tasks (their
  // sinks get an error) and joins.
  virtual void start() = 0;
  virtual void stop() = 0;

  // Queues a task (FIFO). kResourceExhausted when the queue is full, kInvalidArgument for a
  // request the scheduler cannot run (n_cmpl out of range, ...).
  virtual Status submit(TaskRequest request) = 0;
  // Queues several tasks at once (a multi-prompt request), all or none: the engine thread
  // sees them together, so they are admitted in the same step as the reference admits one
  // request's tasks, and slot choice does not depend on thread timing.
  virtual Status submit_all(std::vector<TaskRequest> requests) = 0;

  virtual std::vector<SlotInfo> slots() const = 0;
  virtual bool has_idle_slot() const = 0;
  virtual MetricsSnapshot metrics(bool reset_window) = 0;

  // Slot actions: each waits until the slot is idle and runs between engine steps; `done`
  // runs once with the outcome, on the scheduler thread (or at once when the action cannot
  // be queued), so it must only hand the result on. `id` must be in [0, n_slots).
  // Errors: kInvalidArgument for a slot id out of range; kIo for a file that cannot be
  // written or read; kInvalidArgument for a file that cannot be restored, with the
  // reference's reasons ("No available space in KV cache or invalid slot save file",
  // "Restored prompt does not fit in the slot context", "Invalid tokens in slot save file"),
  // the slot then being empty; kResourceExhausted when the server is stopping. Erase reports
  // the dropped tokens in n_tokens.
  virtual void slot_action(SlotActionKind kind, int32_t id, std::string path,
                           SlotActionDone done) = 0;
  // Blocking forms of slot_action (tests and tools; never on a thread that serves clients).
  Result<SlotFileResult> save_slot(int32_t id, const std::string& path);
  Result<SlotFileResult> restore_slot(int32_t id, const std::string& path);
  Result<int32_t> erase_slot(int32_t id);

  virtual const SchedulerConfig& config() const = 0;
  virtual const tokenizer::Tokenizer& tokenizer() const = 0;

  // Images and audio (a projector given with -mm). encode_media decodes, preprocesses and
  // encodes one file on the calling thread (one encode at a time, on a pool of its own);
  // the same content gets the same placeholder and, while it is remembered, the same
  // embeddings without encoding again. Errors: kUnsupported without a projector for the
  // media's kind; kInvalidArgument for a file that is not a readable image or audio clip,
  // or beyond the limits (pixels, bytes), naming the problem; kResourceExhausted when
  // `cancel` became true meanwhile.
  virtual MediaSupport media_support() const { return {}; }
  virtual Result<EncodedMedia> encode_media(std::span<const uint8_t> bytes,
                                            const std::atomic<bool>* cancel);
};

}  // namespace hearth::scheduler
