// The HTTP layer: Boost.Beast, one thread per connection (handlers may block while a
// completion runs), keep-alive, body size limit, socket timeouts, chunked SSE streaming.
// Routes and middleware (CORS, API key, loading gate, 404 body) live in the layer above,
// which supplies one dispatch function.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "base/status.h"

namespace hearth::server::http {

struct Request {
  std::string method;                                      // "GET", "POST", ...
  std::string path;                                        // percent-decoded path without the query
  std::vector<std::pair<std::string, std::string>> query;  // decoded, in order
  std::vector<std::pair<std::string, std::string>> headers;  // as received
  std::string body;
  // Case-insensitive header lookup; nullopt when absent.
  std::optional<std::string> header(std::string_view name) const;
  // First value of a query parameter; nullopt when absent.
  std::optional<std::string> query_param(std::string_view name) const;
  // True while the client's connection is still open (polled by long-running handlers).
  std::function<bool()> client_connected;
};

// Chunks of a streamed (SSE) body. The producer (any thread) pushes chunks and closes it;
// the connection thread writes them in order as the socket accepts them, sends a ping
// chunk when nothing came for `ping_interval`, and marks the stream abandoned when the
// client goes away (the producer sees abandoned() and stops).
class StreamBody {
 public:
  void push(std::string chunk);
  void close();
  bool abandoned() const;
  // Called by the HTTP layer once when the client is gone (before abandoned() turns true).
  void set_on_abandon(std::function<void()> callback);

  // HTTP side: waits up to `timeout` for the next chunk. Returns nullopt on timeout; an
  // empty optional-with-value never happens; `closed` is set once drained and closed.
  std::optional<std::string> next(std::chrono::milliseconds timeout, bool& closed);
  void abandon();

 private:
  mutable std::mutex mutex_;
  std::condition_variable ready_;
  std::deque<std::string> chunks_;
  bool closed_ = false;
  bool abandoned_ = false;
  bool abandoning_ = false;  // abandon() ran (its callback may still be running)
  std::function<void()> on_abandon_;
};

struct Response {
  int status = 200;
  std::string content_type = "application/json; charset=utf-8";
  std::string body;
  std::vector<std::pair<std::string, std::string>> headers;  // extra headers
  // When set, the body is streamed with chunked encoding from here (status and headers
  // are flushed first) and `body` is ignored.
  std::shared_ptr<StreamBody> stream;
  std::chrono::seconds ping_interval{0};  // 0: no keep-alive comments
  std::string ping_chunk = ":\n\n";
};

using Dispatch = std::function<Response(const Request&)>;

struct ServerOptions {
  std::string host = "127.0.0.1";
  int port = 8080;            // 0: any free port
  int timeout_seconds = 600;  // read/write socket timeout (--timeout)
  size_t max_body_bytes = 64u << 20;
  int max_connections = 1024;  // further connections are closed at once
  std::string server_header = "llama.cpp";
};

class HttpServer {
 public:
  HttpServer(ServerOptions options, Dispatch dispatch);
  ~HttpServer();
  HttpServer(const HttpServer&) = delete;
  HttpServer& operator=(const HttpServer&) = delete;

  // Binds and listens; the bound port is port() afterwards (useful with port 0).
  Status listen();
  int port() const;
  // Accepts connections until stop(); blocks the calling thread.
  void run();
  // Stops accepting, closes idle connections, waits up to `grace` for in-flight requests.
  void stop(std::chrono::milliseconds grace = std::chrono::milliseconds(5000));

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace hearth::server::http
