// Internal to hearth_gguf: the validating reader behind File::parse. Not part of the API.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"
#include "base/tensor_type.h"
#include "gguf/value.h"

namespace hearth::gguf {

class File;
struct TensorInfo;

// A key or name from a file, safe to embed in a message: control, quote and non-ASCII bytes
// are escaped and long names are cut.
std::string printable(std::string_view s);

// Reads a GGUF image front to back with a bounds-checked cursor. Every size and count is
// checked against the bytes that remain before it is used, so a hostile file can neither
// make the reader touch memory outside the image nor allocate more than a small multiple
// of the image's size. Errors are kCorruptFile and say which record and byte offset.
class Parser {
 public:
  Parser(std::span<const uint8_t> bytes, File& out) : bytes_(bytes), out_(out) {}

  Status run();

 private:
  // Which part of the file is being read; error messages are built from it on failure only.
  enum class Section { kHeader, kMetadata, kTensorInfo, kPadding, kTensorData };

  Status fail(uint64_t at, std::string_view what) const;
  std::string where() const;
  uint64_t remaining() const { return bytes_.size() - pos_; }

  template <typename T>
  Status read(T& value, std::string_view field);
  // `element` >= 0 names an element of a string array in errors.
  Status read_string(std::string_view& s, std::string_view field, int64_t element = -1);

  Status read_header();
  Status read_metadata();
  Status read_key_value(KeyValue& kv);
  Status read_scalar(Value& v, ValueType type);
  Status read_array(Value& v);
  Status read_alignment();
  Status read_tensor_infos();
  Status read_tensor_info(TensorInfo& t);
  Status read_tensor_type(TensorInfo& t, TensorTypeTraits& traits);
  Status compute_tensor_size(TensorInfo& t, const TensorTypeTraits& traits, uint64_t at);
  Status place_tensor_data();

  std::span<const uint8_t> bytes_;
  File& out_;
  uint64_t pos_ = 0;
  int64_t n_tensors_ = 0;
  int64_t n_kv_ = 0;

  Section section_ = Section::kHeader;
  int64_t index_ = 0;                     // record index within the section
  std::string_view record_name_;          // key or tensor name, once read
  uint64_t alignment_at_ = 0;             // where the general.alignment record starts
  std::vector<uint64_t> tensor_info_at_;  // where each tensor-info record starts
};

}  // namespace hearth::gguf
