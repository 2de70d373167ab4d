// HttpServer: the listener, the I/O threads and the registry of open connections, which
// enforces the connection limit and lets stop() close them.
#include <sys/resource.h>

#include <algorithm>
#include <condition_variable>
#include <optional>
#include <sstream>
#include <string>
#include <thread>
#include <unordered_map>

#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/strand.hpp>
#include <boost/asio/thread_pool.hpp>
#include <boost/beast/http/message.hpp>
#include <boost/beast/http/string_body.hpp>
#include <boost/beast/http/write.hpp>

#include "base/log.h"
#include "base/memory.h"
#include "server/http/connection.h"
#include "server/http/http.h"
#include "server/http/tls.h"

namespace hearth::server::http {

namespace asio = boost::asio;
using tcp = asio::ip::tcp;
using boost::system::error_code;

namespace {

// Sockets that carry a 503 to clients over the limit, draining what the client sends so the
// answer is not lost to a reset: at most this many at a time (each is closed within a
// second); past that, the 503 is sent in one write and the socket closed at once.
constexpr size_t kMaxRejecting = 64;

int descriptor_limit() {
  rlimit limit{};
  if (getrlimit(RLIMIT_NOFILE, &limit) != 0 || limit.rlim_cur == RLIM_INFINITY) return 1 << 20;
  return static_cast<int>(std::min<rlim_t>(limit.rlim_cur, 1 << 20));
}

int io_thread_count(int requested) {
  if (requested > 0) return std::min(requested, 64);
  const int hardware = static_cast<int>(std::thread::hardware_concurrency());
  return std::clamp(hardware, 2, 4);
}

// A complete "Connection: close" response as bytes.
std::string serialize_response(const Response& response, const std::string& server_header) {
  boost::beast::http::response<boost::beast::http::string_body> message;
  message.version(11);
  message.result(static_cast<unsigned>(response.status));
  message.set(boost::beast::http::field::server, server_header);
  message.set(boost::beast::http::field::content_type, response.content_type);
  message.keep_alive(false);
  message.body() = response.body;
  message.prepare_payload();
  std::ostringstream out;
  out << message;
  return out.str();
}

Response plain_error(TransportError error, std::string_view detail) {
  Response response;
  response.status = transport_status(error);
  response.content_type = "text/plain";
  response.body = std::string(detail);
  return response;
}

}  // namespace

// Handlers are short but some take tens of milliseconds (a chat template with tools, a
// large schema): with several per I/O thread the system's time slicing lets a small request
// finish beside them instead of waiting in the queue behind them.
constexpr int kWorkersPerIoThread = 4;

struct HttpServer::Impl final : ConnectionHost, std::enable_shared_from_this<Impl> {
  struct Entry {
    // The registry keeps every open connection alive (one waiting for a producer may have
    // no handler pending); Connection::close() removes it.
    std::shared_ptr<Connection> connection;
    bool idle = false;
    bool closing = false;  // asked to close (eviction): not picked again
    std::chrono::steady_clock::time_point idle_since;
  };

  Impl(ServerOptions o, Dispatch d)
      : options_(std::move(o)),
        dispatch_(std::move(d)),
        max_connections_(options_.max_connections > 0
                             ? options_.max_connections
                             : std::max(16, descriptor_limit() - kReservedDescriptors)),
        io_threads_(io_thread_count(options_.io_threads)),
        workers_(std::in_place, static_cast<size_t>(kWorkersPerIoThread * io_threads_)),
        large_body_workers_(std::in_place, static_cast<size_t>(io_threads_)) {}
  ~Impl() override { stop_workers(); }

  void stop_workers() {
    for (auto* pool : {&workers_, &large_body_workers_}) {
      if (!*pool) continue;
      (*pool)->stop();
      (*pool)->join();
    }
  }

  // ConnectionHost.
  const ServerOptions& options() const override { return options_; }
  Response dispatch(const Request& request) const override { return dispatch_(request); }
  Response render_error(TransportError error, std::string_view detail) const override {
    return options_.render_error ? options_.render_error(error, detail)
                                 : plain_error(error, detail);
  }
  void set_idle(uint64_t id, bool idle) override;
  void connection_closed(uint64_t id) override;
  bool stopping() const override { return stop_requested_.load(); }
  asio::any_io_executor workers() override { return workers_->get_executor(); }
  asio::any_io_executor large_body_workers() override {
    return large_body_workers_->get_executor();
  }

