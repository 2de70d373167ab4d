// An in-memory Scheduler for route and pipeline tests and the request-path fuzz target: no
// model, no engine. Each task "generates" deterministic tokens (its prompt's tokens again,
// cycling, or the tokens set_output() gave, ending with an end of generation when they run
// out) on the fake's own thread, as the real scheduler reports them: a begin marker,
// progress, streamed partials, one final result, or an error (invalid token ids, a prompt
// longer than the slot context). It honours n_predict (8 tokens for -1, at most 64),
// n_cmpl copies, n_probs, cancellation and backpressure.
//
// Embedding and rerank tasks answer from the token ids alone: token t's hidden state is a
// fixed vector of kEmbeddingWidth values (fake_hidden_state), pooled as the config's pooling
// says (none: one unnormalized row per token; mean, cls, last: one row normalized as the
// task's embd_normalize asks; rank: one score, fake_rank_score).
//
// Slot actions answer at once. Each slot holds the tokens of its last task (prompt and
// output); save writes them to the file (a small header, then the ids), restore reads them
// back, erase drops them.
#pragma once

#include <condition_variable>
#include <deque>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#include "scheduler/scheduler.h"
#include "tokenizer/tokenizer.h"

namespace hearth::test {

class FakeScheduler final : public scheduler::Scheduler {
 public:
  FakeScheduler(std::shared_ptr<const tokenizer::Tokenizer> tok, scheduler::SchedulerConfig config);
  ~FakeScheduler() override;

  void start() override;
  void stop() override;
  Status submit(scheduler::TaskRequest request) override;
  Status submit_all(std::vector<scheduler::TaskRequest> requests) override;
  std::vector<scheduler::SlotInfo> slots() const override;
  bool has_idle_slot() const override;
  scheduler::MetricsSnapshot metrics(bool reset_window) override;
  void slot_action(scheduler::SlotActionKind kind, int32_t id, std::string path,
                   scheduler::SlotActionDone done) override;
  const scheduler::SchedulerConfig& config() const override { return config_; }
  const tokenizer::Tokenizer& tokenizer() const override { return *tok_; }
  scheduler::MediaSupport media_support() const override { return media_; }
  // A fake projector: a file is "decoded" when it starts with a PNG, JPEG, GIF, BMP, WAV or
  // MP3 signature (else kInvalidArgument naming it), and becomes 3 + size % 4 positions
  // whose placeholder and embedding rows are functions of its bytes; begin and end texts
  // "<img>" and "</img>".
  Result<scheduler::EncodedMedia> encode_media(std::span<const uint8_t> bytes,
                                               const std::atomic<bool>* cancel) override;
  void set_media_support(scheduler::MediaSupport media) { media_ = media; }
  // The media chunks of the last task run.
  std::vector<scheduler::MediaChunk> last_media() const;

  // Width of the fake's hidden states (what /v1/models reports as n_embd).
  static constexpr int32_t kEmbeddingWidth = 16;

  // Tasks run so far (each n_cmpl copy counts).
  size_t tasks_run() const;
  // What the model "writes" from now on, for the chat fuzz targets; empty: the prompt again.
  void set_output(std::vector<int32_t> tokens);

 private:
  void run();
  void run_task(const scheduler::TaskRequest& request, int32_t copy);
  void run_embedding(const scheduler::TaskRequest& request);
  // Refuses out-of-vocabulary ids and prompts past the slot context, as the scheduler does.
  bool check_prompt(const scheduler::TaskRequest& request, int32_t index);
  Result<scheduler::SlotFileResult> run_slot_action(scheduler::SlotActionKind kind, int32_t id,
                                                    const std::string& path);

  std::shared_ptr<const tokenizer::Tokenizer> tok_;
  scheduler::SchedulerConfig config_;
  mutable std::mutex mutex_;
  std::condition_variable cv_;
  std::deque<scheduler::TaskRequest> queue_;
  bool stopping_ = false;
  size_t tasks_run_ = 0;
  std::vector<int32_t> output_;
  scheduler::MediaSupport media_;
  std::vector<scheduler::MediaChunk> last_media_;
  std::vector<std::vector<int32_t>> slot_tokens_;  // per slot: the last task's tokens
  scheduler::MetricsSnapshot metrics_;
  std::thread thread_;
};

// Token `token`'s fake hidden state: kEmbeddingWidth values in [-0.5, 0.5), a fixed function
// of the id.
std::vector<float> fake_hidden_state(int32_t token);
// The rank score of a rerank prompt: a fixed function of its ids.
float fake_rank_score(const std::vector<int32_t>& prompt);

// The vocabulary of a GGUF file (e.g. the shared stories260K model); null when it cannot be
// read.
std::shared_ptr<const tokenizer::Tokenizer> load_tokenizer(const std::string& gguf_path);

}  // namespace hearth::test
