// Collects the events of one completion request. The scheduler thread only queues them,
// typed, as they come (no JSON, no text rendering there); the HTTP side renders them when it
// writes: one JSON body once every result is in (non-streaming), or SSE frames taken as the
// connection can send them (streaming). A stream whose frames pile up unsent reports itself
// backlogged, and the scheduler stops generating for it until the client catches up.
#pragma once

#include <atomic>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <utility>
#include <variant>
#include <vector>

#include "scheduler/task.h"
#include "server/api_error.h"
#include "server/completion_json.h"
#include "server/http/http.h"
#include "server/result_format.h"

namespace hearth::server {

class CompletionSink final : public scheduler::TaskSink,
                             public http::StreamSource,
                             public std::enable_shared_from_this<CompletionSink> {
 public:
  // Unsent stream frames past which the scheduler pauses the request's slots.
  static constexpr int32_t kMaxQueuedFrames = 64;

  // `format` shapes the results (the route's); null: the native shape.
  CompletionSink(std::shared_ptr<const CompletionSettings> settings, ResultContext ctx,
                 int32_t n_results, int32_t n_cmpl, std::shared_ptr<ResultFormat> format = nullptr);

  // Scheduler thread.
  void on_start(int32_t index) override;
  void on_progress(int32_t index, const scheduler::ProgressInfo& progress) override;
  void on_partial(scheduler::PartialResult&& partial) override;
  void on_final(scheduler::FinalResult&& result) override;
  void on_error(int32_t index, const scheduler::TaskError& error) override;
  bool backlogged() const override;

  // The HTTP answer, pending until the first event (streaming: an error first is answered
  // as plain JSON, anything else starts the SSE stream) or until every result is in.
  http::Response response();

  // StreamSource, for the HTTP side.
  bool take(std::string& out, size_t max_bytes) override;
  void set_notify(std::function<void()> notify) override;
  void abandon() override;

 private:
  struct NullFrame {};  // a further prompt's begin marker: `data: null`
  struct Progress {
    int32_t index = 0;
    scheduler::ProgressInfo info;
  };
  using Event =
      std::variant<NullFrame, Progress, scheduler::PartialResult, scheduler::FinalResult, ApiError>;

  void queue_locked(Event event);
  void resolve_first_locked();
  void notify();
  std::string render(const Event& event);
  http::Response first_response();
  http::Response final_response();

  std::shared_ptr<const CompletionSettings> settings_;
  std::shared_ptr<ResultFormat> format_;
  const int32_t n_results_;
  const int32_t n_cmpl_;
  const bool stream_;
  std::shared_ptr<http::PendingResponse> pending_ = std::make_shared<http::PendingResponse>();

  mutable std::mutex mutex_;
  bool resolved_ = false;
  bool first_is_error_ = false;  // streaming: the first event was an error
  int32_t n_started_ = 0;
  int32_t n_final_ = 0;
  std::optional<ApiError> error_;
  std::deque<Event> events_;                    // streaming: not yet taken by the connection
  std::vector<scheduler::FinalResult> finals_;  // non-streaming
  std::function<void()> notify_;
  std::atomic<int32_t> queued_frames_{0};
  bool end_sent_ = false;  // HTTP side: the format's end frames were taken
};

}  // namespace hearth::server