  Status listen();
  void run();
  void stop(std::chrono::milliseconds grace);
  ServerStats stats() const;

  void accept_next();
  void schedule_memory_check();
  void on_accept(const error_code& ec, tcp::socket socket);
  // At the limit: the connection idle longest, marked for closing (null when none is idle).
  // The caller closes it once the registry's lock is released: its destructor takes it.
  std::shared_ptr<Connection> evict_idle_locked();
  void reject(tcp::socket socket);
  std::vector<std::shared_ptr<Connection>> live_connections() const;

  const ServerOptions options_;
  const Dispatch dispatch_;
  const int max_connections_;
  const int io_threads_;
  asio::io_context io_;
  // Handlers and renders run here, off the I/O threads; the handlers of bodies over
  // kLargeBody in the second pool. Destroyed at the end of stop().
  std::optional<asio::thread_pool> workers_;
  std::optional<asio::thread_pool> large_body_workers_;
  // The acceptor and its retry timer run on one strand (several threads run io_).
  asio::strand<asio::io_context::executor_type> accept_strand_{io_.get_executor()};
  tcp::acceptor acceptor_{accept_strand_};
  asio::steady_timer accept_retry_{accept_strand_};
  // Once a second: after requests were handled and none is in progress, freed heap pages
  // go back to the system (glibc keeps them, so the process would stay at its peak size).
  asio::steady_timer memory_timer_{accept_strand_};
  bool worked_since_trim_ = false;  // under mutex_
  std::optional<asio::executor_work_guard<asio::io_context::executor_type>> work_;
  int bound_port_ = 0;
  // Set by listen() with --ssl-key-file and --ssl-cert-file: every connection speaks TLS.
  std::shared_ptr<asio::ssl::context> tls_;
  std::atomic<bool> stop_requested_{false};

