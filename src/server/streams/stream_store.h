// Resumable streams (other-native-routes.md §15): a streaming answer whose request carried
// `X-Conversation-Id` is mirrored into a per-conversation byte buffer. The store, not the
// client's connection, then drains the producer, so the generation goes on when its client
// leaves; the client (and anyone who asks later with GET /v1/stream) reads the buffer from a
// byte offset and follows it live until the producer ends.
//
// Bounds: each session keeps its newest `max_session_bytes` (older bytes are dropped, offsets
// stay absolute); at most `max_sessions` sessions exist, so the store holds at most about
// max_sessions x max_session_bytes. A full store makes room by evicting its oldest finished
// session; when every session is still running a new one is refused. A finished session
// expires `ttl` after it ended.
//
// The store knows only the HTTP layer's stream and pending-response types: it never sees the
// scheduler, and the route code decides which answers it adopts.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "server/http/http.h"

namespace hearth::server::streams {

struct StreamLimits {
  size_t max_session_bytes = 4u << 20;  // the reference's ring size
  size_t max_sessions = 64;
  std::chrono::milliseconds ttl = std::chrono::seconds(300);  // the reference's retention
};

struct SessionStatus {
  std::string conversation_id;
  bool is_done = false;
  uint64_t total_bytes = 0;  // every byte the producer wrote, dropped ones included
  int64_t started_at = 0;    // Unix seconds
  int64_t completed_at = 0;  // Unix seconds; 0 while running
};

enum class OpenResult { kOk, kNotFound, kOffsetLost };

class StreamStore {
 public:
  explicit StreamStore(StreamLimits limits);
  ~StreamStore();
  StreamStore(const StreamStore&) = delete;
  StreamStore& operator=(const StreamStore&) = delete;

  // Takes over a generating handler's answer for conversation `id`. An answer given at once
  // (an error before anything started) is returned as it is and leaves no session. A pending
  // one gets a session (replacing, and cancelling, one with the same id); `out` becomes what
  // the client is sent: the same answer, whose stream, if it is one, is read from the
  // session. A non-streaming answer leaves no session either. False, with the answer's
  // work cancelled, when the store is full of running sessions.
  bool adopt(const std::string& id, http::Response answer, http::Response& out);

  // A stream of session `id`'s bytes from absolute offset `from`, following it live.
  OpenResult open(const std::string& id, uint64_t from, std::shared_ptr<http::StreamSource>& out);

  // Cancels session `id`'s producer and evicts it; its readers end. Nothing if unknown.
  void cancel(const std::string& id);

  // The sessions whose id is one of `ids` or starts with `<one of ids>::`.
  std::vector<SessionStatus> lookup(const std::vector<std::string>& ids);

  // Ends every session (server shutdown): producers cancelled, readers released.
  void shutdown();

  const StreamLimits& limits() const;

 private:
  struct Impl;
  std::shared_ptr<Impl> impl_;
};

}  // namespace hearth::server::streams
