#include "server/completion_sink.h"

#include <algorithm>
#include <chrono>

namespace hearth::server {

CompletionSink::CompletionSink(std::shared_ptr<const CompletionSettings> settings,
                               ResultContext ctx, int32_t n_results, int32_t n_cmpl)
    : settings_(std::move(settings)),
      ctx_(std::move(ctx)),
      n_results_(n_results),
      n_cmpl_(n_cmpl),
      body_(std::make_shared<http::StreamBody>()) {}

ApiError CompletionSink::to_api_error(const scheduler::TaskError& error) {
  using Kind = scheduler::TaskError::Kind;
  switch (error.kind) {
    case Kind::kInvalidRequest:
      return invalid_request(error.message);
    case Kind::kExceedContext:
      return {ErrorType::kExceedContext, error.message, error.n_prompt_tokens, error.n_ctx};
    case Kind::kUnavailable:
      return {ErrorType::kUnavailable, error.message};
    case Kind::kServer:
      break;
  }
  return server_error(error.message);
}

void CompletionSink::push_raw(std::string chunk) {
  // Called with mutex_ held. Frames wait until the stream is handed to the HTTP layer.
  if (streaming_) {
    body_->push(std::move(chunk));
  } else {
    pending_.push_back(std::move(chunk));
  }
}

void CompletionSink::push_frame(const Json& frame) {
  push_raw("data: " + dump_json(frame) + "\n\n");
}

void CompletionSink::on_start(int32_t index) {
  std::lock_guard lock(mutex_);
  if (index % n_cmpl_ != 0) return;  // n_cmpl copies share the parent's prompt pass
  // Only the first begin marker is silent; each further prompt's is a `data: null` frame
  // (when progress frames are off), as the reference sends.
  if (settings_->task.stream && n_started_ > 0 && !settings_->task.return_progress) {
    push_raw("data: null\n\n");
  }
  ++n_started_;
  any_event_ = true;
  changed_.notify_all();
}

void CompletionSink::on_progress(int32_t index, const scheduler::ProgressInfo& progress) {
  std::lock_guard lock(mutex_);
  if (!settings_->task.stream || !settings_->task.return_progress) return;
  push_frame(progress_json(index, progress));
  any_event_ = true;
  changed_.notify_all();
}

void CompletionSink::on_partial(scheduler::PartialResult&& partial) {
  std::lock_guard lock(mutex_);
  if (!settings_->task.stream) return;
  push_frame(partial_json(partial, *settings_, ctx_));
  any_event_ = true;
  changed_.notify_all();
}

void CompletionSink::on_final(scheduler::FinalResult&& result) {
  std::lock_guard lock(mutex_);
  if (error_) return;
  if (settings_->task.stream) {
    push_frame(final_json(result, *settings_, ctx_, true));
  } else {
    finals_.emplace_back(result.index, final_json(result, *settings_, ctx_, false));
  }
  ++n_final_;
  any_event_ = true;
  if (settings_->task.stream && n_final_ >= n_results_ && streaming_) body_->close();
  changed_.notify_all();
}

void CompletionSink::on_error(int32_t /*index*/, const scheduler::TaskError& error) {
  std::lock_guard lock(mutex_);
  if (error_) return;
  error_ = to_api_error(error);
  if (settings_->task.stream && any_event_) {
    push_raw("data: " + error_body(*error_) + "\n\n");
    if (streaming_) body_->close();
  }
  cancel();  // the other tasks of the request stop too
  changed_.notify_all();
}

http::Response CompletionSink::wait_response(const std::function<bool()>& client_connected) {
  std::unique_lock lock(mutex_);
  while (!done_locked()) {
    changed_.wait_for(lock, std::chrono::milliseconds(100));
    if (!done_locked() && client_connected && !client_connected()) {
      cancel();
      return error_response(server_error("client disconnected"));
    }
  }
  if (error_) return error_response(*error_);
  std::sort(finals_.begin(), finals_.end(),
            [](const auto& a, const auto& b) { return a.first < b.first; });
  http::Response response;
  if (finals_.size() == 1) {
    response.body = dump_json(finals_.front().second);
  } else {
    Json all = Json::array();
    for (auto& [index, result] : finals_) all.push_back(std::move(result));
    response.body = dump_json(all);
  }
  return response;
}

http::Response CompletionSink::start_stream(const std::function<bool()>& client_connected) {
  std::unique_lock lock(mutex_);
  while (!any_event_ && !error_) {
    changed_.wait_for(lock, std::chrono::milliseconds(100));
    if (!any_event_ && !error_ && client_connected && !client_connected()) {
      cancel();
      return error_response(server_error("client disconnected"));
    }
  }
  if (error_ && n_final_ == 0 && pending_.empty()) return error_response(*error_);
  streaming_ = true;
  for (std::string& chunk : pending_) body_->push(std::move(chunk));
  pending_.clear();
  if (error_ || n_final_ >= n_results_) body_->close();
  body_->set_on_abandon([weak = weak_from_this()] {
    if (auto self = weak.lock()) self->cancel();
  });
  http::Response response;
  response.content_type = "text/event-stream";
  response.headers.emplace_back("X-Accel-Buffering", "no");
  response.stream = body_;
  const int32_t ping = settings_->sse_ping_interval;
  response.ping_interval = std::chrono::seconds(ping > 0 ? ping : 0);
  return response;
}

}  // namespace hearth::server
