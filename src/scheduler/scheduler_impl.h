// The Scheduler's implementation, shared by scheduler.cpp (queue, planning, public entry
// points) and step.cpp (launching tasks and running engine steps). Internal to the library.
#pragma once

#include <condition_variable>
#include <deque>
#include <memory>
#include <mutex>
#include <optional>
#include <span>
#include <string>
#include <thread>
#include <vector>

#include "engine/context.h"
#include "scheduler/draft_budget.h"
#include "scheduler/planner.h"
#include "scheduler/prompt_cache.h"
#include "scheduler/scheduler.h"
#include "scheduler/slot.h"
#include "scheduler/slot_file.h"
#include "scheduler/vocab_adapter.h"

namespace hearth::scheduler::detail {

struct Pending {
  TaskRequest req;
  std::shared_ptr<const std::vector<int32_t>> prompt;
  bool checked = false;  // check_task() ran
  int64_t t_queued_us = 0;
};

struct Slot {
  int32_t id = 0;
  std::vector<int32_t> cached;  // mirrors the KV sequence `id`
  int64_t t_last_used = -1;
  int64_t started = 0;
  bool has_task = false;
  int32_t last_id_task = -1;
  std::shared_ptr<const void> echo;
  std::unique_ptr<RunningTask> task;
  NgramModSlot ngram_mod;             // the slot's place in the shared ngram-mod table
  std::unique_ptr<NgramMap> map_k;    // ngram-map-k's index of the slot's tokens
  std::unique_ptr<NgramMap> map_k4v;  // ngram-map-k4v's
  NgramCacheSlot ngram_cache;         // ngram-cache's context table
  std::vector<int32_t> draft_cached;  // tokens in the draft model's sequence `id`
  bool waiting() const { return task && task->is_child && !task->prompt_done; }
};

// A slot action (save, restore, erase) waiting for its slot to be idle; `done` gets the
// outcome.
struct SlotAction {
  SlotActionKind kind = SlotActionKind::kErase;
  int32_t slot = 0;
  std::string path;
  SlotActionDone done;
};

// One token of an engine step and where it came from.
struct StepToken {
  int32_t slot = 0;
  int32_t token = 0;
  bool logits = false;
  bool prompt = false;
  bool draft = false;  // drafted after the slot's previous token, verified by its logits
};

class SchedulerImpl final : public Scheduler {
 public:
  SchedulerImpl(std::shared_ptr<const engine::Model> model,
                std::shared_ptr<const tokenizer::Tokenizer> tok, const SchedulerConfig& config,
                std::unique_ptr<engine::Context> ctx)
      : model_(std::move(model)), tok_(std::move(tok)), config_(config), ctx_(std::move(ctx)) {
    slots_.resize(static_cast<size_t>(config_.n_slots));
    for (int32_t i = 0; i < config_.n_slots; ++i) {
      Slot& s = slots_[static_cast<size_t>(i)];
      s.id = i;
      if (config_.spec.ngram_map_k)
        s.map_k = std::make_unique<NgramMap>(config_.spec.ngram_map_k_params, false);
      if (config_.spec.ngram_map_k4v)
        s.map_k4v = std::make_unique<NgramMap>(config_.spec.ngram_map_k4v_params, true);
    }
    if (config_.cache_ram_mib != 0) {
      prompt_cache_ = std::make_unique<PromptCache>(
          PromptCache::limit_from_mib(config_.cache_ram_mib),
          static_cast<size_t>(config_.n_slots) * static_cast<size_t>(config_.n_ctx_slot));
    }
    // The reference's table size: 4 Mi entries (16 MiB), shared by all slots.
    if (config_.spec.ngram_mod)
      ngram_mod_ =
          std::make_unique<NgramModTable>(config_.spec.ngram_mod_params.n_match, size_t{4} << 20);
    publish();
  }
  ~SchedulerImpl() override { stop(); }
  void set_draft_context(std::unique_ptr<engine::Context> ctx) { draft_ctx_ = std::move(ctx); }

  void start() override;
  void stop() override;
  Status submit(TaskRequest request) override;
  Status submit_all(std::vector<TaskRequest> requests) override;
  std::vector<SlotInfo> slots() const override;
  bool has_idle_slot() const override;
  MetricsSnapshot metrics(bool reset_window) override;
  void slot_action(SlotActionKind kind, int32_t id, std::string path, SlotActionDone done) override;
  const SchedulerConfig& config() const override { return config_; }
  const tokenizer::Tokenizer& tokenizer() const override { return *tok_; }

