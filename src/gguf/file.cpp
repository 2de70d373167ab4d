#include "gguf/file.h"

#include <fmt/format.h>

#include "gguf/parser.h"

namespace hearth::gguf {

std::string TensorInfo::shape_string() const {
  std::string s = "[";
  const uint32_t dims = n_dims == 0 ? 1 : n_dims;
  for (uint32_t d = 0; d < dims; ++d) s += fmt::format("{}{}", d ? ", " : "", ne[d]);
  return s + "]";
}

Result<File> File::parse(std::span<const uint8_t> bytes, std::string name) {
  File file;
  file.name_ = std::move(name);
  file.bytes_ = bytes;
  Parser parser(bytes, file);
  HEARTH_RETURN_IF_ERROR(parser.run());
  return file;
}

Result<File> File::open(const std::string& path, LoadMode mode) {
  HEARTH_ASSIGN_OR_RETURN(MappedFile mapped, MappedFile::open(path, mode));
  auto mapping = std::make_unique<MappedFile>(std::move(mapped));
  const std::span<const uint8_t> bytes = mapping->bytes();
  HEARTH_ASSIGN_OR_RETURN(File file, parse(bytes, path));
  file.mapping_ = std::move(mapping);
  return file;
}

const Value* File::find(std::string_view key) const {
  auto it = kv_index_.find(key);
  return it == kv_index_.end() ? nullptr : &kvs_[it->second].value;
}

const TensorInfo* File::find_tensor(std::string_view name) const {
  auto it = tensor_index_.find(name);
  return it == tensor_index_.end() ? nullptr : &tensors_[it->second];
}

namespace {

Status type_mismatch(const File& f, std::string_view key, const Value& v, ValueType want) {
  return error(ErrorCode::kCorruptFile,
               fmt::format("{}: key '{}' is stored as {} where {} is expected", f.name(), key,
                           value_type_name(v.type()), value_type_name(want)));
}

Status missing(const File& f, std::string_view key) {
  return error(ErrorCode::kNotFound,
               fmt::format("{}: metadata key '{}' is missing", f.name(), key));
}

}  // namespace

Result<std::string_view> File::get_string(std::string_view key) const {
  const Value* v = find(key);
  if (!v) return missing(*this, key);
  if (v->type() != ValueType::kString) return type_mismatch(*this, key, *v, ValueType::kString);
  return *v->as_string();
}

Result<uint32_t> File::get_u32(std::string_view key) const {
  const Value* v = find(key);
  if (!v) return missing(*this, key);
  if (v->type() != ValueType::kU32) return type_mismatch(*this, key, *v, ValueType::kU32);
  return static_cast<uint32_t>(*v->as_uint());
}

Result<float> File::get_f32(std::string_view key) const {
  const Value* v = find(key);
  if (!v) return missing(*this, key);
  if (v->type() != ValueType::kF32) return type_mismatch(*this, key, *v, ValueType::kF32);
  return static_cast<float>(*v->as_float());
}

Result<bool> File::get_bool(std::string_view key) const {
  const Value* v = find(key);
  if (!v) return missing(*this, key);
  if (v->type() != ValueType::kBool) return type_mismatch(*this, key, *v, ValueType::kBool);
  return *v->as_bool();
}

Result<const Value*> File::get_array(std::string_view key, ValueType element_type) const {
  const Value* v = find(key);
  if (!v) return missing(*this, key);
  if (!v->is_array() || v->element_type() != element_type)
    return error(ErrorCode::kCorruptFile, fmt::format("{}: key '{}' is not an array of {}", name_,
                                                      key, value_type_name(element_type)));
  return v;
}

}  // namespace hearth::gguf
