// Byte-level GGUF construction for tests that need files gguf::Writer refuses to produce:
// every field is written exactly as given, valid or not.
#pragma once

#include <cstdint>
#include <cstring>
#include <string_view>
#include <vector>

namespace hearth::gguf {

class RawGguf {
 public:
  RawGguf& u8(uint8_t v) { return put(v); }
  RawGguf& u16(uint16_t v) { return put(v); }
  RawGguf& u32(uint32_t v) { return put(v); }
  RawGguf& u64(uint64_t v) { return put(v); }
  RawGguf& i64(int64_t v) { return put(v); }
  RawGguf& f32(float v) { return put(v); }
  RawGguf& raw(std::string_view s) {
    bytes_.insert(bytes_.end(), s.begin(), s.end());
    return *this;
  }
  // A GGUF string: u64 length then the bytes.
  RawGguf& str(std::string_view s) { return u64(s.size()).raw(s); }
  // A string whose length field is `length` but whose bytes are `s`.
  RawGguf& str_with_length(uint64_t length, std::string_view s) { return u64(length).raw(s); }
  RawGguf& zeros(size_t n) {
    bytes_.resize(bytes_.size() + n, 0);
    return *this;
  }
  // Zero padding up to the next multiple of `align` from the start of the file.
  RawGguf& pad(size_t align) {
    bytes_.resize((bytes_.size() + align - 1) / align * align, 0);
    return *this;
  }

  RawGguf& header(int64_t n_tensors, int64_t n_kv, uint32_t version = 3) {
    return raw("GGUF").u32(version).i64(n_tensors).i64(n_kv);
  }
  // Metadata records; value type ids as in gguf::ValueType.
  RawGguf& kv_u32(std::string_view key, uint32_t v) { return str(key).u32(4).u32(v); }
  RawGguf& kv_string(std::string_view key, std::string_view v) { return str(key).u32(8).str(v); }
  // The header of an array; the caller appends the elements.
  RawGguf& kv_array(std::string_view key, uint32_t element_type, uint64_t count) {
    return str(key).u32(9).u32(element_type).u64(count);
  }
  // A tensor-info record; type ids as in hearth::TensorType.
  RawGguf& tensor(std::string_view name, const std::vector<uint64_t>& ne, uint32_t type,
                  uint64_t offset) {
    str(name).u32(static_cast<uint32_t>(ne.size()));
    for (uint64_t d : ne) u64(d);
    return u32(type).u64(offset);
  }

  size_t size() const { return bytes_.size(); }
  const std::vector<uint8_t>& bytes() const { return bytes_; }

 private:
  template <typename T>
  RawGguf& put(T v) {
    const size_t at = bytes_.size();
    bytes_.resize(at + sizeof(T));
    std::memcpy(bytes_.data() + at, &v, sizeof(T));
    return *this;
  }

  std::vector<uint8_t> bytes_;
};

}  // namespace hearth::gguf
