// End-to-end test harness: starts the real hearth-server on 127.0.0.1 (port 0, the bound
// port read from its log) and talks HTTP/1.1 to it over plain sockets.
#pragma once

#include <sys/types.h>

#include <functional>
#include <map>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace hearth::test {

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

// Writes all of `data` to a connected socket; false when the peer is gone.
bool send_all(int fd, const std::string& data);

// The `data:` payloads of an SSE body, in order (comment frames skipped).
std::vector<std::string> sse_payloads(const std::string& body);

// A connection that stays open: send a request, read part of the reply, close early.
class RawConnection {
 public:
  explicit RawConnection(int port);
  ~RawConnection();
  bool send_request(const std::string& method, const std::string& path, const std::string& body,
                    const std::vector<std::pair<std::string, std::string>>& headers = {});
  // Reads until `needle` appears in what was received (or timeout); returns everything read.
  std::string read_until(const std::string& needle, int timeout_ms);
  void close();

 private:
  int fd_ = -1;
  std::string received_;
};

class ServerProcess {
 public:
  ServerProcess() = default;
  ~ServerProcess();
  ServerProcess(const ServerProcess&) = delete;
  ServerProcess& operator=(const ServerProcess&) = delete;

  // Starts bin_dir()/hearth-server with `args` plus `--port 0`, waits until /health is 200.
  // `env` is added to the child's environment.
  bool start(const std::vector<std::string>& args, int timeout_s = 60,
             const std::vector<std::pair<std::string, std::string>>& env = {});
  // SIGTERM, then waits; returns the exit status (-1 if it had to be killed).
  int stop(int timeout_s = 10);
  int port() const { return port_; }
  pid_t pid() const { return pid_; }
  std::string log() const;

 private:
  pid_t pid_ = -1;
  int port_ = 0;
  int err_fd_ = -1;
  std::thread reader_;
  mutable std::mutex mutex_;
  std::string log_;
};

}  // namespace hearth::test
