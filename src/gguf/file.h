// Reading GGUF files: header, metadata and tensor directory, validated against the file
// size before anything is handed out. Tensor data is never copied by the parser: each
// tensor's `data` points into the file's image (its mapping, or the memory it was read into
// for the load modes that read; the caller's buffer for File::parse).
//
// A malformed file gives kCorruptFile with a message "<name>: <record>: <problem> (at byte
// N)", never a crash or a read outside the image. Counts in the file are checked against
// the bytes that remain before anything is allocated for them, so the memory a File uses is
// bounded by a small multiple of the file's size.
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "base/load_mode.h"
#include "base/mapped_file.h"
#include "base/status.h"
#include "base/tensor_type.h"
#include "gguf/value.h"

namespace hearth::gguf {

inline constexpr uint32_t kMagic = 0x46554747;  // "GGUF" little-endian
inline constexpr uint32_t kDefaultAlignment = 32;
inline constexpr uint64_t kMaxStringLength = uint64_t{1} << 30;
inline constexpr uint64_t kMaxArrayCount = uint64_t{1} << 30;
inline constexpr size_t kMaxTensorNameLength = 63;
inline constexpr uint32_t kMaxDims = 4;

// Guaranteed by the parser: n_dims <= 4; every ne[i] >= 0; the product of the dimensions,
// zeros counted as 1, fits in int64 (so n_elements(), n_rows() and any partial product
// cannot overflow); ne[0] is a multiple of the type's block size; n_bytes fits in int64;
// [data, data + n_bytes) lies inside the file; tensors are packed in directory order.
struct TensorInfo {
  std::string_view name;
  TensorType type = TensorType::kF32;
  uint32_t n_dims = 0;
  std::array<int64_t, kMaxDims> ne = {1, 1, 1, 1};  // ne[0] fastest varying
  uint64_t offset = 0;                              // relative to the data section of its file
  uint64_t n_bytes = 0;
  const uint8_t* data = nullptr;
  int shard = 0;  // index of the file holding the data (split models)

  int64_t n_elements() const { return ne[0] * ne[1] * ne[2] * ne[3]; }
  int64_t n_rows() const { return ne[1] * ne[2] * ne[3]; }
  std::string shape_string() const;  // "[64, 512]"
};

class File {
 public:
  // Maps `path` (or reads it into memory, as `mode` says: base/load_mode.h) and parses it.
  static Result<File> open(const std::string& path, LoadMode mode = LoadMode::kMmap);
  // Parses bytes owned by the caller, who keeps them alive as long as the File.
  // This is the entry point for fuzzing: it never reads outside `bytes`.
  static Result<File> parse(std::span<const uint8_t> bytes, std::string name = "<memory>");

  File(File&&) noexcept = default;
  File& operator=(File&&) noexcept = default;

  const std::string& name() const { return name_; }
  uint32_t version() const { return version_; }
  uint32_t alignment() const { return alignment_; }
  uint64_t data_offset() const { return data_offset_; }
  uint64_t file_size() const { return bytes_.size(); }
  // The whole image (the mapping, or the caller's buffer for File::parse).
  std::span<const uint8_t> bytes() const { return bytes_; }

  const std::vector<KeyValue>& metadata() const { return kvs_; }
  const Value* find(std::string_view key) const;
  const std::vector<TensorInfo>& tensors() const { return tensors_; }
  const TensorInfo* find_tensor(std::string_view name) const;

  // Strictly typed lookups: kNotFound when absent, kCorruptFile when stored with another type.
  Result<std::string_view> get_string(std::string_view key) const;
  Result<uint32_t> get_u32(std::string_view key) const;
  Result<float> get_f32(std::string_view key) const;
  Result<bool> get_bool(std::string_view key) const;
  // Array lookups; kCorruptFile on a non-array or wrong element type.
  Result<const Value*> get_array(std::string_view key, ValueType element_type) const;

 private:
  File() = default;
  friend class Parser;
  friend class Archive;  // records which shard holds each tensor

  std::string name_;
  std::unique_ptr<MappedFile> mapping_;  // null for File::parse
  std::span<const uint8_t> bytes_;
  uint32_t version_ = 0;
  uint32_t alignment_ = kDefaultAlignment;
  uint64_t data_offset_ = 0;
  std::vector<KeyValue> kvs_;
  std::unordered_map<std::string_view, size_t> kv_index_;
  std::vector<TensorInfo> tensors_;
  std::unordered_map<std::string_view, size_t> tensor_index_;
};

// A model stored in one file or split into `<prefix>-00001-of-0000N.gguf` shards.
// Metadata comes from the first shard; tensors are looked up across all shards.
class Archive {
 public:
  // `path` is the only file or the first shard; the other shards are found by name. Every
  // shard is brought into memory as `mode` says.
  static Result<Archive> open(const std::string& path, LoadMode mode = LoadMode::kMmap);

  const File& primary() const { return files_.front(); }
  const std::vector<File>& files() const { return files_; }
  const TensorInfo* find_tensor(std::string_view name) const;
  const std::vector<const TensorInfo*>& tensors() const { return all_tensors_; }
  uint64_t total_tensor_bytes() const;
  // Drops the mapped pages wholly inside [p, p + n) (a tensor's data that was copied
  // elsewhere) from the resident set; nothing for data not in a mapped shard.
  void release_pages(const void* p, size_t n) const;

 private:
  std::vector<File> files_;
  std::vector<const TensorInfo*> all_tensors_;
  std::unordered_map<std::string_view, const TensorInfo*> index_;
};

// Shard file name for shard `index` (0-based) of `count`: "<prefix>-%05d-of-%05d.gguf".
std::string split_path(const std::string& prefix, int index, int count);

// The parts of a shard file name; the inverse of split_path.
struct SplitPath {
  std::string prefix;
  int index = 0;  // 0-based
  int count = 0;
};
// Parses "<prefix>-NNNNN-of-MMMMM.gguf" (exactly five digits each, 1 <= NNNNN <= MMMMM);
// nullopt for any other name.
std::optional<SplitPath> parse_split_path(std::string_view path);

}  // namespace hearth::gguf
