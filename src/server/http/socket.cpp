#include "server/http/socket.h"

#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>

#include <boost/asio/error.hpp>

namespace hearth::server::http {
namespace {

boost::system::error_code errno_code() {
  return boost::system::error_code(errno, boost::system::system_category());
}

}  // namespace

Socket::~Socket() {
  close();
}

bool Socket::connected() const {
  std::lock_guard<std::mutex> lock(mutex_);
  if (fd_ < 0) return false;
  pollfd pfd{fd_, POLLIN | POLLRDHUP, 0};
  if (::poll(&pfd, 1, 0) < 0) return errno == EINTR;
  if (pfd.revents & (POLLERR | POLLHUP | POLLNVAL | POLLRDHUP)) return false;
  if (!(pfd.revents & POLLIN)) return true;
  // Readable: either a pipelined request (still connected) or EOF/reset.
  char byte;
  ssize_t n = ::recv(fd_, &byte, 1, MSG_PEEK | MSG_DONTWAIT);
  if (n > 0) return true;
  if (n == 0) return false;
  return errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR;
}

void Socket::shutdown() {
  std::lock_guard<std::mutex> lock(mutex_);
  if (fd_ >= 0) ::shutdown(fd_, SHUT_RDWR);
}

void Socket::close_gracefully(std::chrono::milliseconds linger) {
  int fd = fd_;
  if (fd < 0) return;
  ::shutdown(fd, SHUT_WR);
  auto deadline = std::chrono::steady_clock::now() + linger;
  char scratch[4096];
  size_t drained = 0;
  // Bounded so a client streaming a huge body cannot hold the thread past `linger`.
  while (drained < (1u << 20)) {
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) break;
    pollfd pfd{fd, POLLIN, 0};
    int r = ::poll(&pfd, 1, static_cast<int>(left.count()));
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) break;
    ssize_t n = ::recv(fd, scratch, sizeof scratch, MSG_DONTWAIT);
    if (n < 0 && (errno == EAGAIN || errno == EINTR)) continue;
    if (n <= 0) break;
    drained += static_cast<size_t>(n);
  }
  close();
}

void Socket::close() {
  std::lock_guard<std::mutex> lock(mutex_);
  if (fd_ >= 0) ::close(fd_);
  fd_ = -1;
}

bool FdStream::wait(short events, boost::system::error_code& ec) {
  for (;;) {
    pollfd pfd{fd_, events, 0};
    int r = ::poll(&pfd, 1, static_cast<int>(timeout_.count()));
    if (r > 0) return true;  // ready, or an error the following syscall reports
    if (r == 0) {
      ec = boost::asio::error::timed_out;
      return false;
    }
    if (errno != EINTR) {
      ec = errno_code();
      return false;
    }
  }
}

size_t FdStream::read_iov(iovec* iov, int n, boost::system::error_code& ec) {
  ec = {};
  if (n == 0) return 0;
  for (;;) {
    ssize_t got = ::readv(fd_, iov, n);
    if (got > 0) return static_cast<size_t>(got);
    if (got == 0) {
      ec = boost::asio::error::eof;
      return 0;
    }
    if (errno == EINTR) continue;
    if (errno != EAGAIN && errno != EWOULDBLOCK) {
      ec = errno_code();
      return 0;
    }
    if (!wait(POLLIN, ec)) return 0;
  }
}

size_t FdStream::write_iov(iovec* iov, int n, boost::system::error_code& ec) {
  ec = {};
  if (n == 0) return 0;
  msghdr msg{};
  msg.msg_iov = iov;
  msg.msg_iovlen = static_cast<size_t>(n);
  for (;;) {
    // MSG_NOSIGNAL: a client that went away must not raise SIGPIPE in the whole process.
    ssize_t sent = ::sendmsg(fd_, &msg, MSG_NOSIGNAL);
    if (sent >= 0) return static_cast<size_t>(sent);
    if (errno == EINTR) continue;
    if (errno != EAGAIN && errno != EWOULDBLOCK) {
      ec = errno_code();
      return 0;
    }
    if (!wait(POLLOUT, ec)) return 0;
  }
}

}  // namespace hearth::server::http
