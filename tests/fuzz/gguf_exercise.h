// Checks shared by the GGUF fuzzer and the unit tests: after a successful parse, read every
// metadata value and tensor byte through the public API and check the reader's invariants,
// then re-encode the file with gguf::Writer and check that it reads back the same.
// Each check returns a description of the first problem it finds, or "" when all hold.
#pragma once

#include <fmt/format.h>

#include <bit>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "gguf/file.h"
#include "gguf/writer.h"

namespace hearth::gguf::fuzz {

// Whether [p, p + n) lies inside `bytes` (compared as addresses, not as pointers).
inline bool within(std::span<const uint8_t> bytes, const void* p, uint64_t n) {
  const auto begin = reinterpret_cast<uintptr_t>(bytes.data());
  const auto at = reinterpret_cast<uintptr_t>(p);
  return at >= begin && at - begin <= bytes.size() && n <= bytes.size() - (at - begin);
}

inline std::string exercise_value(const File& f, const KeyValue& kv, uint64_t& checksum) {
  const Value& v = kv.value;
  const std::span<const uint8_t> bytes = f.bytes();
  checksum += v.to_display_string(16).size();
  checksum += static_cast<uint64_t>(v.as_int().value_or(0)) + v.as_uint().value_or(0);
  checksum += static_cast<uint64_t>(v.as_bool().value_or(false));
  if (auto d = v.as_float(); d && !std::isnan(*d)) checksum += *d > 0;
  if (auto s = v.as_string()) {
    if (!within(bytes, s->data(), s->size())) return "string value outside the file";
    checksum += s->size();
  }
  if (!v.is_array()) {
    if (v.int_at(0) != 0 || !v.string_at(0).empty()) return "scalar answered an array access";
    return "";
  }
  if (v.element_type() == ValueType::kArray) return "nested array accepted";
  if (v.element_type() == ValueType::kString) {
    if (v.strings().size() != v.size()) return "string array size mismatch";
    for (uint64_t i = 0; i < v.size(); ++i) {
      const std::string_view s = v.string_at(i);
      if (!within(bytes, s.data(), s.size())) return "array string outside the file";
      checksum += s.size() + static_cast<uint64_t>(v.int_at(i));
    }
  } else {
    const uint64_t n_bytes = v.size() * value_type_size(v.element_type());
    if (!within(bytes, v.raw_data(), n_bytes)) return "array payload outside the file";
    for (uint64_t i = 0; i < v.size(); ++i) {
      const double d = v.float_at(i);
      checksum += static_cast<uint64_t>(v.int_at(i)) + (std::isnan(d) ? 1u : 0u);
    }
  }
  if (v.int_at(v.size()) != 0 || v.float_at(v.size()) != 0.0 || !v.string_at(v.size()).empty())
    return "array access past the end answered";
  return "";
}

inline std::string exercise_typed_getters(const File& f, const KeyValue& kv) {
  const ValueType t = kv.value.type();
  if (f.get_string(kv.key).is_ok() != (t == ValueType::kString)) return "get_string mismatch";
  if (f.get_u32(kv.key).is_ok() != (t == ValueType::kU32)) return "get_u32 mismatch";
  if (f.get_f32(kv.key).is_ok() != (t == ValueType::kF32)) return "get_f32 mismatch";
  if (f.get_bool(kv.key).is_ok() != (t == ValueType::kBool)) return "get_bool mismatch";
  const bool is_array = kv.value.is_array();
  if (f.get_array(kv.key, kv.value.element_type()).is_ok() != is_array) return "get_array mismatch";
  return "";
}

inline std::string exercise_tensor(const File& f, const TensorInfo& t, uint64_t& checksum,
                                   bool touch_all_bytes) {
  const std::span<const uint8_t> bytes = f.bytes();
  if (f.find_tensor(t.name) != &t)
    return fmt::format("find_tensor('{}') is another tensor", t.name);
  if (t.name.size() > kMaxTensorNameLength || t.n_dims > kMaxDims) return "bad tensor info";
  const auto traits = tensor_type_traits(static_cast<uint32_t>(t.type));
  if (!traits) return "tensor with an invalid type";
  for (int64_t ne : t.ne) {
    if (ne < 0) return "negative dimension";
  }
  if (t.ne[0] % traits->block_size != 0) return "row length not a multiple of the block";
  if (t.n_bytes != static_cast<uint64_t>(t.n_elements()) / traits->block_size * traits->type_size)
    return "n_bytes does not match the shape";
  if (t.offset % f.alignment() != 0) return "misaligned tensor offset";
  if (!within(bytes, t.data, t.n_bytes)) return fmt::format("tensor '{}' outside the file", t.name);
  if (t.data != bytes.data() + f.data_offset() + t.offset) return "tensor data pointer mismatch";
  checksum += t.shape_string().size() + static_cast<uint64_t>(t.n_rows());
  if (t.n_bytes == 0) return "";
  if (touch_all_bytes) {
    for (uint64_t i = 0; i < t.n_bytes; ++i) checksum += t.data[i];
  } else {
    checksum += t.data[0] + t.data[t.n_bytes - 1];
  }
  return "";
}

// Reads everything a consumer could read from a parsed file.
inline std::string exercise(const File& f, uint64_t& checksum, bool touch_all_bytes = true) {
  if (f.version() != 2 && f.version() != 3) return "unexpected version";
  if (!std::has_single_bit(f.alignment())) return "alignment not a power of two";
  if (f.data_offset() > f.file_size()) return "data offset past the end";
  if (!f.tensors().empty() && f.data_offset() % f.alignment() != 0) return "data offset misaligned";
  for (const KeyValue& kv : f.metadata()) {
    if (kv.key.empty() || !within(f.bytes(), kv.key.data(), kv.key.size())) return "bad key";
    if (f.find(kv.key) != &kv.value) return "find() returned another value";
    std::string problem = exercise_value(f, kv, checksum);
    if (problem.empty()) problem = exercise_typed_getters(f, kv);
    if (!problem.empty()) return fmt::format("key '{}': {}", kv.key, problem);
  }
  uint64_t expected_offset = 0;
  for (const TensorInfo& t : f.tensors()) {
    std::string problem = exercise_tensor(f, t, checksum, touch_all_bytes);
    if (!problem.empty()) return problem;
    if (t.offset != expected_offset) return "tensors not packed";
    expected_offset = t.offset + (t.n_bytes + f.alignment() - 1) / f.alignment() * f.alignment();
  }
  return "";
}

inline bool same_value(const Value& a, const Value& b) {
  if (a.type() != b.type() || a.is_array() != b.is_array()) return false;
  if (a.is_array()) {
    if (a.element_type() != b.element_type() || a.size() != b.size()) return false;
    if (a.element_type() == ValueType::kString) return a.strings() == b.strings();
    const uint64_t n = a.size() * value_type_size(a.element_type());
    return n == 0 || std::memcmp(a.raw_data(), b.raw_data(), n) == 0;
  }
  if (a.as_float()) {
    const double x = *a.as_float(), y = b.as_float().value_or(0.0);
    return (std::isnan(x) && std::isnan(y)) || x == y;
  }
  return a.as_int() == b.as_int() && a.as_uint() == b.as_uint() && a.as_bool() == b.as_bool() &&
         a.as_string() == b.as_string();
}

// Copies every key and tensor of `f` into a Writer and checks that the result parses to the
// same content. Files with tensors the Writer cannot express (empty names) are skipped.
inline std::string check_rewrite(const File& f) {
  Writer w;
  for (const KeyValue& kv : f.metadata()) w.set_value(kv.key, kv.value);
  for (const TensorInfo& t : f.tensors()) {
    if (t.name.empty()) return "";
    std::vector<int64_t> ne(t.ne.begin(), t.ne.begin() + std::max<uint32_t>(t.n_dims, 1));
    const Status s =
        w.add_tensor(t.name, t.type, ne, std::vector<uint8_t>(t.data, t.data + t.n_bytes));
    if (!s.is_ok()) return "writer refused a tensor: " + s.message();
  }
  const std::vector<uint8_t> image = w.to_bytes();
  auto g = File::parse(image, "rewritten");
  if (!g.is_ok()) return "rewritten file does not parse: " + g.status().message();
  if (g->metadata().size() != f.metadata().size() || g->tensors().size() != f.tensors().size())
    return "rewritten file has different counts";
  if (g->alignment() != f.alignment()) return "rewritten file has another alignment";
  for (size_t i = 0; i < f.metadata().size(); ++i) {
    const KeyValue& a = f.metadata()[i];
    const KeyValue& b = g->metadata()[i];
    if (a.key != b.key || !same_value(a.value, b.value))
      return fmt::format("key '{}' differs after rewriting", a.key);
  }
  for (size_t i = 0; i < f.tensors().size(); ++i) {
    const TensorInfo& a = f.tensors()[i];
    const TensorInfo& b = g->tensors()[i];
    if (a.name != b.name || a.type != b.type || a.ne != b.ne || a.n_bytes != b.n_bytes ||
        a.offset != b.offset || (a.n_bytes && std::memcmp(a.data, b.data, a.n_bytes) != 0))
      return fmt::format("tensor '{}' differs after rewriting", a.name);
  }
  return "";
}

}  // namespace hearth::gguf::fuzz
