// Collects the events of one completion request from the scheduler thread and turns them
// into either one JSON body (non-streaming) or SSE frames pushed to the HTTP stream.
#pragma once

#include <condition_variable>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <utility>
#include <vector>

#include "scheduler/task.h"
#include "server/api_error.h"
#include "server/completion_json.h"
#include "server/http/http.h"

namespace hearth::server {

class CompletionSink : public scheduler::TaskSink,
                       public std::enable_shared_from_this<CompletionSink> {
 public:
  CompletionSink(std::shared_ptr<const CompletionSettings> settings, ResultContext ctx,
                 int32_t n_results, int32_t n_cmpl);

  void on_start(int32_t index) override;
  void on_progress(int32_t index, const scheduler::ProgressInfo& progress) override;
  void on_partial(scheduler::PartialResult&& partial) override;
  void on_final(scheduler::FinalResult&& result) override;
  void on_error(int32_t index, const scheduler::TaskError& error) override;

  // Non-streaming: waits for every result (or the first error), giving up when the client
  // goes away. The body is one object or an array sorted by index.
  http::Response wait_response(const std::function<bool()>& client_connected);
  // Streaming: waits for the first event; an error then is answered as plain JSON,
  // otherwise the SSE response whose body this sink keeps feeding.
  http::Response start_stream(const std::function<bool()>& client_connected);

  // Converts a scheduler error into the API's.
  static ApiError to_api_error(const scheduler::TaskError& error);

 private:
  void push_frame(const Json& frame);
  void push_raw(std::string chunk);
  bool done_locked() const { return error_.has_value() || n_final_ >= n_results_; }

  std::shared_ptr<const CompletionSettings> settings_;
  ResultContext ctx_;
  const int32_t n_results_;
  const int32_t n_cmpl_;
  std::mutex mutex_;
  std::condition_variable changed_;
  bool any_event_ = false;
  int32_t n_started_ = 0;
  int32_t n_final_ = 0;
  std::optional<ApiError> error_;
  std::vector<std::pair<int32_t, Json>> finals_;  // non-streaming results by index
  std::shared_ptr<http::StreamBody> body_;        // streaming
  std::vector<std::string> pending_;              // frames before the stream is handed out
  bool streaming_ = false;                        // body_ handed to the HTTP layer
};

}  // namespace hearth::server
