// One client connection, served on its own thread: reads requests (keep-alive), calls the
// dispatch function, writes plain or streamed responses.
#pragma once

#include <cstdint>
#include <memory>

#include "server/http/http.h"
#include "server/http/socket.h"

namespace hearth::server::http {

// What a connection needs from the server that owns it.
class ConnectionOwner {
 public:
  virtual ~ConnectionOwner() = default;
  // The connection waits for its next request; returns false when the server is stopping
  // (the connection should close instead). Idle connections are shut down by stop().
  virtual bool begin_idle(uint64_t id) = 0;
  // A request started arriving; stop() now lets it finish within the grace period.
  virtual void end_idle(uint64_t id) = 0;
  virtual bool stopping() const = 0;
};

void serve_connection(const ServerOptions& options, const Dispatch& dispatch,
                      const std::shared_ptr<Socket>& socket, ConnectionOwner& owner, uint64_t id);

// `{"error":{"code":...,"message":...,"type":...}}` with the message JSON-escaped.
std::string json_error(int code, std::string_view message, std::string_view type);

}  // namespace hearth::server::http
