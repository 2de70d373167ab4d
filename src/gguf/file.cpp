#include "gguf/file.h"

#include <bit>
#include <cstring>
#include <fmt/format.h>

namespace hearth::gguf {

// Reads a GGUF image front to back with a bounds-checked cursor. Every size and count is
// checked against the bytes that remain before it is used, so a hostile file can neither
// make the reader touch memory outside the image nor allocate more than the image implies.
class Parser {
 public:
  Parser(std::span<const uint8_t> bytes, File& out) : bytes_(bytes), out_(out) {}

  Status run() {
    HEARTH_RETURN_IF_ERROR(read_header());
    HEARTH_RETURN_IF_ERROR(read_metadata());
    HEARTH_RETURN_IF_ERROR(read_alignment());
    HEARTH_RETURN_IF_ERROR(read_tensor_infos());
    return place_tensor_data();
  }

 private:
  Status fail(const std::string& what) const {
    return error(ErrorCode::kCorruptFile, fmt::format("{}: {} (at byte {})", out_.name_, what, pos_));
  }
  uint64_t remaining() const { return bytes_.size() - pos_; }

  template <typename T>
  bool read(T& value) {
    if (remaining() < sizeof(T)) return false;
    std::memcpy(&value, bytes_.data() + pos_, sizeof(T));
    pos_ += sizeof(T);
    return true;
  }

  Status read_string(std::string_view& s, const char* what) {
    uint64_t len = 0;
    if (!read(len)) return fail(fmt::format("truncated while reading the length of {}", what));
    if (len > kMaxStringLength) return fail(fmt::format("{} length {} exceeds the limit of 2^30 bytes", what, len));
    if (len > remaining()) return fail(fmt::format("{} length {} runs past the end of the file", what, len));
    s = std::string_view(reinterpret_cast<const char*>(bytes_.data() + pos_), len);
    pos_ += len;
    return Status::ok();
  }

  Status read_header() {
    uint32_t magic = 0;
    if (!read(magic)) return fail("file too small for a GGUF header");
    if (magic != kMagic) return fail(fmt::format("bad magic 0x{:08x}, not a GGUF file", magic));
    uint32_t version = 0;
    if (!read(version)) return fail("truncated header (version)");
    if ((version & 0xFFFFu) == 0 && version != 0)
      return fail("big-endian GGUF files are not supported on this host");
    if (version == 1) return fail("GGUF version 1 is not supported (re-convert the model)");
    if (version != 2 && version != 3) return fail(fmt::format("unsupported GGUF version {}", version));
    out_.version_ = version;
    if (!read(n_tensors_) || !read(n_kv_)) return fail("truncated header (counts)");
    if (n_tensors_ < 0) return fail(fmt::format("negative tensor count {}", n_tensors_));
    if (n_kv_ < 0) return fail(fmt::format("negative metadata count {}", n_kv_));
    // Smallest encodings: a key/value takes 8+1+4+1 bytes, a tensor info 8+1+4+8+4+8.
    if (static_cast<uint64_t>(n_kv_) > remaining() / 14)
      return fail(fmt::format("metadata count {} is larger than the file can hold", n_kv_));
    if (static_cast<uint64_t>(n_tensors_) > remaining() / 33)
      return fail(fmt::format("tensor count {} is larger than the file can hold", n_tensors_));
    return Status::ok();
  }

  Status read_scalar(Value& v, ValueType type, std::string_view key) {
    v.type_ = type;
    if (type == ValueType::kString) return read_string(v.string_, "a string value");
    const size_t size = value_type_size(type);
    if (remaining() < size) return fail(fmt::format("truncated value of key '{}'", key));
    uint64_t bits = 0;
    std::memcpy(&bits, bytes_.data() + pos_, size);
    pos_ += size;
    v.bits_ = bits;
    if (type == ValueType::kF32) v.float_ = std::bit_cast<float>(static_cast<uint32_t>(bits));
    if (type == ValueType::kF64) v.float_ = std::bit_cast<double>(bits);
    return Status::ok();
  }

