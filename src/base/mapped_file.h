// A whole file in memory, read-only: mapped from the file, or read into memory of its own,
// as a LoadMode says (the reference's --load-mode). Move-only; unmaps on destruction.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>

#include "base/load_mode.h"
#include "base/status.h"

namespace hearth {

class MappedFile {
 public:
  MappedFile() = default;
  ~MappedFile();
  MappedFile(MappedFile&& other) noexcept;
  MappedFile& operator=(MappedFile&& other) noexcept;
  MappedFile(const MappedFile&) = delete;
  MappedFile& operator=(const MappedFile&) = delete;

  // Brings `path` into memory as `mode` says: auto and mmap map it read-only; none reads it
  // into anonymous memory; dio reads it with O_DIRECT (buffered, with a warning, where the
  // file system refuses direct I/O, as the reference falls back); mlock and mmap+mlock do the
  // same as none and mmap and then lock the bytes in RAM (a lock that fails, e.g. over
  // RLIMIT_MEMLOCK, is a warning and the file stays loaded, as in the reference). An empty
  // file gives an empty span.
  static Result<MappedFile> open(const std::string& path, LoadMode mode = LoadMode::kMmap);

  std::span<const uint8_t> bytes() const { return {data_, size_}; }
  const uint8_t* data() const { return data_; }
  size_t size() const { return size_; }
  const std::string& path() const { return path_; }
  // True when the bytes are the file's own pages (a mapping), false for a copy read in.
  bool maps_file() const { return maps_file_; }
  // True when the bytes were locked in RAM (mlock succeeded).
  bool locked() const { return locked_; }
  // True when [p, p + n) lies inside the bytes.
  bool contains(const void* p, size_t n) const;
  // The whole pages inside [p, p + n) were copied elsewhere: they are unlocked, and the pages
  // of a mapping are dropped from the process (madvise MADV_DONTNEED), so they stop counting
  // as resident and a later read faults them in from the file again. Bytes read into memory
  // stay: dropping them would turn them into zeros, which a later read could not tell from
  // data.
  void release(const void* p, size_t n) const;

 private:
  void reset();
  Status map(int fd);
  Status read_into_memory(int fd, bool direct);
  void lock();

  uint8_t* data_ = nullptr;
  size_t size_ = 0;
  size_t capacity_ = 0;  // bytes of the region to unmap (size_ rounded up for reads)
  bool maps_file_ = false;
  bool locked_ = false;
  std::string path_;
};

// Locks [p, p + n) in RAM (mlock). A failure is logged as the reference logs it (with the
// RLIMIT_MEMLOCK hint where that limit is what stopped it) and returns false; nothing else
// changes, so a caller goes on with memory that may be swapped.
bool lock_in_ram(const void* p, size_t n);

}  // namespace hearth
