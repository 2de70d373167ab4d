// A tiny HTTP/1.1 server on a loopback port, in the test's process, for the media fetch tests:
// one thread per connection, one request per connection ("Connection: close"), the response
// written by the test's handler as raw bytes so that it can stall, drip, redirect or lie. It
// counts what it saw, so a test can assert that a refused URL never reached it.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <mutex>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

namespace hearth::test {

struct LocalRequest {
  std::string method;
  std::string target;
  std::string head;  // the request line and headers as received
};

class LocalHttpServer;

// The handler's side of one connection.
class LocalResponder {
 public:
  LocalResponder(LocalHttpServer& server, int fd) : server_(server), fd_(fd) {}
  // Writes all of `data`; false once the client has gone (or the server stops).
  bool send(std::string_view data);
  // Waits until the server stops or `limit` passes; true when it stopped.
  bool wait_for_stop(std::chrono::milliseconds limit);

 private:
  LocalHttpServer& server_;
  int fd_;
};

class LocalHttpServer {
 public:
  using Handler = std::function<void(const LocalRequest&, LocalResponder&)>;

  // Listens on `address` ("127.0.0.1" or "::1") at a free port.
  explicit LocalHttpServer(Handler handler, const std::string& address = "127.0.0.1");
  ~LocalHttpServer();
  LocalHttpServer(const LocalHttpServer&) = delete;
  LocalHttpServer& operator=(const LocalHttpServer&) = delete;

  bool ok() const { return listen_fd_ >= 0; }
  int port() const { return port_; }
  // "http://<host>:<port><path>", the host as given (a name or a literal in brackets).
  std::string url(std::string_view host, std::string_view path) const;

  int connections() const { return connections_.load(); }
  std::vector<LocalRequest> requests() const;
  // Bytes (headers included) the handlers' send calls got into the kernel.
  uint64_t bytes_sent() const { return bytes_sent_.load(); }
  void stop();

 private:
  friend class LocalResponder;
  void accept_loop();
  void serve(int fd);

  Handler handler_;
  int listen_fd_ = -1;
  int port_ = 0;
  std::atomic<bool> stopping_{false};
  std::atomic<int> connections_{0};
  std::atomic<uint64_t> bytes_sent_{0};
  mutable std::mutex mutex_;
  std::condition_variable stopped_;
  std::vector<LocalRequest> requests_;
  std::vector<std::thread> workers_;
  std::thread acceptor_;
};

// A complete response with a Content-Length.
std::string http_response(int status, std::string_view body, std::string_view extra_headers = "");

}  // namespace hearth::test
