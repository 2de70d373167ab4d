#include "unit/hub/local_http_server.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include <fmt/format.h>

namespace hearth::test {

namespace {

constexpr int kPollMs = 20;

int listen_on(const std::string& address, int* port) {
  const bool v6 = address.find(':') != std::string::npos;
  const int fd = ::socket(v6 ? AF_INET6 : AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return -1;
  const int one = 1;
  ::setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
  sockaddr_storage storage{};
  socklen_t length = 0;
  if (v6) {
    auto* in6 = reinterpret_cast<sockaddr_in6*>(&storage);
    in6->sin6_family = AF_INET6;
    length = sizeof(*in6);
    if (inet_pton(AF_INET6, address.c_str(), &in6->sin6_addr) != 1) length = 0;
  } else {
    auto* in = reinterpret_cast<sockaddr_in*>(&storage);
    in->sin_family = AF_INET;
    length = sizeof(*in);
    if (inet_pton(AF_INET, address.c_str(), &in->sin_addr) != 1) length = 0;
  }
  if (length == 0 || ::bind(fd, reinterpret_cast<sockaddr*>(&storage), length) != 0 ||
      ::listen(fd, 16) != 0 ||
      ::getsockname(fd, reinterpret_cast<sockaddr*>(&storage), &length) != 0) {
    ::close(fd);
    return -1;
  }
  *port = ntohs(v6 ? reinterpret_cast<sockaddr_in6*>(&storage)->sin6_port
                   : reinterpret_cast<sockaddr_in*>(&storage)->sin_port);
  return fd;
}

// Waits for `fd` to become readable; false when the server stops first.
bool wait_readable(int fd, const std::atomic<bool>& stopping) {
  while (!stopping.load()) {
    pollfd p{fd, POLLIN, 0};
    const int n = ::poll(&p, 1, kPollMs);
    if (n > 0) return true;
    if (n < 0 && errno != EINTR) return false;
  }
  return false;
}

}  // namespace

bool LocalResponder::send(std::string_view data) {
  while (!data.empty()) {
    if (server_.stopping_.load()) return false;
    pollfd p{fd_, POLLOUT, 0};
    if (::poll(&p, 1, kPollMs) <= 0) continue;
    const ssize_t n = ::send(fd_, data.data(), data.size(), MSG_NOSIGNAL);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    server_.bytes_sent_ += static_cast<uint64_t>(n);
    data.remove_prefix(static_cast<size_t>(n));
  }
  return true;
}

bool LocalResponder::wait_for_stop(std::chrono::milliseconds limit) {
  std::unique_lock lock(server_.mutex_);
  return server_.stopped_.wait_for(lock, limit, [&] { return server_.stopping_.load(); });
}

LocalHttpServer::LocalHttpServer(Handler handler, const std::string& address)
    : handler_(std::move(handler)) {
  listen_fd_ = listen_on(address, &port_);
  if (listen_fd_ >= 0) acceptor_ = std::thread([this] { accept_loop(); });
}

LocalHttpServer::~LocalHttpServer() {
  stop();
}

void LocalHttpServer::stop() {
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
  }
  stopped_.notify_all();
  if (acceptor_.joinable()) acceptor_.join();
  for (std::thread& worker : workers_)
    if (worker.joinable()) worker.join();
  workers_.clear();
  if (listen_fd_ >= 0) ::close(listen_fd_);
  listen_fd_ = -1;
}

std::string LocalHttpServer::url(std::string_view host, std::string_view path) const {
  return fmt::format("http://{}:{}{}", host, port_, path);
}

std::vector<LocalRequest> LocalHttpServer::requests() const {
  std::lock_guard lock(mutex_);
  return requests_;
}

void LocalHttpServer::accept_loop() {
  while (wait_readable(listen_fd_, stopping_)) {
    const int fd = ::accept4(listen_fd_, nullptr, nullptr, SOCK_CLOEXEC);
    if (fd < 0) continue;
    ++connections_;
    // Only this thread adds workers; stop() joins them after joining it.
    workers_.emplace_back([this, fd] {
      serve(fd);
      ::close(fd);
    });
  }
}

void LocalHttpServer::serve(int fd) {
  std::string head;
  char buffer[4096];
  while (head.find("\r\n\r\n") == std::string::npos) {
    if (head.size() > 65536 || !wait_readable(fd, stopping_)) return;
    const ssize_t n = ::recv(fd, buffer, sizeof(buffer), 0);
    if (n <= 0) return;
    head.append(buffer, static_cast<size_t>(n));
  }
  LocalRequest request;
  request.head = head.substr(0, head.find("\r\n\r\n"));
  const size_t space = head.find(' ');
  request.method = head.substr(0, space);
  request.target = head.substr(space + 1, head.find(' ', space + 1) - space - 1);
  {
    std::lock_guard lock(mutex_);
    requests_.push_back(request);
  }
  LocalResponder responder(*this, fd);
  handler_(request, responder);
}

std::string http_response(int status, std::string_view body, std::string_view extra_headers) {
  return fmt::format("HTTP/1.1 {} X\r\nContent-Length: {}\r\nConnection: close\r\n{}\r\n{}", status,
                     body.size(), extra_headers, body);
}

}  // namespace hearth::test