  mutable std::mutex mutex_;
  std::condition_variable changed_;
  bool listening_ = false;
  bool running_ = false;
  uint64_t next_id_ = 1;
  std::unordered_map<uint64_t, Entry> connections_;
  size_t rejecting_ = 0;
  uint64_t evicted_ = 0;
  uint64_t rejected_ = 0;
};

void HttpServer::Impl::set_idle(uint64_t id, bool idle) {
  std::lock_guard<std::mutex> lock(mutex_);
  auto it = connections_.find(id);
  if (it == connections_.end() || it->second.idle == idle) return;
  it->second.idle = idle;
  if (!idle) worked_since_trim_ = true;
  if (idle) it->second.idle_since = std::chrono::steady_clock::now();
}

void HttpServer::Impl::schedule_memory_check() {
  memory_timer_.expires_after(std::chrono::seconds(1));
  memory_timer_.async_wait([this](const error_code& ec) {
    if (ec || stopping()) return;
    bool quiet = false;
    {
      std::lock_guard<std::mutex> lock(mutex_);
      quiet =
          worked_since_trim_ && std::all_of(connections_.begin(), connections_.end(),
                                            [](const auto& entry) { return entry.second.idle; });
      if (quiet) worked_since_trim_ = false;
    }
    if (quiet) return_free_memory();
    schedule_memory_check();
  });
}

void HttpServer::Impl::connection_closed(uint64_t id) {
  std::lock_guard<std::mutex> lock(mutex_);
  if (connections_.erase(id) == 0 && rejecting_ > 0) --rejecting_;
  changed_.notify_all();
}

Status HttpServer::Impl::listen() {
  if (listening_) return error(ErrorCode::kInvalidArgument, "http server is already listening");
  // The certificate and key are checked before the port is taken, so a mistake in them is
  // the startup error rather than a server that fails every handshake.
  auto tls = make_tls_context(options_);
  if (!tls) return tls.status();
  tls_ = std::move(tls.value());
  const std::string where = options_.host + ":" + std::to_string(options_.port);
  error_code ec;
  tcp::resolver resolver(io_);
  auto endpoints = resolver.resolve(options_.host, std::to_string(options_.port),
                                    tcp::resolver::passive | tcp::resolver::numeric_service, ec);
  if (ec) return error(ErrorCode::kIo, "cannot resolve " + where + ": " + ec.message());
  for (const auto& entry : endpoints) {
    acceptor_.open(entry.endpoint().protocol(), ec);
    if (ec) continue;
    acceptor_.set_option(tcp::acceptor::reuse_address(true), ec);
    if (options_.reuse_port) {
      using reuse_port = asio::detail::socket_option::boolean<SOL_SOCKET, SO_REUSEPORT>;
      acceptor_.set_option(reuse_port(true), ec);
    }
    acceptor_.bind(entry.endpoint(), ec);
    if (!ec) acceptor_.listen(asio::socket_base::max_listen_connections, ec);
    if (!ec) break;
    error_code ignored;
    acceptor_.close(ignored);
  }
  if (ec || !acceptor_.is_open()) {
    return error(ErrorCode::kIo, "couldn't bind HTTP server socket to " + where + ": " +
                                     (ec ? ec.message() : std::string("no address")));
  }
  bound_port_ = acceptor_.local_endpoint(ec).port();
  std::lock_guard<std::mutex> lock(mutex_);
  listening_ = true;
  return Status::ok();
}

void HttpServer::Impl::accept_next() {
  acceptor_.async_accept(asio::make_strand(io_),
                         [self = shared_from_this()](const error_code& ec, tcp::socket socket) {
                           self->on_accept(ec, std::move(socket));
                         });
}

void HttpServer::Impl::on_accept(const error_code& ec, tcp::socket socket) {
  if (stopping() || !acceptor_.is_open()) return;
  if (ec) {
    if (ec == asio::error::operation_aborted) return;
    // Out of descriptors (or a connection that vanished): back off rather than spin.
    log_warn("http: accept failed: {}", ec.message());
    accept_retry_.expires_after(std::chrono::milliseconds(100));
    accept_retry_.async_wait([self = shared_from_this()](const error_code& wait_ec) {
      if (!wait_ec) self->accept_next();
    });
    return;
  }
  std::shared_ptr<Connection> connection;
  std::shared_ptr<Connection> evicted;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    const bool full = connections_.size() >= static_cast<size_t>(max_connections_);
    if (full) evicted = evict_idle_locked();
    if (!full || evicted) {
      const uint64_t id = next_id_++;
      connection =
          std::make_shared<Connection>(std::move(socket), tls_.get(), shared_from_this(), id);
      connections_[id] = Entry{connection, false, false, {}};
    }
  }
  if (evicted) evicted->close_soon(false);
  evicted.reset();
  if (connection) {
    connection->start();
  } else {
    reject(std::move(socket));
  }
  accept_next();
}

std::shared_ptr<Connection> HttpServer::Impl::evict_idle_locked() {
  Entry* oldest = nullptr;
  for (auto& [id, entry] : connections_) {
    if (!entry.idle || entry.closing) continue;
    if (oldest == nullptr || entry.idle_since < oldest->idle_since) oldest = &entry;
  }
  if (oldest == nullptr) return nullptr;
  oldest->closing = true;
  ++evicted_;
  return oldest->connection;
}

void HttpServer::Impl::reject(tcp::socket socket) {
  Response refusal = render_error(TransportError::kTooManyConnections,
                                  "too many open connections; try again later");
  std::shared_ptr<Connection> carrier;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    ++rejected_;
    if (rejecting_ < kMaxRejecting) {
      ++rejecting_;
      // Id 0: not in the registry, so it does not count against the limit.
      carrier = std::make_shared<Connection>(std::move(socket), tls_.get(), shared_from_this(), 0);
    }
  }
  log_warn("http: {} connections open, answering another with 503", max_connections_);
  if (carrier) {
    carrier->reject(std::move(refusal));
    return;
  }
  // Too many 503s in flight to linger over each: this one is written at once, in one send
  // into the new socket's empty buffer, and the socket closed. Over TLS a handshake would
  // come first: the socket is just closed.
  error_code ignored;
  if (tls_) {
    socket.close(ignored);
    return;
  }
  const std::string bytes = serialize_response(refusal, options_.server_header);
  socket.non_blocking(true, ignored);
  socket.send(asio::buffer(bytes), 0, ignored);
  socket.shutdown(tcp::socket::shutdown_send, ignored);
  socket.close(ignored);
}

