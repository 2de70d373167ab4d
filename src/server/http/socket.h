// A connection's socket: the descriptor shared with Request::client_connected closures, and
// a blocking-with-timeout stream over it that Beast's synchronous read/write accept.
//
// Asio's own synchronous socket operations ignore SO_RCVTIMEO (they poll without a timeout
// after EAGAIN), so the stream does its own poll() with the configured timeout instead.
#pragma once

#include <sys/uio.h>

#include <array>
#include <chrono>
#include <mutex>

#include <boost/asio/buffer.hpp>
#include <boost/system/error_code.hpp>
#include <boost/system/system_error.hpp>

namespace hearth::server::http {

// Owns the descriptor. Handlers may keep a copy of client_connected after the connection
// ended, so every use from other threads goes through the mutex and sees -1 once closed,
// never a descriptor number the kernel has since reused.
class Socket {
 public:
  explicit Socket(int fd) : fd_(fd) {}
  ~Socket();
  Socket(const Socket&) = delete;
  Socket& operator=(const Socket&) = delete;

  // For the connection thread's own I/O, which is the only code that closes it.
  int fd() const { return fd_; }
  // Non-blocking check: false once the peer closed or reset (or we shut it down).
  bool connected() const;
  // Wakes the connection thread out of a blocked read or write (server stop).
  void shutdown();
  // Sends our FIN and reads what the peer still sends for up to `linger`, so an error
  // response written before unread request bytes is not destroyed by a TCP reset.
  void close_gracefully(std::chrono::milliseconds linger);
  void close();

 private:
  mutable std::mutex mutex_;
  int fd_;
};

// SyncReadStream / SyncWriteStream over a non-blocking descriptor; each call waits at most
// `timeout` for the socket to become ready, then fails with asio::error::timed_out.
class FdStream {
 public:
  FdStream(int fd, std::chrono::milliseconds timeout) : fd_(fd), timeout_(timeout) {}

  template <class MutableBuffers>
  size_t read_some(const MutableBuffers& buffers, boost::system::error_code& ec) {
    std::array<iovec, kMaxIov> iov;
    int n = 0;
    for (auto it = boost::asio::buffer_sequence_begin(buffers);
         it != boost::asio::buffer_sequence_end(buffers) && n < kMaxIov; ++it) {
      boost::asio::mutable_buffer b(*it);
      if (b.size() > 0) iov[n++] = iovec{b.data(), b.size()};
    }
    return read_iov(iov.data(), n, ec);
  }
  template <class MutableBuffers>
  size_t read_some(const MutableBuffers& buffers) {
    boost::system::error_code ec;
    size_t n = read_some(buffers, ec);
    if (ec) throw boost::system::system_error(ec);
    return n;
  }

  template <class ConstBuffers>
  size_t write_some(const ConstBuffers& buffers, boost::system::error_code& ec) {
    std::array<iovec, kMaxIov> iov;
    int n = 0;
    for (auto it = boost::asio::buffer_sequence_begin(buffers);
         it != boost::asio::buffer_sequence_end(buffers) && n < kMaxIov; ++it) {
      boost::asio::const_buffer b(*it);
      if (b.size() > 0) iov[n++] = iovec{const_cast<void*>(b.data()), b.size()};
    }
    return write_iov(iov.data(), n, ec);
  }
  template <class ConstBuffers>
  size_t write_some(const ConstBuffers& buffers) {
    boost::system::error_code ec;
    size_t n = write_some(buffers, ec);
    if (ec) throw boost::system::system_error(ec);
    return n;
  }

 private:
  static constexpr int kMaxIov = 16;
  size_t read_iov(iovec* iov, int n, boost::system::error_code& ec);
  size_t write_iov(iovec* iov, int n, boost::system::error_code& ec);
  // Waits for `events`; false (with ec set) on timeout or poll failure.
  bool wait(short events, boost::system::error_code& ec);

  int fd_;
  std::chrono::milliseconds timeout_;
};

}  // namespace hearth::server::http
