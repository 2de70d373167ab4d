// Streamed response bodies (SSE). The connection pulls: when its previous write finished it
// takes whatever the producer has ready and writes it as one chunk, so a client that reads
// slowly leaves work queued with the producer, which can see that and slow down
// (backpressure). The producer calls the notify function when more is ready.
#pragma once

#include <cstddef>
#include <deque>
#include <functional>
#include <mutex>
#include <string>

namespace hearth::server::http {

class StreamSource {
 public:
  virtual ~StreamSource() = default;
  // HTTP side, on the connection's I/O thread: appends what is ready to `out` (about
  // `max_bytes` at most, but always whole frames). Returns true once the stream has ended
  // and nothing is left to take.
  virtual bool take(std::string& out, size_t max_bytes) = 0;
  // Registered once by the connection before its first take(); the producer calls it, from
  // any thread and possibly more often than needed, when take() would give more or the stream
  // ended.
  virtual void set_notify(std::function<void()> notify) = 0;
  // The client went away, stopped reading past the timeout, or the server stopped: the
  // producer stops. Called at most once by the connection.
  virtual void abandon() = 0;
};

// A stream of ready-made text chunks: the simple producer for tests and fixed bodies.
class StreamBody final : public StreamSource {
 public:
  // Queues a chunk (empty ones carry nothing and are dropped); ignored once closed or
  // abandoned.
  void push(std::string chunk);
  void close();
  bool abandoned() const;
  // Bytes pushed and not yet taken: what a producer that honours backpressure looks at.
  size_t queued_bytes() const;
  // Called once when the client is gone (at once if it already is).
  void set_on_abandon(std::function<void()> callback);

  bool take(std::string& out, size_t max_bytes) override;
  void set_notify(std::function<void()> notify) override;
  void abandon() override;

 private:
  void notify();

  mutable std::mutex mutex_;
  std::deque<std::string> chunks_;
  size_t queued_bytes_ = 0;
  bool closed_ = false;
  bool abandoned_ = false;
  std::function<void()> notify_;
  std::function<void()> on_abandon_;
};

}  // namespace hearth::server::http
