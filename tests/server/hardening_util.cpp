#include "server/hardening_util.h"

#include <arpa/inet.h>
#include <dirent.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <fstream>
#include <thread>

#include <nlohmann/json.hpp>

#include "server/harness.h"

namespace hearth::test {

using Clock = std::chrono::steady_clock;

bool raise_descriptor_limit(int needed) {
  rlimit limit{};
  if (getrlimit(RLIMIT_NOFILE, &limit) != 0) return false;
  if (limit.rlim_cur >= static_cast<rlim_t>(needed)) return true;
  if (limit.rlim_max < static_cast<rlim_t>(needed)) return false;
  limit.rlim_cur = limit.rlim_max;
  return setrlimit(RLIMIT_NOFILE, &limit) == 0;
}

int thread_count(pid_t pid) {
  std::ifstream status("/proc/" + std::to_string(pid) + "/status");
  std::string line;
  while (std::getline(status, line)) {
    if (line.rfind("Threads:", 0) == 0) return std::atoi(line.c_str() + 8);
  }
  return -1;
}

int open_descriptors(pid_t pid) {
  DIR* dir = ::opendir(("/proc/" + std::to_string(pid) + "/fd").c_str());
  if (dir == nullptr) return -1;
  int n = 0;
  while (::readdir(dir) != nullptr) ++n;
  ::closedir(dir);
  return n - 2;  // "." and ".."
}

namespace {

sockaddr_in local(int port) {
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<uint16_t>(port));
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  return addr;
}

void set_blocking(int fd, bool blocking) {
  const int flags = ::fcntl(fd, F_GETFL, 0);
  ::fcntl(fd, F_SETFL, blocking ? flags & ~O_NONBLOCK : flags | O_NONBLOCK);
}

}  // namespace

std::vector<int> open_idle_connections(int port, int n) {
  std::vector<int> fds;
  const sockaddr_in addr = local(port);
  for (int i = 0; i < n; ++i) {
    const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
    if (fd < 0) break;
    const int r = ::connect(fd, reinterpret_cast<const sockaddr*>(&addr), sizeof addr);
    if (r != 0 && errno != EINPROGRESS) {
      ::close(fd);
      break;
    }
    pollfd pfd{fd, POLLOUT, 0};
    if (::poll(&pfd, 1, 5000) != 1 || (pfd.revents & (POLLERR | POLLHUP))) {
      ::close(fd);
      break;
    }
    set_blocking(fd, true);
    fds.push_back(fd);
  }
  return fds;
}

int count_closed(const std::vector<int>& fds) {
  int closed = 0;
  for (int fd : fds) {
    pollfd pfd{fd, POLLIN, 0};
    if (::poll(&pfd, 1, 0) != 1) continue;
    char byte;
    const ssize_t n = ::recv(fd, &byte, 1, MSG_PEEK | MSG_DONTWAIT);
    closed += n <= 0 ? 1 : 0;
  }
  return closed;
}

void close_all(std::vector<int>& fds) {
  for (int fd : fds) ::close(fd);
  fds.clear();
}

std::vector<std::string> read_until_closed(const std::vector<int>& fds,
                                           std::chrono::milliseconds timeout) {
  std::vector<std::string> out(fds.size());
  std::vector<bool> open(fds.size(), true);
  size_t n_open = fds.size();
  const auto deadline = Clock::now() + timeout;
  char buffer[4096];
  while (n_open > 0 && Clock::now() < deadline) {
    std::vector<pollfd> pfds;
    std::vector<size_t> which;
    for (size_t i = 0; i < fds.size(); ++i) {
      if (!open[i]) continue;
      pfds.push_back({fds[i], POLLIN, 0});
      which.push_back(i);
    }
    if (::poll(pfds.data(), pfds.size(), 50) <= 0) continue;
    for (size_t k = 0; k < pfds.size(); ++k) {
      if (pfds[k].revents == 0) continue;
      const ssize_t n = ::recv(pfds[k].fd, buffer, sizeof buffer, MSG_DONTWAIT);
      if (n > 0) {
        out[which[k]].append(buffer, static_cast<size_t>(n));
      } else if (n == 0 || (errno != EAGAIN && errno != EINTR)) {
        open[which[k]] = false;
        --n_open;
      }
    }
  }
  return out;
}

std::string drain_until_closed(int fd, std::chrono::milliseconds timeout) {
  return read_until_closed({fd}, timeout).front();
}

int connect_with_small_buffer(int port) {
  const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return -1;
  const int size = 4096;
  ::setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &size, sizeof size);
  const sockaddr_in addr = local(port);
  if (::connect(fd, reinterpret_cast<const sockaddr*>(&addr), sizeof addr) != 0) {
    ::close(fd);
    return -1;
  }
  return fd;
}

bool wait_for(const std::function<bool()>& condition, std::chrono::milliseconds timeout) {
  const auto deadline = Clock::now() + timeout;
  while (Clock::now() < deadline) {
    if (condition()) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  return condition();
}

bool slot_busy(int port, int id) {
  HttpReply reply = http_request(port, "GET", "/slots");
  const auto slots = nlohmann::json::parse(reply.body, nullptr, false);
  if (!slots.is_array() || id >= static_cast<int>(slots.size())) return false;
  return slots[static_cast<size_t>(id)].value("is_processing", false);
}

std::string send_and_read(int port, const std::string& raw, std::chrono::milliseconds timeout) {
  const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  const sockaddr_in addr = local(port);
  if (fd < 0 || ::connect(fd, reinterpret_cast<const sockaddr*>(&addr), sizeof addr) != 0) {
    if (fd >= 0) ::close(fd);
    return "";
  }
  send_all(fd, raw);
  std::string out;
  const auto deadline = Clock::now() + timeout;
  char buffer[65536];
  while (Clock::now() < deadline) {
    const size_t head_end = out.find("\r\n\r\n");
    if (head_end != std::string::npos) {
      const size_t cl = out.find("Content-Length: ");
      if (cl != std::string::npos && cl < head_end) {
        const size_t length = std::strtoul(out.c_str() + cl + 16, nullptr, 10);
        if (out.size() >= head_end + 4 + length && raw.rfind("HEAD ", 0) != 0) break;
      }
    }
    pollfd pfd{fd, POLLIN, 0};
    if (::poll(&pfd, 1, 50) <= 0) continue;
    const ssize_t n = ::recv(fd, buffer, sizeof buffer, 0);
    if (n <= 0) break;
    out.append(buffer, static_cast<size_t>(n));
  }
  ::close(fd);
  return out;
}

int status_of(const std::string& raw) {
  if (raw.size() < 12 || raw.rfind("HTTP/1.", 0) != 0) return 0;
  return std::atoi(raw.c_str() + 9);
}

std::string body_of(const std::string& raw) {
  const size_t head_end = raw.find("\r\n\r\n");
  return head_end == std::string::npos ? "" : raw.substr(head_end + 4);
}

}  // namespace hearth::test
