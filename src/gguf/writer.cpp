#include "gguf/writer.h"

#include <fmt/format.h>
#include <cstdio>
#include <cstring>
#include <memory>

namespace hearth::gguf {
namespace {

template <typename T>
void append(std::vector<uint8_t>& out, T v) {
  const size_t at = out.size();
  out.resize(at + sizeof(T));
  std::memcpy(out.data() + at, &v, sizeof(T));
}

void append_string(std::vector<uint8_t>& out, std::string_view s) {
  append<uint64_t>(out, s.size());
  out.insert(out.end(), s.begin(), s.end());
}

uint64_t pad_to(uint64_t n, uint64_t align) {
  return (n + align - 1) / align * align;
}

template <typename T>
std::vector<uint8_t> scalar(T v) {
  std::vector<uint8_t> out;
  append(out, v);
  return out;
}

}  // namespace

void Writer::put(std::string_view key, ValueType type, std::vector<uint8_t> payload) {
  set_raw(key, static_cast<uint32_t>(type), std::move(payload));
}

void Writer::set_raw(std::string_view key, uint32_t type_id, std::vector<uint8_t> payload) {
  for (auto& e : entries_) {
    if (e.key == key) {
      e.type_id = type_id;
      e.payload = std::move(payload);
      return;
    }
  }
  entries_.push_back({std::string(key), type_id, std::move(payload)});
}

bool Writer::has(std::string_view key) const {
  for (const auto& e : entries_) {
    if (e.key == key) return true;
  }
  return false;
}

void Writer::set_u8(std::string_view key, uint8_t v) {
  put(key, ValueType::kU8, scalar(v));
}
void Writer::set_i8(std::string_view key, int8_t v) {
  put(key, ValueType::kI8, scalar(v));
}
void Writer::set_u16(std::string_view key, uint16_t v) {
  put(key, ValueType::kU16, scalar(v));
}
void Writer::set_i16(std::string_view key, int16_t v) {
  put(key, ValueType::kI16, scalar(v));
}
void Writer::set_u32(std::string_view key, uint32_t v) {
  put(key, ValueType::kU32, scalar(v));
}
void Writer::set_i32(std::string_view key, int32_t v) {
  put(key, ValueType::kI32, scalar(v));
}
void Writer::set_u64(std::string_view key, uint64_t v) {
  put(key, ValueType::kU64, scalar(v));
}
void Writer::set_i64(std::string_view key, int64_t v) {
  put(key, ValueType::kI64, scalar(v));
}
void Writer::set_f32(std::string_view key, float v) {
  put(key, ValueType::kF32, scalar(v));
}
void Writer::set_f64(std::string_view key, double v) {
  put(key, ValueType::kF64, scalar(v));
}
void Writer::set_bool(std::string_view key, bool v) {
  put(key, ValueType::kBool, scalar<uint8_t>(v ? 1 : 0));
}

void Writer::set_string(std::string_view key, std::string_view v) {
  std::vector<uint8_t> p;
  append_string(p, v);
  put(key, ValueType::kString, std::move(p));
}

void Writer::set_string_array(std::string_view key, const std::vector<std::string>& v) {
  std::vector<uint8_t> p;
  append<uint32_t>(p, static_cast<uint32_t>(ValueType::kString));
  append<uint64_t>(p, v.size());
  for (const auto& s : v) append_string(p, s);
  put(key, ValueType::kArray, std::move(p));
}

void Writer::set_f32_array(std::string_view key, std::span<const float> v) {
  std::vector<uint8_t> p;
  append<uint32_t>(p, static_cast<uint32_t>(ValueType::kF32));
  append<uint64_t>(p, v.size());
  for (float f : v) append(p, f);
  put(key, ValueType::kArray, std::move(p));
}

void Writer::set_i32_array(std::string_view key, std::span<const int32_t> v) {
  std::vector<uint8_t> p;
  append<uint32_t>(p, static_cast<uint32_t>(ValueType::kI32));
  append<uint64_t>(p, v.size());
  for (int32_t i : v) append(p, i);
  put(key, ValueType::kArray, std::move(p));
}

void Writer::set_value(std::string_view key, const Value& v) {
  std::vector<uint8_t> p;
  if (v.is_array()) {
    append<uint32_t>(p, static_cast<uint32_t>(v.element_type()));
    append<uint64_t>(p, v.size());
    if (v.element_type() == ValueType::kString) {
      for (auto s : v.strings()) append_string(p, s);
    } else {
      const size_t n = v.size() * value_type_size(v.element_type());
      p.insert(p.end(), v.raw_data(), v.raw_data() + n);
    }
  } else if (v.type() == ValueType::kString) {
    append_string(p, *v.as_string());
  } else if (v.type() == ValueType::kF32) {
    append(p, static_cast<float>(*v.as_float()));
  } else if (v.type() == ValueType::kF64) {
    append(p, *v.as_float());
  } else if (v.type() == ValueType::kBool) {
    append<uint8_t>(p, *v.as_bool() ? 1 : 0);
  } else {
    const auto bits = v.as_int() ? static_cast<uint64_t>(*v.as_int()) : *v.as_uint();
    p.resize(value_type_size(v.type()));
    std::memcpy(p.data(), &bits, p.size());
  }
  put(key, v.type(), std::move(p));
}

Status Writer::add_tensor(std::string_view name, TensorType type, std::vector<int64_t> ne,
                          std::vector<uint8_t> data) {
  auto invalid = [name](std::string_view what) {
    return error(ErrorCode::kInvalidArgument, fmt::format("tensor '{}': {}", name, what));
  };
  if (name.empty() || name.size() > 63) return invalid("name must be 1 to 63 bytes");
  for (const auto& t : tensors_) {
    if (t.name == name) return invalid("added twice");
  }
  const auto& traits = traits_of(type);
  if (ne.empty() || ne.size() > 4) return invalid("needs 1 to 4 dimensions");
  uint64_t n = 1;
  for (int64_t d : ne) {
    if (d < 0) return invalid("negative dimension");
    if (d != 0 && n > static_cast<uint64_t>(INT64_MAX) / static_cast<uint64_t>(d))
      return invalid("element count overflows");
    n *= static_cast<uint64_t>(d);
  }
  if (ne[0] % traits.block_size != 0) return invalid("row length not a multiple of the block size");
  const uint64_t bytes = n / traits.block_size * traits.type_size;
  if (bytes != data.size())
    return invalid(fmt::format("{} data bytes given, {} expected", data.size(), bytes));
  tensors_.push_back({std::string(name), type, std::move(ne), std::move(data)});
  return Status::ok();
}

uint32_t Writer::alignment() const {
  for (const auto& e : entries_) {
    if (e.key != "general.alignment") continue;
    uint32_t a = 0;
    if (e.type_id != static_cast<uint32_t>(ValueType::kU32) || e.payload.size() != sizeof(a)) break;
    std::memcpy(&a, e.payload.data(), sizeof(a));
    if (a != 0 && (a & (a - 1)) == 0) return a;
    break;
  }
  return 32;
}

std::vector<uint8_t> Writer::header_bytes(uint64_t align) const {
  std::vector<uint8_t> out;
  append<uint32_t>(out, 0x46554747);
  append<uint32_t>(out, 3);
  append<int64_t>(out, static_cast<int64_t>(tensors_.size()));
  append<int64_t>(out, static_cast<int64_t>(entries_.size()));
  for (const auto& e : entries_) {
    append_string(out, e.key);
    append<uint32_t>(out, e.type_id);
    out.insert(out.end(), e.payload.begin(), e.payload.end());
  }
  uint64_t offset = 0;
  for (const auto& t : tensors_) {
    append_string(out, t.name);
    append<uint32_t>(out, static_cast<uint32_t>(t.ne.size()));
    for (int64_t d : t.ne) append<uint64_t>(out, static_cast<uint64_t>(d));
    append<uint32_t>(out, static_cast<uint32_t>(t.type));
    append<uint64_t>(out, offset);
    offset += pad_to(t.data.size(), align);
  }
  if (!tensors_.empty()) out.resize(pad_to(out.size(), align), 0);
  return out;
}

std::vector<uint8_t> Writer::to_bytes() const {
  const uint64_t align = alignment();
  std::vector<uint8_t> out = header_bytes(align);
  for (const auto& t : tensors_) {
    out.insert(out.end(), t.data.begin(), t.data.end());
    out.resize(pad_to(out.size(), align), 0);
  }
  return out;
}

Status Writer::write(const std::string& path) const {
  std::unique_ptr<FILE, int (*)(FILE*)> f(std::fopen(path.c_str(), "wb"), &std::fclose);
  if (!f) return error(ErrorCode::kIo, "cannot create '" + path + "'");
  const uint64_t align = alignment();
  const std::vector<uint8_t> header = header_bytes(align);
  bool ok = std::fwrite(header.data(), 1, header.size(), f.get()) == header.size();
  const std::vector<uint8_t> zeros(align, 0);
  for (const auto& t : tensors_) {
    if (!ok) break;
    ok = std::fwrite(t.data.data(), 1, t.data.size(), f.get()) == t.data.size();
    const size_t padding = pad_to(t.data.size(), align) - t.data.size();
    ok = ok && std::fwrite(zeros.data(), 1, padding, f.get()) == padding;
  }
  if (!ok || std::fflush(f.get()) != 0) return error(ErrorCode::kIo, "cannot write '" + path + "'");
  if (std::fclose(f.release()) != 0) return error(ErrorCode::kIo, "cannot close '" + path + "'");
  return Status::ok();
}

}  // namespace hearth::gguf