  Status read_array(Value& v, std::string_view key) {
    uint32_t elem = 0;
    uint64_t count = 0;
    if (!read(elem) || !read(count)) return fail(fmt::format("truncated array header of key '{}'", key));
    if (elem >= kValueTypeCount) return fail(fmt::format("key '{}': unknown array element type {}", key, elem));
    const auto elem_type = static_cast<ValueType>(elem);
    if (elem_type == ValueType::kArray) return fail(fmt::format("key '{}': nested arrays are not allowed", key));
    if (count > kMaxArrayCount) return fail(fmt::format("key '{}': array count {} exceeds 2^30", key, count));
    v.type_ = ValueType::kArray;
    v.element_type_ = elem_type;
    v.count_ = count;
    if (elem_type == ValueType::kString) {
      if (count > remaining() / 8) return fail(fmt::format("key '{}': {} strings cannot fit in the file", key, count));
      v.strings_.resize(count);
      for (uint64_t i = 0; i < count; ++i) HEARTH_RETURN_IF_ERROR(read_string(v.strings_[i], "an array string"));
      return Status::ok();
    }
    const uint64_t size = value_type_size(elem_type);
    if (count > remaining() / size) return fail(fmt::format("key '{}': array of {} runs past the end of the file", key, count));
    v.raw_ = bytes_.data() + pos_;
    pos_ += count * size;
    return Status::ok();
  }

  Status read_metadata() {
    out_.kvs_.reserve(static_cast<size_t>(n_kv_));
    for (int64_t i = 0; i < n_kv_; ++i) {
      KeyValue kv;
      HEARTH_RETURN_IF_ERROR(read_string(kv.key, "a metadata key"));
      if (kv.key.empty()) return fail(fmt::format("metadata entry {} has an empty key", i));
      uint32_t type = 0;
      if (!read(type)) return fail(fmt::format("truncated type of key '{}'", kv.key));
      if (type >= kValueTypeCount) return fail(fmt::format("key '{}' has unknown value type {}", kv.key, type));
      if (static_cast<ValueType>(type) == ValueType::kArray) {
        HEARTH_RETURN_IF_ERROR(read_array(kv.value, kv.key));
      } else {
        HEARTH_RETURN_IF_ERROR(read_scalar(kv.value, static_cast<ValueType>(type), kv.key));
      }
      if (!out_.kv_index_.emplace(kv.key, out_.kvs_.size()).second)
        return fail(fmt::format("duplicate metadata key '{}'", kv.key));
      out_.kvs_.push_back(std::move(kv));
    }
    return Status::ok();
  }

  Status read_alignment() {
    const Value* v = out_.find("general.alignment");
    if (v == nullptr) return Status::ok();
    if (v->type() != ValueType::kU32) return fail("general.alignment must be a u32");
    const uint64_t a = *v->as_uint();
    if (a == 0 || (a & (a - 1)) != 0) return fail(fmt::format("general.alignment {} is not a power of two", a));
    out_.alignment_ = static_cast<uint32_t>(a);
    return Status::ok();
  }

