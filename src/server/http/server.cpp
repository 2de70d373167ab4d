// HttpServer: an accept loop on the caller's thread (run()) and one thread per connection.
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <map>
#include <string>
#include <thread>

#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>

#include "base/log.h"
#include "server/http/connection.h"
#include "server/http/http.h"
#include "server/http/socket.h"

namespace hearth::server::http {

namespace asio = boost::asio;
using tcp = asio::ip::tcp;

struct HttpServer::Impl final : ConnectionOwner {
  struct Connection {
    std::shared_ptr<Socket> socket;
    std::thread thread;
    bool idle = false;
    bool done = false;
  };

  Impl(ServerOptions o, Dispatch d) : options(std::move(o)), dispatch(std::move(d)) {}
  ~Impl() override;

  bool begin_idle(uint64_t id) override;
  void end_idle(uint64_t id) override;
  bool stopping() const override;

  Status listen();
  void run();
  void stop(std::chrono::milliseconds grace);
  void accept_ready();
  void start_connection(int fd);
  void finish_connection(uint64_t id);
  // Joins connection threads that have ended (all of them with `all`).
  void join_finished(bool all);

  const ServerOptions options;
  const Dispatch dispatch;
  asio::io_context io;
  tcp::acceptor acceptor{io};
  int bound_port = 0;
  // stop() writes to this pipe to wake run() out of poll(); closing the acceptor from
  // another thread would not reliably wake a blocked accept.
  int wake_read = -1;
  int wake_write = -1;

