#include "server/harness.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <chrono>
#include <cstring>

#include "support/test_paths.h"

namespace hearth::test {

namespace {

int connect_local(int port) {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
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

std::string build_request(const std::string& method, const std::string& path,
                          const std::string& body,
                          const std::vector<std::pair<std::string, std::string>>& headers,
                          bool keep_alive) {
  std::string req = method + " " + path + " HTTP/1.1\r\nHost: 127.0.0.1\r\n";
  for (const auto& [k, v] : headers) req += k + ": " + v + "\r\n";
  if (!body.empty() || method == "POST") {
    req +=
        "Content-Type: application/json\r\nContent-Length: " + std::to_string(body.size()) + "\r\n";
  }
  req += keep_alive ? "" : "Connection: close\r\n";
  return req + "\r\n" + body;
}

std::string dechunk(const std::string& raw) {
  std::string out;
  size_t pos = 0;
  while (pos < raw.size()) {
    const size_t eol = raw.find("\r\n", pos);
    if (eol == std::string::npos) break;
    const size_t size = std::stoul(raw.substr(pos, eol - pos), nullptr, 16);
    if (size == 0) break;
    out += raw.substr(eol + 2, size);
    pos = eol + 2 + size + 2;
  }
  return out;
}

HttpReply parse_reply(const std::string& raw) {
  HttpReply reply;
  const size_t head_end = raw.find("\r\n\r\n");
  if (head_end == std::string::npos || raw.size() < 12) return reply;
  reply.status = std::atoi(raw.substr(9, 3).c_str());
  size_t pos = raw.find("\r\n") + 2;
  while (pos < head_end) {
    const size_t eol = raw.find("\r\n", pos);
    const std::string line = raw.substr(pos, eol - pos);
    const size_t colon = line.find(':');
    if (colon != std::string::npos) {
      std::string name = line.substr(0, colon);
      std::transform(name.begin(), name.end(), name.begin(),
                     [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
      std::string value = line.substr(colon + 1);
      value.erase(0, value.find_first_not_of(' '));
      reply.headers[name] = value;
    }
    pos = eol + 2;
  }
  const std::string payload = raw.substr(head_end + 4);
  reply.body = reply.header("transfer-encoding") == "chunked" ? dechunk(payload) : payload;
  return reply;
}

}  // namespace

bool send_all(int fd, const std::string& data) {
  size_t sent = 0;
  while (sent < data.size()) {
    const ssize_t n = ::send(fd, data.data() + sent, data.size() - sent, MSG_NOSIGNAL);
    if (n <= 0) return false;
    sent += static_cast<size_t>(n);
  }
  return true;
}

std::string HttpReply::header(const std::string& name) const {
  auto it = headers.find(name);
  return it == headers.end() ? std::string() : it->second;
}

HttpReply http_request(int port, const std::string& method, const std::string& path,
                       const std::string& body,
                       const std::vector<std::pair<std::string, std::string>>& headers) {
  const int fd = connect_local(port);
  if (fd < 0) return {};
  std::string raw;
  if (send_all(fd, build_request(method, path, body, headers, false))) {
    char buf[65536];
    ssize_t n = 0;
    while ((n = ::recv(fd, buf, sizeof(buf), 0)) > 0) raw.append(buf, static_cast<size_t>(n));
  }
  ::close(fd);
  return parse_reply(raw);
}

std::vector<std::string> sse_payloads(const std::string& body) {
  std::vector<std::string> out;
  size_t pos = 0;
  while (pos < body.size()) {
    size_t end = body.find("\n\n", pos);
    if (end == std::string::npos) end = body.size();
    const std::string frame = body.substr(pos, end - pos);
    if (frame.rfind("data: ", 0) == 0) out.push_back(frame.substr(6));
    pos = end + 2;
  }
  return out;
}

RawConnection::RawConnection(int port) : fd_(connect_local(port)) {}
RawConnection::~RawConnection() {
  close();
}

bool RawConnection::send_request(const std::string& method, const std::string& path,
                                 const std::string& body,
                                 const std::vector<std::pair<std::string, std::string>>& headers) {
  return fd_ >= 0 && send_all(fd_, build_request(method, path, body, headers, true));
}

std::string RawConnection::read_until(const std::string& needle, int timeout_ms) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms);
  while (fd_ >= 0 && received_.find(needle) == std::string::npos &&
         std::chrono::steady_clock::now() < deadline) {
    pollfd p{fd_, POLLIN, 0};
    if (::poll(&p, 1, 50) <= 0) continue;
    char buf[4096];
    const ssize_t n = ::recv(fd_, buf, sizeof(buf), 0);
    if (n <= 0) break;
    received_.append(buf, static_cast<size_t>(n));
  }
  return received_;
}

void RawConnection::close() {
  if (fd_ >= 0) ::close(fd_);
  fd_ = -1;
}

// stop() also joins the log reader of a server that exited at startup.
ServerProcess::~ServerProcess() {
  stop();
}

bool ServerProcess::start(const std::vector<std::string>& args, int timeout_s,
                          const std::vector<std::pair<std::string, std::string>>& env) {
  int pipe_fds[2];
  if (::pipe(pipe_fds) != 0) return false;
  std::vector<std::string> argv = {bin_dir() + "/hearth-server"};
  argv.insert(argv.end(), args.begin(), args.end());
  argv.insert(argv.end(), {"--host", "127.0.0.1", "--port", "0"});
  // The child's environment, built before fork (nothing that allocates runs in the child).
  std::vector<std::string> environment;
  for (char** e = environ; *e != nullptr; ++e) {
    const std::string entry = *e;
    const std::string name = entry.substr(0, entry.find('='));
    const bool replaced =
        std::any_of(env.begin(), env.end(), [&](const auto& kv) { return kv.first == name; });
    if (!replaced) environment.push_back(entry);
  }
  for (const auto& [name, value] : env) environment.push_back(name + "=" + value);
  std::vector<char*> cenv;
  for (std::string& e : environment) cenv.push_back(e.data());
  cenv.push_back(nullptr);
  std::vector<char*> cargv;
  for (std::string& a : argv) cargv.push_back(a.data());
  cargv.push_back(nullptr);
  pid_ = ::fork();
  if (pid_ == 0) {
    ::dup2(pipe_fds[1], STDERR_FILENO);
    ::dup2(pipe_fds[1], STDOUT_FILENO);
    ::close(pipe_fds[0]);
    ::execve(cargv[0], cargv.data(), cenv.data());
    _exit(127);
  }
  ::close(pipe_fds[1]);
  err_fd_ = pipe_fds[0];
  reader_ = std::thread([this] {
    char buf[4096];
    ssize_t n = 0;
    while ((n = ::read(err_fd_, buf, sizeof(buf))) > 0) {
      std::lock_guard lock(mutex_);
      log_.append(buf, static_cast<size_t>(n));
    }
  });
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(timeout_s);
  const std::string kListening = "listening on http://127.0.0.1:";
  while (std::chrono::steady_clock::now() < deadline) {
    const std::string text = log();
    const size_t at = text.find(kListening);
    // Only a complete line: the log may still be arriving.
    const size_t eol = at == std::string::npos ? at : text.find('\n', at);
    if (port_ == 0 && eol != std::string::npos) {
      port_ = std::atoi(text.c_str() + at + kListening.size());
    }
    if (port_ != 0 && http_request(port_, "GET", "/health").status == 200) return true;
    if (::waitpid(pid_, nullptr, WNOHANG) == pid_) {
      pid_ = -1;
      return false;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  return false;
}

int ServerProcess::stop(int timeout_s) {
  int code = -1;
  if (pid_ > 0) {
    ::kill(pid_, SIGTERM);
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(timeout_s);
    int status = 0;
    while (true) {
      if (::waitpid(pid_, &status, WNOHANG) == pid_) {
        code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
        break;
      }
      if (std::chrono::steady_clock::now() > deadline) {
        ::kill(pid_, SIGKILL);
        ::waitpid(pid_, &status, 0);
        break;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    pid_ = -1;
  }
  if (reader_.joinable()) reader_.join();
  if (err_fd_ >= 0) ::close(err_fd_);
  err_fd_ = -1;
  return code;
}

std::string ServerProcess::log() const {
  std::lock_guard lock(mutex_);
  return log_;
}

}  // namespace hearth::test