 private:
  void run();
  // Slot actions (slot_actions.cpp).
  bool action_pending(int32_t slot) const;  // under mu_
  bool action_runnable() const;             // under mu_: an action whose slot is idle
  void run_slot_actions();
  Result<SlotFileResult> run_action(const SlotAction& action);
  Result<SlotFileResult> save_to_file(Slot& slot, const std::string& path);
  Result<SlotFileResult> restore_from_file(Slot& slot, const std::string& path);
  void clear_slot(Slot& slot);
  // Host prompt cache (slot_cache.cpp).
  int32_t use_prompt_cache(Slot& slot, const Pending& p);
  bool store_in_cache(const Slot& slot);
  void cache_idle_slots();
  void fail_actions();
  SlotFileShape file_shape() const;
  bool take_work(StepPlan& plan, std::vector<Pending>& admitted);
  void screen_queue(std::vector<std::pair<Pending, TaskError>>& rejected);
  std::optional<TaskError> check_task(const Pending& p) const;
  bool splittable(TaskKind kind) const;      // the reference lets a prompt exceed one ubatch
  bool needs_one_step(TaskKind kind) const;  // the planner must give it one whole step
  PlanInput plan_input(const std::deque<Pending>& queue) const;
  void launch(const Admission& adm, Pending&& p);
  std::unique_ptr<RunningTask> make_task(const Pending& p, int32_t copy, int32_t parent_slot);
  Result<sampling::Sampler> make_sampler(const SamplingSettings& settings,
                                         const sampling::GrammarConfig& grammar,
                                         const ReasoningSettings& reasoning);
  void execute(const StepPlan& plan);
  void collect(const StepPlan& plan, std::vector<StepToken>& tokens);
  bool evict_idle_slots();
  // The chunk loses its drafts when the KV cache has no room for them.
  bool forward(std::vector<StepToken>& chunk);
  void after_forward(std::span<const StepToken> chunk);
  // Speculative decoding (speculate.cpp): a generating slot's draft after its pending
  // token, and the verification of what the forward pass computed for it.
  struct DraftJob {
    Slot* slot;
    int32_t budget;  // most tokens the draft model may propose
  };
  void prepare_drafts(const StepPlan& plan);
  void budget_drafts(const StepPlan& plan);
  int32_t ngram_draft(Slot& slot);
  std::vector<int32_t> draft_from_ngrams(Slot& slot);
  void draft_with_model(std::vector<DraftJob>& jobs);  // draft_model.cpp
  bool sync_draft_sequences(std::vector<DraftJob>& jobs);
  void append_draft(const Slot& slot, std::vector<StepToken>& tokens) const;
  void begin_drafting(Slot& slot);
  void verify_draft(Slot& slot, size_t at);
  void account_drafts(const RunningTask& t);
  bool drop_drafts(std::vector<StepToken>& chunk);
  void prompt_finished(Slot& slot, std::span<const float> logits);
  void gather_embeddings(std::span<const StepToken> chunk);
  void keep_row(std::vector<float>& rows, std::span<const float> row) const;
  bool wants_hidden(const Slot& slot, int32_t pos) const;
  void finish_embedding(Slot& slot);
  void account_prompt(const RunningTask& t);
  void sample_into(Slot& slot, std::span<const float> logits);
  void finish(Slot& slot);
  void fail(Slot& slot, const TaskError& error);
  void release(Slot& slot);
  void drop_cancelled();
  void shutdown_tasks();
  void publish();
  int32_t busy_slots() const;

  std::shared_ptr<const engine::Model> model_;
  std::shared_ptr<const tokenizer::Tokenizer> tok_;
  SchedulerConfig config_;
  std::unique_ptr<engine::Context> ctx_;
  std::vector<Slot> slots_;                     // scheduler thread only
  std::unique_ptr<NgramModTable> ngram_mod_;    // with --spec-type ngram-mod
  std::unique_ptr<engine::Context> draft_ctx_;  // with --spec-type draft-simple
  StepCostModel step_cost_;                     // forward-call times, for the draft budget
  std::unique_ptr<PromptCache> prompt_cache_;   // scheduler thread only; null with --cache-ram 0
  // Built on first use, scheduler thread only.
  std::unique_ptr<TokenizerVocab> vocab_;
  std::shared_ptr<const grammar::TokenTable> token_table_;
  int64_t next_start_ = 1;
  int32_t next_task_id_ = 0;
  // Latencies observed since the last publish(), scheduler thread only: kept here so the
  // per-token path takes no lock; publish() folds them into metrics_.
  Histogram unpublished_ttft_{time_to_first_token_buckets()};
  Histogram unpublished_tpot_{time_per_output_token_buckets()};

  mutable std::mutex mu_;
  std::condition_variable cv_;
  std::deque<Pending> queue_;
  std::deque<std::unique_ptr<SlotAction>> actions_;
  bool stopping_ = false;
  bool stopped_ = false;
  std::thread thread_;
  std::vector<SlotInfo> snapshot_;
  MetricsSnapshot metrics_;
};

}  // namespace hearth::scheduler::detail