  mutable std::mutex mutex;
  std::condition_variable changed;
  bool listening = false;
  bool running = false;
  bool stop_requested = false;
  uint64_t next_id = 1;
  size_t n_active = 0;
  std::map<uint64_t, Connection> connections;
};

HttpServer::Impl::~Impl() {
  if (wake_read >= 0) ::close(wake_read);
  if (wake_write >= 0) ::close(wake_write);
}

bool HttpServer::Impl::begin_idle(uint64_t id) {
  std::lock_guard<std::mutex> lock(mutex);
  if (stop_requested) return false;
  auto it = connections.find(id);
  if (it != connections.end()) it->second.idle = true;
  return true;
}

void HttpServer::Impl::end_idle(uint64_t id) {
  std::lock_guard<std::mutex> lock(mutex);
  auto it = connections.find(id);
  if (it != connections.end()) it->second.idle = false;
}

bool HttpServer::Impl::stopping() const {
  std::lock_guard<std::mutex> lock(mutex);
  return stop_requested;
}

Status HttpServer::Impl::listen() {
  if (listening) return error(ErrorCode::kInvalidArgument, "http server is already listening");
  if (wake_read < 0) {  // a listen() that failed to bind may be retried
    int fds[2];
    if (::pipe2(fds, O_CLOEXEC | O_NONBLOCK) != 0) {
      return error(ErrorCode::kIo, std::string("http server: pipe failed: ") + strerror(errno));
    }
    wake_read = fds[0];
    wake_write = fds[1];
  }
  const std::string where = options.host + ":" + std::to_string(options.port);
  boost::system::error_code ec;
  tcp::resolver resolver(io);
  auto endpoints = resolver.resolve(options.host, std::to_string(options.port),
                                    tcp::resolver::passive | tcp::resolver::numeric_service, ec);
  if (ec) return error(ErrorCode::kIo, "cannot resolve " + where + ": " + ec.message());
  for (const auto& entry : endpoints) {
    acceptor.open(entry.endpoint().protocol(), ec);
    if (ec) continue;
    acceptor.set_option(tcp::acceptor::reuse_address(true), ec);
    acceptor.bind(entry.endpoint(), ec);
    if (!ec) acceptor.listen(asio::socket_base::max_listen_connections, ec);
    if (!ec) break;
    boost::system::error_code ignored;
    acceptor.close(ignored);
  }
  if (ec || !acceptor.is_open()) {
    return error(ErrorCode::kIo, "couldn't bind HTTP server socket to " + where + ": " +
                                     (ec ? ec.message() : std::string("no address")));
  }
  // Non-blocking so a connection that vanishes between poll() and accept() cannot block
  // the loop.
  acceptor.non_blocking(true, ec);
  bound_port = acceptor.local_endpoint(ec).port();
  std::lock_guard<std::mutex> lock(mutex);
  listening = true;
  return Status::ok();
}

void HttpServer::Impl::run() {
  {
    std::lock_guard<std::mutex> lock(mutex);
    if (!listening || stop_requested || running) return;
    running = true;
  }
  const int listen_fd = acceptor.native_handle();
  for (;;) {
    join_finished(false);
    pollfd fds[2] = {{listen_fd, POLLIN, 0}, {wake_read, POLLIN, 0}};
    // The timeout only bounds how long ended connection threads wait to be joined.
    int r = ::poll(fds, 2, 1000);
    if (r < 0 && errno != EINTR) {
      log_error("http: poll on the listening socket failed: {}", strerror(errno));
      break;
    }
    if (stopping()) break;
    if (r > 0 && (fds[0].revents & POLLIN)) accept_ready();
  }
  // Notify under the lock: once stop() sees running == false it may destroy this object,
  // so the notification must not touch the condition variable after the unlock.
  std::lock_guard<std::mutex> lock(mutex);
  running = false;
  changed.notify_all();
}

void HttpServer::Impl::accept_ready() {
  int fd = ::accept4(acceptor.native_handle(), nullptr, nullptr, SOCK_NONBLOCK | SOCK_CLOEXEC);
  if (fd < 0) {
    if (errno == EMFILE || errno == ENFILE || errno == ENOBUFS || errno == ENOMEM) {
      // Out of descriptors: the pending connection stays readable, so back off instead of
      // spinning on poll().
      log_warn("http: accept failed: {}", strerror(errno));
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
    return;
  }
  start_connection(fd);
}

void HttpServer::Impl::start_connection(int fd) {
  std::lock_guard<std::mutex> lock(mutex);
  if (n_active >= static_cast<size_t>(std::max(1, options.max_connections))) {
    log_warn("http: {} connections open, refusing another", n_active);
    ::close(fd);
    return;
  }
  int one = 1;
  // Streamed tokens are small writes that must leave at once, not wait for Nagle.
  ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
  const uint64_t id = next_id++;
  Connection& connection = connections[id];
  connection.socket = std::make_shared<Socket>(fd);
  try {
    connection.thread = std::thread([this, id, socket = connection.socket] {
      serve_connection(options, dispatch, socket, *this, id);
      finish_connection(id);
    });
    ++n_active;
  } catch (const std::system_error& e) {
    log_error("http: cannot start a connection thread: {}", e.what());
    connections.erase(id);  // the Socket closes the descriptor
  }
}

void HttpServer::Impl::finish_connection(uint64_t id) {
  {
    std::lock_guard<std::mutex> lock(mutex);
    // stop() may already have taken the entry to join this very thread.
    auto it = connections.find(id);
    if (it != connections.end()) it->second.done = true;
    --n_active;
  }
  changed.notify_all();
}

void HttpServer::Impl::join_finished(bool all) {
  std::vector<std::thread> threads;
  {
    std::lock_guard<std::mutex> lock(mutex);
    for (auto it = connections.begin(); it != connections.end();) {
      if (all || it->second.done) {
        threads.push_back(std::move(it->second.thread));
        it = connections.erase(it);
      } else {
        ++it;
      }
    }
  }
  for (auto& thread : threads) {
    if (thread.joinable()) thread.join();
  }
}

void HttpServer::Impl::stop(std::chrono::milliseconds grace) {
  {
    std::unique_lock<std::mutex> lock(mutex);
    stop_requested = true;
    for (auto& [id, connection] : connections) {
      if (connection.idle && !connection.done) connection.socket->shutdown();
    }
  }
  if (wake_write >= 0) {
    char byte = 1;
    [[maybe_unused]] ssize_t n = ::write(wake_write, &byte, 1);
  }
  {
    std::unique_lock<std::mutex> lock(mutex);
    changed.wait(lock, [this] { return !running; });
  }
  boost::system::error_code ignored;
  acceptor.close(ignored);
  {
    std::unique_lock<std::mutex> lock(mutex);
    changed.wait_for(lock, grace, [this] { return n_active == 0; });
    // Past the grace period: wake whatever is still blocked on its socket. Handlers that
    // poll client_connected() see false; streams see a failed write and are abandoned.
    for (auto& [id, connection] : connections) {
      if (!connection.done) connection.socket->shutdown();
    }
  }
  join_finished(true);
}

HttpServer::HttpServer(ServerOptions options, Dispatch dispatch)
    : impl_(std::make_unique<Impl>(std::move(options), std::move(dispatch))) {}

// No grace here: a destructor that waits seconds for handlers surprises more than it helps;
// callers who want a graceful shutdown call stop() first (a second stop() is cheap).
HttpServer::~HttpServer() {
  stop(std::chrono::milliseconds(0));
}

Status HttpServer::listen() {
  return impl_->listen();
}

int HttpServer::port() const {
  return impl_->bound_port;
}

void HttpServer::run() {
  impl_->run();
}

void HttpServer::stop(std::chrono::milliseconds grace) {
  impl_->stop(grace);
}

}  // namespace hearth::server::http
