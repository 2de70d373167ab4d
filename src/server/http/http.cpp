// Request helpers, PendingResponse and StreamBody; the server itself is in server.cpp.
#include "server/http/http.h"

#include "server/http/url.h"

namespace hearth::server::http {

std::optional<std::string> Request::header(std::string_view name) const {
  for (const auto& [key, value] : headers) {
    if (iequals(key, name)) return value;
  }
  return std::nullopt;
}

std::optional<std::string> Request::query_param(std::string_view name) const {
  for (const auto& [key, value] : query) {
    if (key == name) return value;
  }
  return std::nullopt;
}

int transport_status(TransportError error) {
  switch (error) {
    case TransportError::kBadRequest:
    case TransportError::kUnknownMethod:
      return 400;
    case TransportError::kHeadersTooLarge:
      return 431;
    case TransportError::kBodyTooLarge:
      return 413;
    case TransportError::kRequestTimeout:
      return 408;
    case TransportError::kTooManyConnections:
      return 503;
    case TransportError::kHandlerFailed:
      return 500;
  }
  return 500;
}

void PendingResponse::resolve(Render render) {
  std::function<void(Render)> ready;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (resolved_) return;
    resolved_ = true;
    // Nobody will write it: keep nothing (a render often holds its producer).
    if (cancelled_) return;
    if (!ready_) {
      render_ = std::move(render);
      return;
    }
    ready = std::move(ready_);
    ready_ = nullptr;
  }
  ready(std::move(render));
}

bool PendingResponse::cancelled() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return cancelled_;
}

void PendingResponse::set_on_cancel(std::function<void()> callback) {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (!cancelled_) {
      on_cancel_ = std::move(callback);
      return;
    }
  }
  if (callback) callback();
}

void PendingResponse::on_ready(std::function<void(Render)> ready) {
  Render render;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (cancelled_) return;
    if (!resolved_) {
      ready_ = std::move(ready);
      return;
    }
    render = std::move(render_);
    render_ = nullptr;
  }
  ready(std::move(render));
}

void PendingResponse::cancel() {
  std::function<void()> callback;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (cancelled_) return;
    cancelled_ = true;
    callback = std::move(on_cancel_);
    on_cancel_ = nullptr;
    ready_ = nullptr;  // nobody will write the response any more
    render_ = nullptr;
  }
  // Outside the lock: the callback may call back into this object.
  if (callback) callback();
}

void StreamBody::push(std::string chunk) {
  if (chunk.empty()) return;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (closed_ || abandoned_) return;
    queued_bytes_ += chunk.size();
    chunks_.push_back(std::move(chunk));
  }
  notify();
}

void StreamBody::close() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (closed_) return;
    closed_ = true;
  }
  notify();
}

bool StreamBody::abandoned() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return abandoned_;
}

size_t StreamBody::queued_bytes() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return queued_bytes_;
}

void StreamBody::set_on_abandon(std::function<void()> callback) {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (!abandoned_) {
      on_abandon_ = std::move(callback);
      return;
    }
  }
  if (callback) callback();
}

bool StreamBody::take(std::string& out, size_t max_bytes) {
  std::lock_guard<std::mutex> lock(mutex_);
  size_t taken = 0;
  while (!chunks_.empty() && (taken == 0 || taken + chunks_.front().size() <= max_bytes)) {
    taken += chunks_.front().size();
    out += chunks_.front();
    chunks_.pop_front();
  }
  queued_bytes_ -= taken;
  return closed_ && chunks_.empty();
}

void StreamBody::set_notify(std::function<void()> notify) {
  std::lock_guard<std::mutex> lock(mutex_);
  notify_ = std::move(notify);
}

void StreamBody::abandon() {
  std::function<void()> callback;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (abandoned_) return;
    abandoned_ = true;
    chunks_.clear();
    queued_bytes_ = 0;
    callback = std::move(on_abandon_);
    on_abandon_ = nullptr;
    notify_ = nullptr;
  }
  if (callback) callback();
}

void StreamBody::notify() {
  std::function<void()> notify;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    notify = notify_;
  }
  if (notify) notify();
}

}  // namespace hearth::server::http