  Status read_tensor_info(TensorInfo& t) {
    HEARTH_RETURN_IF_ERROR(read_string(t.name, "a tensor name"));
    if (t.name.size() > kMaxTensorNameLength)
      return fail(fmt::format("tensor name of {} bytes exceeds {}", t.name.size(), kMaxTensorNameLength));
    if (!read(t.n_dims)) return fail(fmt::format("tensor '{}': truncated dimension count", t.name));
    if (t.n_dims > kMaxDims) return fail(fmt::format("tensor '{}' has {} dimensions (max 4)", t.name, t.n_dims));
    for (uint32_t d = 0; d < t.n_dims; ++d) {
      uint64_t ne = 0;
      if (!read(ne)) return fail(fmt::format("tensor '{}': truncated shape", t.name));
      if (ne > static_cast<uint64_t>(INT64_MAX)) return fail(fmt::format("tensor '{}': negative dimension", t.name));
      t.ne[d] = static_cast<int64_t>(ne);
    }
    uint32_t type = 0;
    if (!read(type) || !read(t.offset)) return fail(fmt::format("tensor '{}': truncated type/offset", t.name));
    const auto traits = tensor_type_traits(type);
    if (type >= kTensorTypeIdLimit || !traits) return fail(fmt::format("tensor '{}' has unknown type id {}", t.name, type));
    t.type = traits->type;
    if (t.ne[0] % traits->block_size != 0)
      return fail(fmt::format("tensor '{}': row length {} is not a multiple of the {} block size {}", t.name,
                              t.ne[0], traits->name, traits->block_size));
    // Element count and byte size must not overflow.
    uint64_t n = 1;
    for (int64_t ne : t.ne) {
      if (ne != 0 && n > static_cast<uint64_t>(INT64_MAX) / static_cast<uint64_t>(ne))
        return fail(fmt::format("tensor '{}': shape {} overflows", t.name, t.shape_string()));
      n *= static_cast<uint64_t>(ne);
    }
    const uint64_t blocks = n / traits->block_size;
    if (blocks != 0 && traits->type_size > static_cast<uint64_t>(INT64_MAX) / blocks)
      return fail(fmt::format("tensor '{}': byte size overflows", t.name));
    t.n_bytes = blocks * traits->type_size;
    return Status::ok();
  }

  Status read_tensor_infos() {
    out_.tensors_.resize(static_cast<size_t>(n_tensors_));
    for (auto& t : out_.tensors_) {
      HEARTH_RETURN_IF_ERROR(read_tensor_info(t));
      if (!out_.tensor_index_.emplace(t.name, &t - out_.tensors_.data()).second)
        return fail(fmt::format("duplicate tensor name '{}'", t.name));
    }
    return Status::ok();
  }

  Status place_tensor_data() {
    const uint64_t align = out_.alignment_;
    uint64_t data_offset = pos_;
    if (n_tensors_ > 0) data_offset = (pos_ + align - 1) / align * align;
    if (data_offset > bytes_.size()) return fail("truncated before the tensor data section");
    out_.data_offset_ = data_offset;
    const uint64_t data_size = bytes_.size() - data_offset;
    uint64_t expected = 0;  // the reference requires tensors packed in directory order
    for (auto& t : out_.tensors_) {
      if (t.offset % align != 0)
        return fail(fmt::format("tensor '{}': offset {} is not aligned to {}", t.name, t.offset, align));
      if (t.offset != expected)
        return fail(fmt::format("tensor '{}': offset {} where {} was expected", t.name, t.offset, expected));
      if (t.offset > data_size || t.n_bytes > data_size - t.offset)
        return fail(fmt::format("tensor '{}': data [{}, +{}) runs past the end of the file ({} data bytes)",
                                t.name, t.offset, t.n_bytes, data_size));
      t.data = bytes_.data() + data_offset + t.offset;
      expected = t.offset + (t.n_bytes + align - 1) / align * align;
    }
    return Status::ok();
  }

  std::span<const uint8_t> bytes_;
  File& out_;
  uint64_t pos_ = 0;
  int64_t n_tensors_ = 0;
  int64_t n_kv_ = 0;
};

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

Result<File> File::open(const std::string& path) {
  HEARTH_ASSIGN_OR_RETURN(MappedFile mapped, MappedFile::open(path));
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
  return error(ErrorCode::kNotFound, fmt::format("{}: metadata key '{}' is missing", f.name(), key));
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
    return error(ErrorCode::kCorruptFile, fmt::format("{}: key '{}' is not an array of {}", name_, key,
                                                      value_type_name(element_type)));
  return v;
}

}  // namespace hearth::gguf
