// GGUF metadata values. Scalars are held by value; strings and arrays are views into the
// file's bytes (zero-copy), so a Value lives no longer than the File it came from.
#pragma once

#include <cstdint>
#include <cstring>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace hearth::gguf {

enum class ValueType : uint32_t {
  kU8 = 0,
  kI8 = 1,
  kU16 = 2,
  kI16 = 3,
  kU32 = 4,
  kI32 = 5,
  kF32 = 6,
  kBool = 7,
  kString = 8,
  kArray = 9,
  kU64 = 10,
  kI64 = 11,
  kF64 = 12,
};

inline constexpr uint32_t kValueTypeCount = 13;

const char* value_type_name(ValueType type);
// Encoded size of one element of a fixed-size type; 0 for string and array.
size_t value_type_size(ValueType type);
bool is_integer_type(ValueType type);

class Value {
 public:
  ValueType type() const { return type_; }
  bool is_array() const { return type_ == ValueType::kArray; }
  // For arrays: the element type and count.
  ValueType element_type() const { return element_type_; }
  uint64_t size() const { return count_; }

  // Scalars, converted only within their own family (integers, floats, bool, string).
  std::optional<int64_t> as_int() const;    // any integer type (u64 above INT64_MAX: nullopt)
  std::optional<uint64_t> as_uint() const;  // any integer type with a non-negative value
  std::optional<double> as_float() const;   // f32 or f64
  std::optional<bool> as_bool() const;
  std::optional<std::string_view> as_string() const;

  // Arrays. Numeric element i converted to the wider type: integers as stored (u64 above
  // INT64_MAX wraps in int_at), floats truncated toward zero and saturated (NaN gives 0),
  // bool as 0/1. An index past the end, a non-numeric array or a scalar gives 0.
  int64_t int_at(uint64_t i) const;
  double float_at(uint64_t i) const;
  // String element i; empty for an index past the end or a non-string array.
  std::string_view string_at(uint64_t i) const {
    return i < strings_.size() ? strings_[i] : std::string_view();
  }
  const std::vector<std::string_view>& strings() const { return strings_; }
  // Raw packed bytes of a numeric array (count * element size, unaligned); null otherwise.
  const uint8_t* raw_data() const { return raw_; }

  // A short human-readable rendering for dumps and error messages.
  std::string to_display_string(size_t max_elements = 8) const;

 private:
  friend class Parser;
  bool has_numeric_element(uint64_t i) const;

  ValueType type_ = ValueType::kU8;
  ValueType element_type_ = ValueType::kU8;
  uint64_t count_ = 0;
  uint64_t bits_ = 0;             // scalar integer/bool bits, or float bits widened to double
  double float_ = 0.0;            // scalar f32/f64 value
  std::string_view string_;       // scalar string
  const uint8_t* raw_ = nullptr;  // numeric array payload
  std::vector<std::string_view> strings_;  // string array elements
};

struct KeyValue {
  std::string_view key;
  Value value;
};

}  // namespace hearth::gguf
