// Request helpers and StreamBody; the server itself is in server.cpp.
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

void StreamBody::push(std::string chunk) {
  // An empty HTTP chunk would end the body, so empty pushes carry nothing and are dropped.
  if (chunk.empty()) return;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (closed_ || abandoned_ || abandoning_) return;
    chunks_.push_back(std::move(chunk));
  }
  ready_.notify_one();
}

void StreamBody::close() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    closed_ = true;
  }
  ready_.notify_one();
}

bool StreamBody::abandoned() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return abandoned_;
}

void StreamBody::set_on_abandon(std::function<void()> callback) {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (!abandoning_) {
      on_abandon_ = std::move(callback);
      return;
    }
  }
  // The client left before the producer registered: tell it now rather than never.
  if (callback) callback();
}

std::optional<std::string> StreamBody::next(std::chrono::milliseconds timeout, bool& closed) {
  std::unique_lock<std::mutex> lock(mutex_);
  ready_.wait_for(lock, timeout, [this] { return !chunks_.empty() || closed_; });
  closed = false;
  if (!chunks_.empty()) {
    std::string chunk = std::move(chunks_.front());
    chunks_.pop_front();
    return chunk;
  }
  closed = closed_;
  return std::nullopt;
}

void StreamBody::abandon() {
  std::function<void()> callback;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (abandoning_) return;
    abandoning_ = true;
    callback = std::move(on_abandon_);
    on_abandon_ = nullptr;
    chunks_.clear();
  }
  // Outside the lock: the callback may well call back into this body (push, abandoned).
  if (callback) callback();
  std::lock_guard<std::mutex> lock(mutex_);
  abandoned_ = true;
}

}  // namespace hearth::server::http
