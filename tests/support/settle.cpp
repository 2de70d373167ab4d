#include "support/settle.h"

#include <condition_variable>
#include <memory>
#include <mutex>

namespace hearth::test {

namespace http = hearth::server::http;
using Clock = std::chrono::steady_clock;

namespace {

// Waits for a pending response's render function and runs it, as a connection would.
std::optional<http::Response> wait_pending(http::PendingResponse& pending,
                                           Clock::time_point deadline) {
  struct Shared {
    std::mutex mutex;
    std::condition_variable ready;
    http::PendingResponse::Render render;
    bool done = false;
  };
  auto shared = std::make_shared<Shared>();
  pending.on_ready([shared](http::PendingResponse::Render render) {
    std::lock_guard<std::mutex> lock(shared->mutex);
    shared->render = std::move(render);
    shared->done = true;
    shared->ready.notify_all();
  });
  std::unique_lock<std::mutex> lock(shared->mutex);
  if (!shared->ready.wait_until(lock, deadline, [&] { return shared->done; })) {
    lock.unlock();
    pending.cancel();
    return std::nullopt;
  }
  return shared->render ? shared->render() : http::Response{};
}

bool drain(http::StreamSource& stream, std::string& body, Clock::time_point deadline) {
  struct Shared {
    std::mutex mutex;
    std::condition_variable more;
    bool notified = false;
  };
  auto shared = std::make_shared<Shared>();
  stream.set_notify([shared] {
    std::lock_guard<std::mutex> lock(shared->mutex);
    shared->notified = true;
    shared->more.notify_all();
  });
  for (;;) {
    {
      std::lock_guard<std::mutex> lock(shared->mutex);
      shared->notified = false;
    }
    if (stream.take(body, 256 * 1024)) return true;
    std::unique_lock<std::mutex> lock(shared->mutex);
    if (!shared->more.wait_until(lock, deadline, [&] { return shared->notified; })) {
      lock.unlock();
      stream.abandon();
      return false;
    }
  }
}

}  // namespace

std::optional<SettledResponse> settle(http::Response response, std::chrono::milliseconds timeout) {
  const Clock::time_point deadline = Clock::now() + timeout;
  auto extra = response.headers;
  if (response.pending) {
    std::optional<http::Response> rendered = wait_pending(*response.pending, deadline);
    if (!rendered) return std::nullopt;
    response = std::move(*rendered);
    for (auto& h : extra) response.headers.push_back(std::move(h));
  }
  SettledResponse out;
  out.status = response.status;
  out.content_type = response.content_type;
  out.headers = response.headers;
  if (!response.stream) {
    out.body = std::move(response.body);
    return out;
  }
  out.streamed = true;
  if (!drain(*response.stream, out.body, deadline)) return std::nullopt;
  return out;
}

}  // namespace hearth::test
