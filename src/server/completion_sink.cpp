#include "server/completion_sink.h"

#include <algorithm>

namespace hearth::server {

CompletionSink::CompletionSink(std::shared_ptr<const CompletionSettings> settings,
                               ResultContext ctx, int32_t n_results, int32_t n_cmpl,
                               std::shared_ptr<ResultFormat> format)
    : settings_(std::move(settings)),
      format_(format ? std::move(format) : std::make_shared<NativeFormat>(settings_, ctx)),
      n_results_(n_results),
      n_cmpl_(n_cmpl),
      stream_(settings_->task.stream) {}

http::Response CompletionSink::response() {
  // The client went away before the answer was written: the tasks stop.
  pending_->set_on_cancel([weak = weak_from_this()] {
    if (auto self = weak.lock()) self->cancel();
  });
  http::Response response;
  response.pending = pending_;
  return response;
}

// --- Scheduler thread: queue, never render -------------------------------------------------

void CompletionSink::queue_locked(Event event) {
  events_.push_back(std::move(event));
  queued_frames_.store(static_cast<int32_t>(events_.size()), std::memory_order_relaxed);
}

void CompletionSink::resolve_first_locked() {
  if (resolved_) return;
  resolved_ = true;
  // The pending response outlives this call; the sink outlives the render through `self`.
  pending_->resolve([self = shared_from_this()] { return self->first_response(); });
}

void CompletionSink::on_start(int32_t index) {
  {
    std::lock_guard lock(mutex_);
    if (error_) return;  // the request already failed: nothing follows the error frame
    if (index % n_cmpl_ != 0) return;  // n_cmpl copies share the parent's prompt pass
    // Only the first begin marker is silent; each further prompt's is a `data: null` frame
    // (when progress frames are off), as the reference sends.
    if (stream_ && n_started_ > 0 && !settings_->task.return_progress) queue_locked(NullFrame{});
    ++n_started_;
    if (stream_) resolve_first_locked();
  }
  notify();
}

void CompletionSink::on_progress(int32_t index, const scheduler::ProgressInfo& progress) {
  {
    std::lock_guard lock(mutex_);
    if (error_ || !stream_ || !settings_->task.return_progress) return;
    queue_locked(Progress{index, progress});
    resolve_first_locked();
  }
  notify();
}

void CompletionSink::on_partial(scheduler::PartialResult&& partial) {
  {
    std::lock_guard lock(mutex_);
    if (error_ || !stream_) return;
    queue_locked(std::move(partial));
    resolve_first_locked();
  }
  notify();
}

void CompletionSink::on_final(scheduler::FinalResult&& result) {
  {
    std::lock_guard lock(mutex_);
    if (error_) return;
    ++n_final_;
    if (stream_) {
      queue_locked(std::move(result));
      resolve_first_locked();
    } else {
      finals_.push_back(std::move(result));
      if (n_final_ >= n_results_) {
        resolved_ = true;
        pending_->resolve([self = shared_from_this()] { return self->final_response(); });
      }
    }
  }
  notify();
}

void CompletionSink::on_error(int32_t /*index*/, const scheduler::TaskError& error) {
  {
    std::lock_guard lock(mutex_);
    if (error_) return;
    error_ = from_task_error(error);
    if (stream_) {
      if (!resolved_) first_is_error_ = true;
      queue_locked(*error_);
      resolve_first_locked();
    } else if (!resolved_) {
      resolved_ = true;
      pending_->resolve([error = *error_] { return error_response(error); });
    }
  }
  cancel();  // the other tasks of the request stop too
  notify();
}

bool CompletionSink::backlogged() const {
  return queued_frames_.load(std::memory_order_relaxed) > kMaxQueuedFrames;
}

// --- HTTP side: render ------------------------------------------------------------------------

http::Response CompletionSink::first_response() {
  if (!stream_) return final_response();
  {
    std::lock_guard lock(mutex_);
    if (first_is_error_) {
      events_.clear();
      return error_response(*error_);
    }
  }
  http::Response response;
  response.content_type = "text/event-stream";
  response.headers.emplace_back("X-Accel-Buffering", "no");
  response.stream = shared_from_this();
  const int32_t ping = settings_->sse_ping_interval;
  response.ping_interval = std::chrono::seconds(ping > 0 ? ping : 0);
  return response;
}

http::Response CompletionSink::final_response() {
  std::vector<scheduler::FinalResult> finals;
  {
    std::lock_guard lock(mutex_);
    if (error_) return error_response(*error_);
    finals.swap(finals_);
  }
  std::sort(finals.begin(), finals.end(),
            [](const auto& a, const auto& b) { return a.index < b.index; });
  http::Response response;
  response.body = dump_json(format_->final_body(finals));
  return response;
}

std::string CompletionSink::render(const Event& event) {
  struct Renderer {
    ResultFormat& format;
    std::string operator()(const NullFrame&) const { return format.next_prompt_frames(); }
    std::string operator()(const Progress& p) const {
      return format.progress_frames(p.index, p.info);
    }
    std::string operator()(const scheduler::PartialResult& p) const {
      return format.partial_frames(p);
    }
    std::string operator()(const scheduler::FinalResult& r) const { return format.final_frames(r); }
    std::string operator()(const ApiError& e) const { return format.error_frames(e); }
  };
  return std::visit(Renderer{*format_}, event);
}

bool CompletionSink::take(std::string& out, size_t max_bytes) {
  std::deque<Event> ready;
  bool ended = false;
  bool failed = false;
  {
    std::lock_guard lock(mutex_);
    ready.swap(events_);
    queued_frames_.store(0, std::memory_order_relaxed);
    failed = error_.has_value();
    ended = failed || n_final_ >= n_results_;
  }
  // Rendered outside the lock: the scheduler thread keeps queueing meanwhile. The byte
  // budget is a hint; frames already taken are all written.
  (void)max_bytes;
  for (const Event& event : ready) out += render(event);
  if (!ended) return false;
  {
    std::lock_guard lock(mutex_);
    if (!events_.empty()) return false;
  }
  // After every result, the route's closing frames (none after an error frame).
  if (!failed && !end_sent_) out += format_->end_frames();
  end_sent_ = true;
  return true;
}

void CompletionSink::set_notify(std::function<void()> notify) {
  std::lock_guard lock(mutex_);
  notify_ = std::move(notify);
}

void CompletionSink::abandon() {
  cancel();
  std::lock_guard lock(mutex_);
  events_.clear();
  queued_frames_.store(0, std::memory_order_relaxed);
  notify_ = nullptr;
}

void CompletionSink::notify() {
  std::function<void()> notify;
  {
    std::lock_guard lock(mutex_);
    notify = notify_;
  }
  if (notify) notify();
}

}  // namespace hearth::server

namespace hearth::server {

// --- The native shape --------------------------------------------------------------------------

Json NativeFormat::final_body(const std::vector<scheduler::FinalResult>& finals) {
  if (finals.size() == 1) return final_json(finals.front(), *settings_, ctx_, false);
  Json all = Json::array();
  for (const auto& result : finals) all.push_back(final_json(result, *settings_, ctx_, false));
  return all;
}

std::string NativeFormat::progress_frames(int32_t index, const scheduler::ProgressInfo& progress) {
  return sse_frame(progress_json(index, progress, *settings_));
}

std::string NativeFormat::partial_frames(const scheduler::PartialResult& partial) {
  return sse_frame(partial_json(partial, *settings_, ctx_));
}

std::string NativeFormat::final_frames(const scheduler::FinalResult& result) {
  return sse_frame(final_json(result, *settings_, ctx_, true));
}

}  // namespace hearth::server
