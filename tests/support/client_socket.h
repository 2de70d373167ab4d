// A test client's connection to 127.0.0.1: a TCP socket, with TLS over it when asked (the
// client accepts any certificate: the tests are about the server, not the PKI). The raw
// HTTP clients of the unit and end-to-end tests read and write through it.
#pragma once

#include <sys/types.h>

#include <string_view>

#include <openssl/types.h>

namespace hearth::test {

class ClientSocket {
 public:
  // Connects (and with `tls` completes the handshake); ok() is false when that failed.
  ClientSocket(int port, bool tls);
  ~ClientSocket();
  ClientSocket(const ClientSocket&) = delete;
  ClientSocket& operator=(const ClientSocket&) = delete;

  bool ok() const { return fd_ >= 0; }
  bool send_all(std::string_view data);
  // Bytes read (> 0); 0 when none came within `timeout_ms` (-1: no limit) or what came
  // carried no data (a TLS session ticket); -1 once the connection ended.
  ssize_t read_some(char* buf, size_t size, int timeout_ms);
  // With `reset` the server sees a TCP RST instead of a FIN (and no TLS close_notify).
  void close(bool reset = false);

 private:
  int fd_ = -1;
  SSL* ssl_ = nullptr;
};

}  // namespace hearth::test
