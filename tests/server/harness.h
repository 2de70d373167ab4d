// End-to-end test harness: starts the real hearth-server on 127.0.0.1 (port 0, the bound
// port read from its log) and talks HTTP/1.1 to it over plain sockets, or over TLS when the
// server was started with a certificate (the client trusts any certificate: these tests are
// about the server, not the PKI).
#pragma once

#include <sys/types.h>

#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace hearth::test {

enum class Transport { kHttp, kHttps };

struct HttpReply {
  int status = 0;
  std::map<std::string, std::string> headers;  // lower-case names
  std::string body;                            // de-chunked
  std::string header(const std::string& name) const;
};

// One request on a fresh connection; the whole reply is read. status 0 on a socket error.
HttpReply http_request(int port, const std::string& method, const std::string& path,
                       const std::string& body = "",
                       const std::vector<std::pair<std::string, std::string>>& headers = {});
HttpReply http_request(Transport transport, int port, const std::string& method,
                       const std::string& path, const std::string& body = "",
                       const std::vector<std::pair<std::string, std::string>>& headers = {});

// Writes all of `data` to a connected socket; false when the peer is gone.
bool send_all(int fd, const std::string& data);

// The `data:` payloads of an SSE body, in order (comment frames skipped).
std::vector<std::string> sse_payloads(const std::string& body);

class ClientSocket;

// A connection that stays open: send a request, read part of the reply, close early. Over
// kHttps it is open once the TLS handshake succeeded (connected() tells).
class RawConnection {
 public:
  explicit RawConnection(int port, Transport transport = Transport::kHttp);
  ~RawConnection();
  bool connected() const;
  bool send_request(const std::string& method, const std::string& path, const std::string& body,
                    const std::vector<std::pair<std::string, std::string>>& headers = {});
  // Sends bytes as they are (a request by hand, or garbage).
  bool send_raw(const std::string& data);
  // Reads until `needle` appears in what was received (or timeout); returns everything read.
  std::string read_until(const std::string& needle, int timeout_ms);
  // Reads one whole reply (Content-Length or chunked) and removes it from what was received,
  // so the next request on this connection can be read the same way. status 0 when the
  // connection ended or the timeout passed first.
  HttpReply read_reply(int timeout_ms);
  // The server closed the connection (a read saw the end or an error).
  bool peer_closed() const { return peer_closed_; }
  void close();

 private:
  std::unique_ptr<ClientSocket> channel_;
  std::string received_;
  bool peer_closed_ = false;
};

class ServerProcess {
 public:
  ServerProcess() = default;
  ~ServerProcess();
  ServerProcess(const ServerProcess&) = delete;
  ServerProcess& operator=(const ServerProcess&) = delete;

  // Starts bin_dir()/hearth-server with `args` plus `--port 0`, waits until /health is 200.
  // `env` is added to the child's environment. kHttps: `args` hold --ssl-key-file and
  // --ssl-cert-file, and /health is asked over TLS.
  bool start(const std::vector<std::string>& args, int timeout_s = 60,
             const std::vector<std::pair<std::string, std::string>>& env = {},
             Transport transport = Transport::kHttp);
  // SIGTERM, then waits; returns the exit status (-1 if it had to be killed).
  int stop(int timeout_s = 10);
  int port() const { return port_; }
  Transport transport() const { return transport_; }
  pid_t pid() const { return pid_; }
  std::string log() const;

 private:
  pid_t pid_ = -1;
  int port_ = 0;
  Transport transport_ = Transport::kHttp;
  int err_fd_ = -1;
  std::thread reader_;
  mutable std::mutex mutex_;
  std::string log_;
};

}  // namespace hearth::test
