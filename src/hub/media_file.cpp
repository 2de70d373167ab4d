// The file:// part of media_fetch.h: llama-server's path check, then an open that cannot leave
// the media directory, also through symbolic links (which llama-server follows anywhere).
#include <fcntl.h>
#include <linux/openat2.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <climits>
#include <cstdlib>
#include <filesystem>
#include <memory>

#include <fmt/format.h>

#include "hub/media_fetch.h"

namespace hearth::hub {

namespace {

// One code point of `s` at `offset` as llama-server decodes it: the value and its byte count,
// or a count of 0 when the bytes are not UTF-8 (overlong forms are caught by the caller).
std::pair<uint32_t, size_t> next_code_point(std::string_view s, size_t offset) {
  const auto byte = [&](size_t i) { return static_cast<uint8_t>(s[offset + i]); };
  const uint8_t lead = byte(0);
  if (lead < 0x80) return {lead, 1};
  size_t length = 0;
  uint32_t value = 0;
  if ((lead & 0xe0) == 0xc0) {
    length = 2;
    value = lead & 0x1f;
  } else if ((lead & 0xf0) == 0xe0) {
    length = 3;
    value = lead & 0x0f;
  } else if ((lead & 0xf8) == 0xf0) {
    length = 4;
    value = lead & 0x07;
  } else {
    return {0, 0};  // a continuation byte first, or 0xf8..0xff
  }
  if (offset + length > s.size()) return {0, 0};
  for (size_t i = 1; i < length; ++i) {
    if ((byte(i) & 0xc0) != 0x80) return {0, 0};
    value = (value << 6) | (byte(i) & 0x3f);
  }
  return {value, length};
}

bool is_forbidden_code_point(uint32_t c) {
  return c <= 0x1f || c == 0x7f || (c >= 0x80 && c <= 0x9f)  // C0, DEL, C1 controls (NUL too)
         || c == 0xff0e || c == 0x2215 || c == 0x2216        // look-alikes of '.', '/', '\'
         || (c >= 0xd800 && c <= 0xdfff) || c > 0x10ffff || c == 0xfffd || c == 0xfeff ||
         c == ':' || c == '*' || c == '?' || c == '"' || c == '<' || c == '>' || c == '|';
}

struct FdCloser {
  int fd;
  ~FdCloser() {
    if (fd >= 0) ::close(fd);
  }
};

Status not_allowed(std::string_view file_path) {
  return {ErrorCode::kInvalidArgument, fmt::format("file path is not allowed: {}", file_path)};
}
Status cannot_open(std::string_view file_path) {
  return {ErrorCode::kInvalidArgument,
          fmt::format("file does not exist or cannot be opened: {}", file_path)};
}

constexpr int kOpenFlags = O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK;  // a FIFO never blocks

// The kernel resolves `relative` under `root` and refuses (EXDEV) any step above it, absolute
// symbolic links included. -1 with errno ENOSYS where the kernel has no openat2.
int open_beneath(const std::string& root, const std::string& relative) {
#ifdef SYS_openat2
  const int dir = ::open(root.c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC);
  if (dir < 0) return -1;
  FdCloser dir_closer{dir};
  open_how how{};
  how.flags = kOpenFlags;
  how.resolve = RESOLVE_BENEATH | RESOLVE_NO_MAGICLINKS;
  return static_cast<int>(::syscall(SYS_openat2, dir, relative.c_str(), &how, sizeof(how)));
#else
  errno = ENOSYS;
  return -1;
#endif
}

// Resolves every link first and opens the result only when it lies under `root`; a final
// component swapped for a link afterwards is not followed (O_NOFOLLOW). -1 with errno EXDEV
// when the path leads out of `root`.
int open_resolved(const std::string& root, const std::string& relative) {
  const auto real = [](const std::string& path) -> std::string {
    std::unique_ptr<char, decltype(&std::free)> resolved(::realpath(path.c_str(), nullptr),
                                                         &std::free);
    return resolved ? std::string(resolved.get()) : std::string();
  };
  const std::string real_root = real(root);
  const std::string real_path = real(root + relative);
  if (real_root.empty() || real_path.empty()) return -1;
  const std::string prefix = real_root.back() == '/' ? real_root : real_root + "/";
  if (real_path != real_root && !real_path.starts_with(prefix)) {
    errno = EXDEV;
    return -1;
  }
  return ::open(real_path.c_str(), kOpenFlags | O_NOFOLLOW);
}

Result<std::vector<uint8_t>> read_open_file(int fd, std::string_view file_path, size_t limit) {
  struct stat info {};
  if (::fstat(fd, &info) != 0 || !S_ISREG(info.st_mode)) return cannot_open(file_path);
  const auto too_large = [&] {
    return Status(ErrorCode::kInvalidArgument,
                  fmt::format("file is larger than the {} MiB a media file may have: {}",
                              limit >> 20, file_path));
  };
  if (static_cast<uint64_t>(info.st_size) > limit) return too_large();
  std::vector<uint8_t> data(static_cast<size_t>(info.st_size));
  size_t filled = 0;
  // Read to the end even if the file grew since fstat, but never past the limit.
  while (true) {
    if (filled == data.size()) {
      if (data.size() > limit) return too_large();
      data.resize(std::min(limit + 1, data.size() + (size_t{1} << 16)));
    }
    const ssize_t n = ::read(fd, data.data() + filled, data.size() - filled);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return cannot_open(file_path);
    if (n == 0) break;
    filled += static_cast<size_t>(n);
  }
  if (filled > limit) return too_large();
  data.resize(filled);
  return data;
}

}  // namespace

bool is_allowed_media_file_path(std::string_view file_path) {
  if (file_path.empty() || file_path.size() > 255) return false;
  for (size_t offset = 0; offset < file_path.size();) {
    const auto [c, length] = next_code_point(file_path, offset);
    if (length == 0) return false;
    const bool overlong =
        (length == 2 && c < 0x80) || (length == 3 && c < 0x800) || (length == 4 && c < 0x10000);
    if (overlong || is_forbidden_code_point(c)) return false;
    offset += length;
  }
  // Windows drops these, so the name would mean another file there.
  if (file_path.front() == ' ' || file_path.back() == ' ' || file_path.back() == '.') return false;
  return file_path.find("..") == std::string_view::npos && file_path != ".";
}

Result<std::vector<uint8_t>> read_media_file(std::string_view file_path,
                                             const MediaFetchSettings& settings,
                                             MediaOpenMode mode) {
  if (settings.media_path.empty()) {
    return error(ErrorCode::kInvalidArgument,
                 "file:// URLs are not allowed unless --media-path is specified");
  }
  if (!is_allowed_media_file_path(file_path)) return not_allowed(file_path);
  // llama-server reads "<media_path><path>", so leading slashes name the directory itself
  // ("file:////a//b" is <media_path>/a/b), never the file system's root.
  const size_t first = file_path.find_first_not_of('/');
  const std::string relative(first == std::string_view::npos ? "." : file_path.substr(first));
  int fd = -1;
  if (mode == MediaOpenMode::kBeneath) {
    fd = open_beneath(settings.media_path, relative);
    if (fd < 0 && (errno == ENOSYS || errno == E2BIG)) mode = MediaOpenMode::kResolved;
  }
  if (mode == MediaOpenMode::kResolved) fd = open_resolved(settings.media_path, relative);
  if (fd < 0) return errno == EXDEV ? not_allowed(file_path) : cannot_open(file_path);
  FdCloser closer{fd};
  return read_open_file(fd, file_path, settings.max_file_bytes);
}

Result<std::string> validate_media_path(std::string_view value) {
  std::error_code ec;
  const std::filesystem::path path{std::string(value)};
  if (value.empty() || !std::filesystem::is_directory(path, ec)) {
    return error(ErrorCode::kInvalidArgument, fmt::format("not a directory: {}", value));
  }
  std::string directory(value);
  if (directory.back() != '/') directory += '/';
  return directory;
}

}  // namespace hearth::hub
