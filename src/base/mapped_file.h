// A read-only memory mapping of a whole file. Move-only; unmaps on destruction.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>

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

  // Maps `path` read-only. An empty file maps to an empty span.
  static Result<MappedFile> open(const std::string& path);

  std::span<const uint8_t> bytes() const { return {data_, size_}; }
  const uint8_t* data() const { return data_; }
  size_t size() const { return size_; }
  const std::string& path() const { return path_; }
  // True when [p, p + n) lies inside the mapping.
  bool contains(const void* p, size_t n) const;
  // Drops the whole pages inside [p, p + n) from the process (madvise MADV_DONTNEED): they
  // stop counting as resident, and a later read faults them in from the file again.
  void release(const void* p, size_t n) const;

 private:
  void reset();

  const uint8_t* data_ = nullptr;
  size_t size_ = 0;
  std::string path_;
};

}  // namespace hearth
