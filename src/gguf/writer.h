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
  void set_u16(std::string_view key, uint16_t v);
  void set_u32(std::string_view key, uint32_t v);
  void set_i32(std::string_view key, int32_t v);
  void set_u64(std::string_view key, uint64_t v);
  void set_f32(std::string_view key, float v);
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
  Status add_tensor(std::string_view name, TensorType type, std::vector<int64_t> ne,
                    std::vector<uint8_t> data);

  void set_alignment(uint32_t alignment) { alignment_ = alignment; }

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
  std::vector<uint8_t> header_bytes() const;
  void put(std::string_view key, ValueType type, std::vector<uint8_t> payload);

  std::vector<Entry> entries_;
  std::vector<Tensor> tensors_;
  uint32_t alignment_ = 32;
};

}  // namespace hearth::gguf
