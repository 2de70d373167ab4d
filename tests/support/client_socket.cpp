#include "support/client_socket.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <openssl/ssl.h>

#include <cerrno>
#include <csignal>

namespace hearth::test {

namespace {

int connect_local(int port) {
  const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return -1;
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<uint16_t>(port));
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0) {
    ::close(fd);
    return -1;
  }
  return fd;
}

// One client context for every TLS connection: any certificate is accepted.
SSL_CTX* client_tls_context() {
  static SSL_CTX* const context = [] {
    // A write into a connection the server closed must fail, not kill the test (plain
    // writes pass MSG_NOSIGNAL; OpenSSL's cannot).
    std::signal(SIGPIPE, SIG_IGN);
    SSL_CTX* ctx = SSL_CTX_new(TLS_client_method());
    SSL_CTX_set_verify(ctx, SSL_VERIFY_NONE, nullptr);
    return ctx;
  }();
  return context;
}

}  // namespace

ClientSocket::ClientSocket(int port, bool tls) : fd_(connect_local(port)) {
  if (fd_ < 0 || !tls) return;
  ssl_ = SSL_new(client_tls_context());
  SSL_set_fd(ssl_, fd_);
  SSL_set_tlsext_host_name(ssl_, "localhost");
  if (SSL_connect(ssl_) != 1) close();
}

ClientSocket::~ClientSocket() {
  close();
}

bool ClientSocket::send_all(std::string_view data) {
  while (!data.empty() && fd_ >= 0) {
    ssize_t n = 0;
    if (ssl_ != nullptr) {
      n = SSL_write(ssl_, data.data(), static_cast<int>(data.size()));
    } else {
      n = ::send(fd_, data.data(), data.size(), MSG_NOSIGNAL);
      if (n < 0 && errno == EINTR) continue;
    }
    if (n <= 0) return false;
    data.remove_prefix(static_cast<size_t>(n));
  }
  return data.empty();
}

ssize_t ClientSocket::read_some(char* buf, size_t size, int timeout_ms) {
  if (fd_ < 0) return -1;
  if (ssl_ == nullptr || SSL_pending(ssl_) == 0) {
    pollfd p{fd_, POLLIN, 0};
    const int ready = ::poll(&p, 1, timeout_ms);
    if (ready < 0 && errno != EINTR) return -1;
    if (ready <= 0) return 0;
  }
  if (ssl_ == nullptr) {
    const ssize_t n = ::recv(fd_, buf, size, 0);
    if (n < 0 && errno == EINTR) return 0;
    return n > 0 ? n : -1;
  }
  const int n = SSL_read(ssl_, buf, static_cast<int>(size));
  if (n > 0) return n;
  return SSL_get_error(ssl_, n) == SSL_ERROR_WANT_READ ? 0 : -1;
}

void ClientSocket::close(bool reset) {
  if (ssl_ != nullptr) SSL_free(ssl_);
  ssl_ = nullptr;
  if (fd_ < 0) return;
  if (reset) {
    linger option{1, 0};
    ::setsockopt(fd_, SOL_SOCKET, SO_LINGER, &option, sizeof option);
  }
  ::close(fd_);
  fd_ = -1;
}

}  // namespace hearth::test
