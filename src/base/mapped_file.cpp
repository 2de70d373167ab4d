#include "base/mapped_file.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <utility>

#include "base/log.h"

namespace hearth {
namespace {

// Reads are issued in pieces this large, so a signal or a slow device never stalls one huge
// call, and direct reads stay within what block devices take at once.
constexpr size_t kReadChunk = size_t{64} << 20;

size_t page_size() {
  return static_cast<size_t>(sysconf(_SC_PAGESIZE));
}

size_t round_up(size_t n, size_t to) {
  return (n + to - 1) / to * to;
}

std::string errno_text(int err) {
  return std::strerror(err);
}

// Closes a descriptor when it goes out of scope.
struct FdCloser {
  int fd;
  ~FdCloser() {
    if (fd >= 0) ::close(fd);
  }
};

// Reads [offset, size) of `fd` into `dest` with ordinary (buffered) reads.
Status read_buffered(int fd, uint8_t* dest, size_t offset, size_t size, const std::string& path) {
  while (offset < size) {
    const ssize_t got =
        ::pread(fd, dest + offset, std::min(kReadChunk, size - offset), static_cast<off_t>(offset));
    if (got < 0 && errno == EINTR) continue;
    if (got < 0) return error(ErrorCode::kIo, "cannot read '" + path + "': " + errno_text(errno));
    if (got == 0) return error(ErrorCode::kIo, "cannot read '" + path + "': the file got shorter");
    offset += static_cast<size_t>(got);
  }
  return Status::ok();
}

}  // namespace

MappedFile::~MappedFile() {
  reset();
}

MappedFile::MappedFile(MappedFile&& other) noexcept
    : data_(std::exchange(other.data_, nullptr)),
      size_(std::exchange(other.size_, 0)),
      capacity_(std::exchange(other.capacity_, 0)),
      maps_file_(std::exchange(other.maps_file_, false)),
      locked_(std::exchange(other.locked_, false)),
      path_(std::move(other.path_)) {}

MappedFile& MappedFile::operator=(MappedFile&& other) noexcept {
  if (this != &other) {
    reset();
    data_ = std::exchange(other.data_, nullptr);
    size_ = std::exchange(other.size_, 0);
    capacity_ = std::exchange(other.capacity_, 0);
    maps_file_ = std::exchange(other.maps_file_, false);
    locked_ = std::exchange(other.locked_, false);
    path_ = std::move(other.path_);
  }
  return *this;
}

// munmap also drops any lock on the pages.
void MappedFile::reset() {
  if (data_ != nullptr && capacity_ > 0) munmap(data_, capacity_);
  data_ = nullptr;
  size_ = 0;
  capacity_ = 0;
  maps_file_ = false;
  locked_ = false;
}

bool MappedFile::contains(const void* p, size_t n) const {
  const auto* b = static_cast<const uint8_t*>(p);
  return data_ != nullptr && b >= data_ && n <= size_ &&
         b - data_ <= static_cast<ptrdiff_t>(size_ - n);
}

void MappedFile::release(const void* p, size_t n) const {
  if (!contains(p, n)) return;
  const auto page = static_cast<uintptr_t>(page_size());
  const auto begin = (reinterpret_cast<uintptr_t>(p) + page - 1) / page * page;
  const auto end = (reinterpret_cast<uintptr_t>(p) + n) / page * page;
  if (end <= begin) return;
  // A copy of these bytes is what is used now: they need not stay locked (and locked pages
  // cannot be dropped).
  if (locked_) munlock(reinterpret_cast<void*>(begin), end - begin);
  if (maps_file_) madvise(reinterpret_cast<void*>(begin), end - begin, MADV_DONTNEED);
}

Status MappedFile::map(int fd) {
  void* addr = mmap(nullptr, size_, PROT_READ, MAP_PRIVATE, fd, 0);
  if (addr == MAP_FAILED)
    return error(ErrorCode::kIo, "cannot map '" + path_ + "': " + errno_text(errno));
  data_ = static_cast<uint8_t*>(addr);
  capacity_ = size_;
  maps_file_ = true;
  return Status::ok();
}

// The memory is an anonymous mapping: page aligned, as O_DIRECT needs, and returned to the
// system whole when the model goes. Its length is rounded up to the file system's block so
// that the last direct read may ask for a whole block.
Status MappedFile::read_into_memory(int fd, bool direct) {
  struct stat st {};
  fstat(fd, &st);
  const size_t block = st.st_blksize > 0 ? static_cast<size_t>(st.st_blksize) : 4096;
  capacity_ = round_up(size_, std::max(page_size(), block));
  void* addr = mmap(nullptr, capacity_, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (addr == MAP_FAILED) {
    capacity_ = 0;
    return error(ErrorCode::kIo, "cannot allocate " + std::to_string(size_) + " bytes for '" +
                                     path_ + "': " + errno_text(errno));
  }
  data_ = static_cast<uint8_t*>(addr);
  size_t offset = 0;
  while (direct && offset < size_) {
    const size_t want = std::min(kReadChunk, round_up(size_ - offset, block));
    const ssize_t got = ::pread(fd, data_ + offset, want, static_cast<off_t>(offset));
    if (got < 0 && errno == EINTR) continue;
    if (got < 0 && (errno == EINVAL || errno == EFAULT)) {
      log_warn("falling back to buffered I/O for '{}' due to {}", path_, errno_text(errno));
      break;
    }
    if (got < 0) return error(ErrorCode::kIo, "cannot read '" + path_ + "': " + errno_text(errno));
    if (got == 0) return error(ErrorCode::kIo, "cannot read '" + path_ + "': the file got shorter");
    offset += static_cast<size_t>(got);
  }
  if (offset < size_) {
    // The direct descriptor refuses unaligned reads: the rest goes through one without it.
    FdCloser reopened{direct ? ::open(path_.c_str(), O_RDONLY | O_CLOEXEC) : -1};
    const int rfd = direct ? reopened.fd : fd;
    if (rfd < 0) return error(ErrorCode::kIo, "cannot open '" + path_ + "': " + errno_text(errno));
    HEARTH_RETURN_IF_ERROR(read_buffered(rfd, data_, offset, size_, path_));
  }
  mprotect(data_, capacity_, PROT_READ);  // as read-only as a mapping of the file
  return Status::ok();
}

void MappedFile::lock() {
  locked_ = lock_in_ram(data_, size_);
}

bool lock_in_ram(const void* p, size_t n) {
  if (mlock(p, n) == 0) return true;
  const int err = errno;
  // As the reference: suggest raising RLIMIT_MEMLOCK when that is what stopped the lock and
  // the hard limit leaves no room the process could take itself.
  bool suggest = err == ENOMEM;
  rlimit limit{};
  if (suggest && getrlimit(RLIMIT_MEMLOCK, &limit) != 0) suggest = false;
  if (suggest && limit.rlim_max > limit.rlim_cur + n) suggest = false;
  log_warn("failed to mlock {}-byte buffer: {}{}", n, errno_text(err),
           suggest ? "; try increasing RLIMIT_MEMLOCK ('ulimit -l' as root)" : "");
  return false;
}

Result<MappedFile> MappedFile::open(const std::string& path, LoadMode mode) {
  const bool direct = mode == LoadMode::kDirectIo;
  int fd = direct ? ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_DIRECT) : -1;
  if (direct && fd < 0 && errno == EINVAL) {
    log_warn("failed to open '{}' with direct I/O: {}; falling back to buffered I/O", path,
             errno_text(errno));
  }
  const bool opened_direct = fd >= 0;
  if (fd < 0) fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    ErrorCode code = errno == ENOENT ? ErrorCode::kNotFound : ErrorCode::kIo;
    return error(code, "cannot open '" + path + "': " + errno_text(errno));
  }
  FdCloser closer{fd};
  struct stat st {};
  if (fstat(fd, &st) != 0)
    return error(ErrorCode::kIo, "cannot stat '" + path + "': " + errno_text(errno));
  if (!S_ISREG(st.st_mode))
    return error(ErrorCode::kInvalidArgument, "'" + path + "' is not a regular file");
  MappedFile file;
  file.path_ = path;
  file.size_ = static_cast<size_t>(st.st_size);
  if (file.size_ == 0) return file;
  HEARTH_RETURN_IF_ERROR(load_mode_maps(mode) ? file.map(fd)
                                              : file.read_into_memory(fd, opened_direct));
  if (load_mode_locks(mode)) file.lock();
  return file;
}

}  // namespace hearth
