// Writing GGUF files (version 3, packed and aligned as the reference writes them).
// Used by the model synthesizer, converters and tests that build files on purpose.
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

class Writer {
 public:
  // Scalars. Setting a key again replaces its value but keeps its position.
  void set_u8(std::string_view key, uint8_t v);
  void set_i8(std::string_view key, int8_t v);
  void set_u16(std::string_view key, uint16_t v);
  void set_i16(std::string_view key, int16_t v);
  void set_u32(std::string_view key, uint32_t v);
  void set_i32(std::string_view key, int32_t v);
  void set_u64(std::string_view key, uint64_t v);
  void set_i64(std::string_view key, int64_t v);
  void set_f32(std::string_view key, float v);
  void set_f64(std::string_view key, double v);
  void set_bool(std::string_view key, bool v);
  void set_string(std::string_view key, std::string_view v);
  // Arrays.
  void set_string_array(std::string_view key, const std::vector<std::string>& v);
  void set_f32_array(std::string_view key, std::span<const float> v);
  void set_i32_array(std::string_view key, std::span<const int32_t> v);
  // A value read from another file (any type), e.g. to copy a tokenizer.
  void set_value(std::string_view key, const Value& v);
  // Raw escape hatch for tests: `payload` is the encoding after the type id.
  void set_raw(std::string_view key, uint32_t type_id, std::vector<uint8_t> payload);
  bool has(std::string_view key) const;

  // Adds a tensor; `data` must hold exactly the tensor's byte size for `type` and `ne`.
  // kInvalidArgument for a name that is empty, longer than 63 bytes or already added, for
  // 0 or more than 4 dimensions, a negative dimension, a row length that is not a multiple
  // of the block size, or a size that overflows.
  Status add_tensor(std::string_view name, TensorType type, std::vector<int64_t> ne,
                    std::vector<uint8_t> data);

  // Sets general.alignment (u32); tensor data is padded to it. A stored general.alignment
  // that is a u32 power of two, however set, decides the padding; otherwise the data is
  // padded to 32, so tests can write files whose alignment key is deliberately invalid.
  void set_alignment(uint32_t alignment) { set_u32("general.alignment", alignment); }

  // The whole file image.
  std::vector<uint8_t> to_bytes() const;
  Status write(const std::string& path) const;

 private:
  struct Entry {
    std::string key;
    uint32_t type_id;
    std::vector<uint8_t> payload;
  };
  struct Tensor {
    std::string name;
    TensorType type;
    std::vector<int64_t> ne;
    std::vector<uint8_t> data;
  };
  std::vector<uint8_t> header_bytes(uint64_t align) const;
  uint32_t alignment() const;
  void put(std::string_view key, ValueType type, std::vector<uint8_t> payload);

  std::vector<Entry> entries_;
  std::vector<Tensor> tensors_;
};

}  // namespace hearth::gguf
