#include "gguf/value.h"

#include <fmt/format.h>
#include <bit>
#include <cmath>

namespace hearth::gguf {

const char* value_type_name(ValueType type) {
  switch (type) {
    case ValueType::kU8:
      return "u8";
    case ValueType::kI8:
      return "i8";
    case ValueType::kU16:
      return "u16";
    case ValueType::kI16:
      return "i16";
    case ValueType::kU32:
      return "u32";
    case ValueType::kI32:
      return "i32";
    case ValueType::kF32:
      return "f32";
    case ValueType::kBool:
      return "bool";
    case ValueType::kString:
      return "string";
    case ValueType::kArray:
      return "array";
    case ValueType::kU64:
      return "u64";
    case ValueType::kI64:
      return "i64";
    case ValueType::kF64:
      return "f64";
  }
  return "unknown";
}

size_t value_type_size(ValueType type) {
  switch (type) {
    case ValueType::kU8:
    case ValueType::kI8:
    case ValueType::kBool:
      return 1;
    case ValueType::kU16:
    case ValueType::kI16:
      return 2;
    case ValueType::kU32:
    case ValueType::kI32:
    case ValueType::kF32:
      return 4;
    case ValueType::kU64:
    case ValueType::kI64:
    case ValueType::kF64:
      return 8;
    case ValueType::kString:
    case ValueType::kArray:
      return 0;
  }
  return 0;
}

bool is_integer_type(ValueType type) {
  switch (type) {
    case ValueType::kU8:
    case ValueType::kI8:
    case ValueType::kU16:
    case ValueType::kI16:
    case ValueType::kU32:
    case ValueType::kI32:
    case ValueType::kU64:
    case ValueType::kI64:
      return true;
    default:
      return false;
  }
}

namespace {

bool is_signed(ValueType t) {
  return t == ValueType::kI8 || t == ValueType::kI16 || t == ValueType::kI32 ||
         t == ValueType::kI64;
}

// Sign-extends the raw little-endian bits of an integer element.
int64_t to_signed(ValueType t, uint64_t bits) {
  switch (t) {
    case ValueType::kI8:
      return static_cast<int8_t>(bits);
    case ValueType::kI16:
      return static_cast<int16_t>(bits);
    case ValueType::kI32:
      return static_cast<int32_t>(bits);
    default:
      return static_cast<int64_t>(bits);
  }
}

uint64_t load_bits(const uint8_t* p, size_t size) {
  uint64_t v = 0;
  std::memcpy(&v, p, size);  // little-endian host
  return v;
}

}  // namespace

std::optional<int64_t> Value::as_int() const {
  if (!is_integer_type(type_)) return std::nullopt;
  if (type_ == ValueType::kU64 && bits_ > static_cast<uint64_t>(INT64_MAX)) return std::nullopt;
  return to_signed(type_, bits_);
}

std::optional<uint64_t> Value::as_uint() const {
  if (!is_integer_type(type_)) return std::nullopt;
  if (is_signed(type_) && to_signed(type_, bits_) < 0) return std::nullopt;
  return is_signed(type_) ? static_cast<uint64_t>(to_signed(type_, bits_)) : bits_;
}

std::optional<double> Value::as_float() const {
  if (type_ != ValueType::kF32 && type_ != ValueType::kF64) return std::nullopt;
  return float_;
}

std::optional<bool> Value::as_bool() const {
  if (type_ != ValueType::kBool) return std::nullopt;
  return bits_ != 0;
}

std::optional<std::string_view> Value::as_string() const {
  if (type_ != ValueType::kString) return std::nullopt;
  return string_;
}

namespace {

// Float to integer without the undefined behaviour of an out-of-range cast.
int64_t saturating_to_int(double d) {
  if (std::isnan(d)) return 0;
  if (d >= 0x1p63) return INT64_MAX;
  if (d < -0x1p63) return INT64_MIN;
  return static_cast<int64_t>(d);
}

}  // namespace

bool Value::has_numeric_element(uint64_t i) const {
  return type_ == ValueType::kArray && raw_ != nullptr && i < count_ &&
         value_type_size(element_type_) != 0;
}

int64_t Value::int_at(uint64_t i) const {
  if (!has_numeric_element(i)) return 0;
  const size_t size = value_type_size(element_type_);
  const uint64_t bits = load_bits(raw_ + i * size, size);
  if (element_type_ == ValueType::kBool) return bits != 0;
  if (element_type_ == ValueType::kF32)
    return saturating_to_int(std::bit_cast<float>(static_cast<uint32_t>(bits)));
  if (element_type_ == ValueType::kF64) return saturating_to_int(std::bit_cast<double>(bits));
  return to_signed(element_type_, bits);
}

double Value::float_at(uint64_t i) const {
  if (!has_numeric_element(i)) return 0.0;
  const size_t size = value_type_size(element_type_);
  const uint64_t bits = load_bits(raw_ + i * size, size);
  if (element_type_ == ValueType::kBool) return bits != 0 ? 1.0 : 0.0;
  if (element_type_ == ValueType::kF32) return std::bit_cast<float>(static_cast<uint32_t>(bits));
  if (element_type_ == ValueType::kF64) return std::bit_cast<double>(bits);
  if (element_type_ == ValueType::kU64) return static_cast<double>(bits);
  return static_cast<double>(to_signed(element_type_, bits));
}

std::string Value::to_display_string(size_t max_elements) const {
  auto quote = [](std::string_view s) {
    std::string out = "\"";
    for (char c : s.substr(0, 64)) {
      if (c == '\n') {
        out += "\\n";
      } else if (static_cast<unsigned char>(c) < 0x20) {
        out += fmt::format("\\x{:02x}", static_cast<unsigned char>(c));
      } else {
        out += c;
      }
    }
    if (s.size() > 64) out += "...";
    return out + "\"";
  };
  switch (type_) {
    case ValueType::kString:
      return quote(string_);
    case ValueType::kBool:
      return bits_ ? "true" : "false";
    case ValueType::kF32:
    case ValueType::kF64:
      return fmt::format("{}", float_);
    case ValueType::kArray: {
      std::string out = fmt::format("[{} x {}] [", count_, value_type_name(element_type_));
      for (uint64_t i = 0; i < count_ && i < max_elements; ++i) {
        if (i) out += ", ";
        if (element_type_ == ValueType::kString) {
          out += quote(strings_[i]);
        } else if (element_type_ == ValueType::kF32 || element_type_ == ValueType::kF64) {
          out += fmt::format("{}", float_at(i));
        } else if (element_type_ == ValueType::kBool) {
          out += int_at(i) != 0 ? "true" : "false";
        } else if (element_type_ == ValueType::kU64) {
          out += fmt::format("{}", static_cast<uint64_t>(int_at(i)));
        } else {
          out += fmt::format("{}", int_at(i));
        }
      }
      if (count_ > max_elements) out += ", ...";
      return out + "]";
    }
    default:
      if (type_ == ValueType::kU64) return fmt::format("{}", bits_);
      return fmt::format("{}", to_signed(type_, bits_));
  }
}

}  // namespace hearth::gguf
