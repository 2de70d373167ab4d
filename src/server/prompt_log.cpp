#include "server/prompt_log.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>

#include <fmt/format.h>

#include "base/log.h"

namespace hearth::server {

namespace {

// File names count from here: static initialisation, near the process start (the
// reference counts from its timer's initialisation at startup).
const auto g_start = std::chrono::steady_clock::now();

// Enough numbers to step past every prompt started in the same millisecond.
constexpr int kMaxNameTries = 1000;

bool write_all(int fd, const std::string& text) {
  size_t done = 0;
  while (done < text.size()) {
    const ssize_t n = ::write(fd, text.data() + done, text.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    done += static_cast<size_t>(n);
  }
  return true;
}

}  // namespace

void write_prompt_log(const std::string& dir, const Json& prompt) {
  if (dir.empty()) return;
  const std::string text = prompt.is_string() ? prompt.get<std::string>() : prompt.dump(2);
  const auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(
                      std::chrono::steady_clock::now() - g_start)
                      .count();
  std::string path;
  int fd = -1;
  for (int i = 0; i < kMaxNameTries && fd < 0; ++i) {
    path = fmt::format("{}/{:012}.txt", dir, ms + i);
    // O_EXCL: concurrent requests never write into one file.
    fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
    if (fd < 0 && errno != EEXIST) break;
  }
  if (fd < 0) {
    log_error("failed to create {}: {}", path, std::strerror(errno));
    return;
  }
  if (!write_all(fd, text)) log_error("failed to write {}: {}", path, std::strerror(errno));
  ::close(fd);
}

}  // namespace hearth::server
