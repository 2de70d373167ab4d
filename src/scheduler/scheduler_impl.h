// The Scheduler behind its interface: a thin façade that owns the engine context, the
// scheduler thread and the components, and answers the server's calls. The server's
// threads reach the scheduler thread only through the Intake (tasks, slot actions, stop)
// and read its state only from the StatusBoard (/slots, /metrics); everything else runs on
// the scheduler thread inside the StepLoop (step_loop.h). Internal to the library.
#pragma once

#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "engine/context.h"
#include "scheduler/intake.h"
#include "scheduler/media_encoder.h"
#include "scheduler/scheduler.h"
#include "scheduler/status_board.h"
#include "scheduler/step_loop.h"

namespace hearth::scheduler::detail {

class SchedulerImpl final : public Scheduler {
 public:
  // `draft_ctx` is null unless draft-simple is on.
  SchedulerImpl(std::shared_ptr<const engine::Model> model,
                std::shared_ptr<const tokenizer::Tokenizer> tok, const SchedulerConfig& config,
                std::unique_ptr<engine::Context> ctx, std::unique_ptr<engine::Context> draft_ctx);
  ~SchedulerImpl() override { stop(); }

  void start() override;
  void stop() override;
  Status submit(TaskRequest request) override;
  Status submit_all(std::vector<TaskRequest> requests) override;
  std::vector<SlotInfo> slots() const override { return board_.slots(); }
  bool has_idle_slot() const override { return board_.has_idle_slot(); }
  MetricsSnapshot metrics(bool reset_window) override { return board_.metrics(reset_window); }
  void slot_action(SlotActionKind kind, int32_t id, std::string path, SlotActionDone done) override;
  const SchedulerConfig& config() const override { return config_; }
  const tokenizer::Tokenizer& tokenizer() const override { return *tok_; }
  MediaSupport media_support() const override {
    return media_ ? media_->support() : MediaSupport{};
  }
  Result<EncodedMedia> encode_media(std::span<const uint8_t> bytes,
                                    const std::atomic<bool>* cancel) override {
    return media_ ? media_->encode(bytes, cancel) : Scheduler::encode_media(bytes, cancel);
  }
  // The projector's encoder (config.media); set once before start().
  void set_media_encoder(std::unique_ptr<MediaEncoder> media) { media_ = std::move(media); }

 private:
  // Declared in the order they are built: the components hold references to those above.
  std::shared_ptr<const engine::Model> model_;
  std::shared_ptr<const tokenizer::Tokenizer> tok_;
  SchedulerConfig config_;
  std::unique_ptr<engine::Context> ctx_;
  StatusBoard board_;
  Intake intake_;
  StepLoop loop_;
  std::unique_ptr<MediaEncoder> media_;  // null without a projector
  std::mutex thread_mu_;                 // start() and stop() from any thread
  std::thread thread_;
};

}  // namespace hearth::scheduler::detail
