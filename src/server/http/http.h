// The HTTP layer: HTTP/1.1 on Boost.Asio/Beast, event-driven. A few I/O threads serve every
// connection with asynchronous reads and writes; nothing here blocks a thread on a client or
// on the layer above. Each connection is held to limits: a deadline for its request headers
// and body, header size and count, body size, and a server-wide connection limit derived from
// the file-descriptor limit. Routes and middleware (CORS, API key, loading gate, 404 body) and
// every error body live in the layer above, which supplies one dispatch function and one
// error renderer.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "base/serving_defaults.h"
#include "base/status.h"
#include "server/http/stream.h"

namespace hearth::server::http {

struct Request {
  std::string method;  // "GET", "POST", ... ("HEAD" is served like "GET" above this layer)
  std::string path;    // percent-decoded path without the query
  std::vector<std::pair<std::string, std::string>> query;    // decoded, in order
  std::vector<std::pair<std::string, std::string>> headers;  // as received
  std::string body;
  // Case-insensitive header lookup; nullopt when absent.
  std::optional<std::string> header(std::string_view name) const;
  // First value of a query parameter; nullopt when absent.
  std::optional<std::string> query_param(std::string_view name) const;
};

class PendingResponse;

struct Response {
  int status = 200;
  std::string content_type = "application/json; charset=utf-8";
  std::string body;
  std::vector<std::pair<std::string, std::string>> headers;  // extra headers
  // When set, the body is streamed with chunked encoding from here (status and headers are
  // flushed first) and `body` is ignored.
  std::shared_ptr<StreamSource> stream;
  std::chrono::seconds ping_interval{0};  // 0: no keep-alive comments
  std::string ping_chunk = ":\n\n";
  // When set, the real response comes later (the handler waits for the scheduler); this
  // response's headers are added to it, everything else here is ignored.
  std::shared_ptr<PendingResponse> pending;
};

// A response a handler cannot give at once (it waits for the scheduler). The producer
// resolves it once, from any thread, with a function that builds the response; the
// connection runs that function on its own I/O thread, so rendering (JSON, text) never runs
// on the producer's thread. If the client goes away first, the producer is told.
class PendingResponse {
 public:
  using Render = std::function<Response()>;

  // Producer side, any thread. Only the first call counts.
  void resolve(Render render);
  // True once the client went away or the server stopped before the response was written.
  bool cancelled() const;
  // Runs `callback` once when cancelled (at once, on this thread, if it already is).
  void set_on_cancel(std::function<void()> callback);

  // HTTP side: `ready` runs once, on the resolving thread (at once if already resolved).
  void on_ready(std::function<void(Render)> ready);
  void cancel();

 private:
  mutable std::mutex mutex_;
  Render render_;
  bool resolved_ = false;
  bool cancelled_ = false;
  std::function<void(Render)> ready_;
  std::function<void()> on_cancel_;
};

using Dispatch = std::function<Response(const Request&)>;

// Failures the transport answers itself, before or instead of the dispatch function.
enum class TransportError {
  kBadRequest,          // 400: not HTTP, a bad header, a bad chunk
  kUnknownMethod,       // 400: a method HTTP/1.1 servers do not know
  kHeadersTooLarge,     // 431: request line and headers over the size or count limit
  kBodyTooLarge,        // 413: body over the size limit
  kRequestTimeout,      // 408: headers or body not received before their deadline
  kTooManyConnections,  // 503: the connection limit is reached and no idle one can be closed
  kHandlerFailed,       // 500: the dispatch function threw
};

// Builds the response for a transport error (the layer above owns every error body).
using ErrorRenderer = std::function<Response(TransportError error, std::string_view detail)>;

// The status code of each transport error.
int transport_status(TransportError error);

// A request's headers must arrive within this time of its first byte (or within the
// read timeout when that is shorter): a client dripping its headers holds a connection for
// no longer than this.
inline constexpr std::chrono::seconds kHeaderDeadline{10};
inline constexpr size_t kMaxHeaderBytes = 64 * 1024;
inline constexpr size_t kMaxHeaderFields = 128;
// File descriptors kept free beside the connection limit: model and log files, slot files,
// the event loop's own, and short-lived sockets that carry a 503 to clients over the limit.
inline constexpr int kReservedDescriptors = 128;

// Where the server listens and its limits: plain values, set by options, compared whole.
struct ListenOptions {
  std::string host = "127.0.0.1";
  int port = kDefaultPort;                       // 0: any free port
  int timeout_seconds = kDefaultTimeoutSeconds;  // --timeout: keep-alive idle, body, each write
  std::chrono::milliseconds header_deadline = kHeaderDeadline;
  size_t max_body_bytes = 64u << 20;
  size_t max_header_bytes = kMaxHeaderBytes;
  size_t max_header_fields = kMaxHeaderFields;
  // Open connections at most; 0: the descriptor limit less kReservedDescriptors. At the
  // limit the connection idle longest is closed to make room; when none is idle, the new
  // one is answered 503 and closed.
  int max_connections = 0;
  // I/O threads, and as many worker threads for the handlers of requests with a body and
  // for rendering answers; 0: min(4, max(2, hardware threads)).
  int io_threads = 0;
  bool reuse_port = false;
  // --ssl-key-file, --ssl-cert-file: with both, HTTPS only on this port (PEM files); one
  // alone is a startup error (listen() refuses it).
  std::string ssl_key_file;
  std::string ssl_cert_file;
  std::string server_header = "llama.cpp";

  bool operator==(const ListenOptions&) const = default;
};

struct ServerOptions : ListenOptions {
  ErrorRenderer render_error;  // unset: a plain-text body

  // The settings, not the renderer (a function the server sets, not an option).
  bool operator==(const ServerOptions& o) const {
    return static_cast<const ListenOptions&>(*this) == o;
  }
};

// What the server is doing, for tests and logs.
struct ServerStats {
  size_t open_connections = 0;
  size_t idle_connections = 0;  // waiting for a request's first byte
  int max_connections = 0;
  int io_threads = 0;
  int worker_threads = 0;  // handlers of requests with a body, and renders (4 per I/O thread)
  int large_body_worker_threads = 0;  // handlers of bodies over kLargeBody
  uint64_t evicted = 0;               // idle connections closed to make room at the limit
  uint64_t rejected = 0;              // connections answered 503 at the limit
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
  // Serves until stop(): runs the I/O threads, the calling thread being one of them.
  void run();
  // Stops accepting, closes idle connections, waits up to `grace` for in-flight requests
  // and streams to finish, then closes the rest and returns once run() has returned.
  void stop(std::chrono::milliseconds grace = std::chrono::milliseconds(5000));
  ServerStats stats() const;

 private:
  struct Impl;
  std::shared_ptr<Impl> impl_;
};

}  // namespace hearth::server::http