void HttpServer::Impl::run() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (!listening_ || stopping() || running_) return;
    running_ = true;
    work_.emplace(io_.get_executor());
  }
  asio::post(accept_strand_, [this] {
    accept_next();
    schedule_memory_check();
  });
  std::vector<std::thread> threads;
  for (int i = 1; i < io_threads_; ++i) {
    threads.emplace_back([this] { io_.run(); });
  }
  io_.run();
  for (auto& thread : threads) thread.join();
  // Notify under the lock: once stop() sees running_ == false it may destroy this object.
  std::lock_guard<std::mutex> lock(mutex_);
  running_ = false;
  changed_.notify_all();
}

std::vector<std::shared_ptr<Connection>> HttpServer::Impl::live_connections() const {
  std::vector<std::shared_ptr<Connection>> out;
  std::lock_guard<std::mutex> lock(mutex_);
  for (const auto& [id, entry] : connections_) out.push_back(entry.connection);
  return out;
}

void HttpServer::Impl::stop(std::chrono::milliseconds grace) {
  if (stop_requested_.exchange(true)) {
    std::unique_lock<std::mutex> lock(mutex_);
    changed_.wait(lock, [this] { return !running_; });
    return;
  }
  {
    std::unique_lock<std::mutex> lock(mutex_);
    if (!running_) {  // run() never started (and now never will): nothing to drain
      error_code ignored;
      acceptor_.close(ignored);
      return;
    }
  }
  asio::post(accept_strand_, [this] {
    error_code ignored;
    acceptor_.close(ignored);
    accept_retry_.cancel();
    memory_timer_.cancel();
  });
  for (auto& connection : live_connections()) connection->close_soon(false);
  std::unique_lock<std::mutex> lock(mutex_);
  changed_.wait_for(lock, grace, [this] { return connections_.empty(); });
  lock.unlock();
  // Past the grace period: whatever is still open is closed, its work abandoned. Handlers
  // still running finish (and find their connection closed); queued ones are dropped.
  for (auto& connection : live_connections()) connection->close_soon(true);
  stop_workers();
  lock.lock();
  // Without the work guard, run() returns once every handler has run, so none is left
  // holding a connection (or this object) when the I/O threads end.
  work_.reset();
  if (!changed_.wait_for(lock, std::chrono::seconds(3), [this] { return !running_; })) {
    log_warn("http: {} connections did not close in time; stopping the I/O threads",
             connections_.size());
    io_.stop();
    changed_.wait(lock, [this] { return !running_; });
  }
  lock.unlock();
  // A job the stopped workers never ran (an answer queued for rendering as the server
  // stopped) holds its connection, and the connection this object: kept in the pool, they
  // would outlive every owner. Destroying the pool destroys such jobs; nothing runs or posts
  // to it any more.
  workers_.reset();
  large_body_workers_.reset();
}

ServerStats HttpServer::Impl::stats() const {
  std::lock_guard<std::mutex> lock(mutex_);
  ServerStats s;
  s.open_connections = connections_.size();
  for (const auto& [id, entry] : connections_) s.idle_connections += entry.idle ? 1 : 0;
  s.max_connections = max_connections_;
  s.io_threads = io_threads_;
  s.worker_threads = kWorkersPerIoThread * io_threads_;
  s.large_body_worker_threads = io_threads_;
  s.evicted = evicted_;
  s.rejected = rejected_;
  return s;
}

HttpServer::HttpServer(ServerOptions options, Dispatch dispatch)
    : impl_(std::make_shared<Impl>(std::move(options), std::move(dispatch))) {}

// No grace here: a destructor that waits seconds for handlers surprises more than it helps;
// callers who want a graceful shutdown call stop() first (a second stop() is cheap).
HttpServer::~HttpServer() {
  stop(std::chrono::milliseconds(0));
}

Status HttpServer::listen() {
  return impl_->listen();
}

int HttpServer::port() const {
  return impl_->bound_port_;
}

void HttpServer::run() {
  impl_->run();
}

void HttpServer::stop(std::chrono::milliseconds grace) {
  impl_->stop(grace);
}

ServerStats HttpServer::stats() const {
  return impl_->stats();
}

}  // namespace hearth::server::http
