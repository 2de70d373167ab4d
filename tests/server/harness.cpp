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

#include "support/client_socket.h"
#include "support/test_paths.h"

namespace hearth::test {

namespace {

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

// The end of the first whole reply in `raw` (0 while it is incomplete).
size_t complete_reply_size(const std::string& raw) {
  const size_t head_end = raw.find("\r\n\r\n");
  if (head_end == std::string::npos) return 0;
  const size_t body_start = head_end + 4;
  const HttpReply head = parse_reply(raw.substr(0, body_start));
  if (head.header("transfer-encoding") == "chunked") {
    size_t pos = body_start;
    while (true) {
      const size_t eol = raw.find("\r\n", pos);
      if (eol == std::string::npos) return 0;
      const size_t size = std::stoul(raw.substr(pos, eol - pos), nullptr, 16);
      const size_t next = eol + 2 + size + 2;
      if (next > raw.size()) return 0;
      if (size == 0) return next;
      pos = next;
    }
  }
  const size_t length = std::strtoul(head.header("content-length").c_str(), nullptr, 10);
  return raw.size() >= body_start + length ? body_start + length : 0;
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
  return http_request(Transport::kHttp, port, method, path, body, headers);
}

HttpReply http_request(Transport transport, int port, const std::string& method,
                       const std::string& path, const std::string& body,
                       const std::vector<std::pair<std::string, std::string>>& headers) {
  ClientSocket channel(port, transport == Transport::kHttps);
  if (!channel.ok()) return {};
  std::string raw;
  if (channel.send_all(build_request(method, path, body, headers, false))) {
    char buf[65536];
    ssize_t n = 0;
    while ((n = channel.read_some(buf, sizeof(buf), -1)) >= 0) {
      raw.append(buf, static_cast<size_t>(n));
    }
  }
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

RawConnection::RawConnection(int port, Transport transport)
    : channel_(std::make_unique<ClientSocket>(port, transport == Transport::kHttps)) {}
RawConnection::~RawConnection() {
  close();
}

bool RawConnection::connected() const {
  return channel_->ok();
}

bool RawConnection::send_request(const std::string& method, const std::string& path,
                                 const std::string& body,
                                 const std::vector<std::pair<std::string, std::string>>& headers) {
  return send_raw(build_request(method, path, body, headers, true));
}

bool RawConnection::send_raw(const std::string& data) {
  return channel_->send_all(data);
}

std::string RawConnection::read_until(const std::string& needle, int timeout_ms) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms);
  while (channel_->ok() && !peer_closed_ && received_.find(needle) == std::string::npos &&
         std::chrono::steady_clock::now() < deadline) {
    char buf[4096];
    const ssize_t n = channel_->read_some(buf, sizeof(buf), 50);
    if (n < 0) peer_closed_ = true;
    if (n > 0) received_.append(buf, static_cast<size_t>(n));
  }
  return received_;
}

HttpReply RawConnection::read_reply(int timeout_ms) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms);
  size_t size = 0;
  while ((size = complete_reply_size(received_)) == 0 && channel_->ok() && !peer_closed_ &&
         std::chrono::steady_clock::now() < deadline) {
    char buf[4096];
    const ssize_t n = channel_->read_some(buf, sizeof(buf), 50);
    if (n < 0) peer_closed_ = true;
    if (n > 0) received_.append(buf, static_cast<size_t>(n));
  }
  if (size == 0) return {};
  HttpReply reply = parse_reply(received_.substr(0, size));
  received_.erase(0, size);
  return reply;
}

void RawConnection::close() {
  channel_->close();
}

// stop() also joins the log reader of a server that exited at startup.
ServerProcess::~ServerProcess() {
  stop();
}

bool ServerProcess::start(const std::vector<std::string>& args, int timeout_s,
                          const std::vector<std::pair<std::string, std::string>>& env,
                          Transport transport) {
  transport_ = transport;
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
  const std::string kListening = std::string("listening on ") +
                                 (transport == Transport::kHttps ? "https" : "http") +
                                 "://127.0.0.1:";
  while (std::chrono::steady_clock::now() < deadline) {
    const std::string text = log();
    const size_t at = text.find(kListening);
    // Only a complete line: the log may still be arriving.
    const size_t eol = at == std::string::npos ? at : text.find('\n', at);
    if (port_ == 0 && eol != std::string::npos) {
      port_ = std::atoi(text.c_str() + at + kListening.size());
    }
    if (port_ != 0 && http_request(transport, port_, "GET", "/health").status == 200) return true;
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
