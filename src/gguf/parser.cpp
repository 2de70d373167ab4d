#include "gguf/parser.h"

#include <fmt/format.h>

#include <algorithm>
#include <bit>
#include <cstring>

#include "gguf/file.h"

namespace hearth::gguf {
namespace {

// Smallest encodings, used to reject counts the remaining bytes cannot possibly hold before
// anything is allocated for them. A key/value: key length, a 1-byte key, type id, a 1-byte
// value. A tensor info: name length (empty name), n_dims = 0, type id, offset.
constexpr uint64_t kMinKeyValueBytes = 8 + 1 + 4 + 1;
constexpr uint64_t kMinTensorInfoBytes = 8 + 4 + 4 + 8;
// Upper bound on up-front reservations; larger tables grow as records are actually read.
constexpr uint64_t kMaxReserve = 4096;

std::string describe_magic(uint32_t magic) {
  std::string text;
  for (int i = 0; i < 4; ++i) {
    const auto c = static_cast<unsigned char>(magic >> (8 * i));
    text += (c >= 0x20 && c < 0x7f) ? static_cast<char>(c) : '.';
  }
  return fmt::format("0x{:08x} (\"{}\")", magic, text);
}

// Type ids that once existed in ggml and no longer appear in valid files.
bool is_removed_type_id(uint32_t id) {
  return id == 4 || id == 5 || (id >= 31 && id <= 33) || (id >= 36 && id <= 38);
}

uint64_t align_up(uint64_t n, uint64_t align) {
  return (n + align - 1) / align * align;
}

}  // namespace

std::string printable(std::string_view s) {
  constexpr size_t kMaxShown = 80;
  std::string out;
  for (size_t i = 0; i < s.size() && i < kMaxShown; ++i) {
    const auto c = static_cast<unsigned char>(s[i]);
    if (c < 0x20 || c >= 0x7f || c == '\'' || c == '\\') {
      out += fmt::format("\\x{:02x}", c);
    } else {
      out += static_cast<char>(c);
    }
  }
  if (s.size() > kMaxShown) out += fmt::format("...({} bytes)", s.size());
  return out;
}

Status Parser::run() {
  HEARTH_RETURN_IF_ERROR(read_header());
  HEARTH_RETURN_IF_ERROR(read_metadata());
  HEARTH_RETURN_IF_ERROR(read_alignment());
  HEARTH_RETURN_IF_ERROR(read_tensor_infos());
  return place_tensor_data();
}

std::string Parser::where() const {
  const std::string name =
      record_name_.empty() ? std::string() : fmt::format(" '{}'", printable(record_name_));
  switch (section_) {
    case Section::kHeader:
      return "header";
    case Section::kMetadata:
      return fmt::format("metadata entry {}{}", index_, name);
    case Section::kTensorInfo:
      return fmt::format("tensor info {}{}", index_, name);
    case Section::kPadding:
      return "padding before the tensor data";
    case Section::kTensorData:
      return fmt::format("tensor {}{}", index_, name);
  }
  return "";
}

Status Parser::fail(uint64_t at, std::string_view what) const {
  return error(ErrorCode::kCorruptFile,
               fmt::format("{}: {}: {} (at byte {})", out_.name_, where(), what, at));
}

template <typename T>
Status Parser::read(T& value, std::string_view field) {
  if (remaining() < sizeof(T)) {
    return fail(pos_, fmt::format("truncated: the {} needs {} bytes, {} left", field, sizeof(T),
                                  remaining()));
  }
  std::memcpy(&value, bytes_.data() + pos_, sizeof(T));  // little-endian host
  pos_ += sizeof(T);
  return Status::ok();
}

Status Parser::read_string(std::string_view& s, std::string_view field, int64_t element) {
  const uint64_t at = pos_;
  // Formatted on failure only: this runs for every vocabulary entry.
  auto what = [&] {
    return element < 0 ? std::string(field) : fmt::format("{} {}", field, element);
  };
  uint64_t len = 0;
  if (remaining() < sizeof(len)) {
    return fail(at, fmt::format("truncated: the length of the {} needs 8 bytes, {} left", what(),
                                remaining()));
  }
  std::memcpy(&len, bytes_.data() + pos_, sizeof(len));
  pos_ += sizeof(len);
  if (len > kMaxStringLength)
    return fail(at, fmt::format("{} length {} exceeds the limit of 2^30 bytes", what(), len));
  if (len > remaining()) {
    return fail(at, fmt::format("{} length {} runs past the end of the file ({} bytes left)",
                                what(), len, remaining()));
  }
  s = std::string_view(reinterpret_cast<const char*>(bytes_.data() + pos_), len);
  pos_ += len;
  return Status::ok();
}

Status Parser::read_header() {
  section_ = Section::kHeader;
  uint32_t magic = 0;
  if (bytes_.size() < sizeof(magic))
    return fail(0, fmt::format("{} bytes is too small for a GGUF header", bytes_.size()));
  HEARTH_RETURN_IF_ERROR(read(magic, "magic"));
  if (magic != kMagic)
    return fail(0, fmt::format("bad magic {}, not a GGUF file", describe_magic(magic)));
  uint32_t version = 0;
  HEARTH_RETURN_IF_ERROR(read(version, "version"));
  if (version == 0) return fail(4, "invalid GGUF version 0");
  // A byte-swapped small version number has its low 16 bits clear.
  if ((version & 0xFFFFu) == 0)
    return fail(4, "big-endian GGUF files are not supported on this little-endian host");
  if (version == 1) return fail(4, "GGUF version 1 is not supported (re-convert the model)");
  if (version > 3)
    return fail(4, fmt::format("unsupported GGUF version {} (this reader knows 2 and 3)", version));
  out_.version_ = version;
  HEARTH_RETURN_IF_ERROR(read(n_tensors_, "tensor count"));
  HEARTH_RETURN_IF_ERROR(read(n_kv_, "metadata count"));
  if (n_tensors_ < 0) return fail(8, fmt::format("negative tensor count {}", n_tensors_));
  if (n_kv_ < 0) return fail(16, fmt::format("negative metadata count {}", n_kv_));
  const uint64_t n_kv = static_cast<uint64_t>(n_kv_);
  const uint64_t n_tensors = static_cast<uint64_t>(n_tensors_);
  if (n_kv > remaining() / kMinKeyValueBytes) {
    return fail(16, fmt::format("metadata count {} cannot fit in the {} bytes that follow", n_kv,
                                remaining()));
  }
  if (n_tensors > (remaining() - n_kv * kMinKeyValueBytes) / kMinTensorInfoBytes) {
    return fail(8, fmt::format("tensor count {} cannot fit in the {} bytes that follow", n_tensors,
                               remaining()));
  }
  return Status::ok();
}

Status Parser::read_scalar(Value& v, ValueType type) {
  v.type_ = type;
  if (type == ValueType::kString) return read_string(v.string_, "string value");
  const size_t size = value_type_size(type);
  if (remaining() < size) {
    return fail(pos_, fmt::format("truncated: the {} value needs {} bytes, {} left",
                                  value_type_name(type), size, remaining()));
  }
  uint64_t bits = 0;
  std::memcpy(&bits, bytes_.data() + pos_, size);
  pos_ += size;
  v.bits_ = bits;
  if (type == ValueType::kF32) v.float_ = std::bit_cast<float>(static_cast<uint32_t>(bits));
  if (type == ValueType::kF64) v.float_ = std::bit_cast<double>(bits);
  return Status::ok();
}

Status Parser::read_array(Value& v) {
  const uint64_t type_at = pos_;
  uint32_t elem = 0;
  HEARTH_RETURN_IF_ERROR(read(elem, "array element type"));
  if (elem >= kValueTypeCount)
    return fail(type_at, fmt::format("unknown array element type id {}", elem));
  const auto elem_type = static_cast<ValueType>(elem);
  if (elem_type == ValueType::kArray) return fail(type_at, "nested arrays are not allowed");
  const uint64_t count_at = pos_;
  uint64_t count = 0;
  HEARTH_RETURN_IF_ERROR(read(count, "array count"));
  if (count > kMaxArrayCount)
    return fail(count_at, fmt::format("array count {} exceeds the limit of 2^30", count));
  v.type_ = ValueType::kArray;
  v.element_type_ = elem_type;
  v.count_ = count;
  if (elem_type == ValueType::kString) {
    // Each string takes at least its 8-byte length, which bounds the reservation below.
    if (count > remaining() / 8) {
      return fail(count_at, fmt::format("array of {} strings cannot fit in the {} bytes left",
                                        count, remaining()));
    }
    v.strings_.resize(count);
    for (uint64_t i = 0; i < count; ++i) {
      HEARTH_RETURN_IF_ERROR(read_string(v.strings_[i], "string element", static_cast<int64_t>(i)));
    }
    return Status::ok();
  }
  const uint64_t size = value_type_size(elem_type);
  if (count > remaining() / size) {
    return fail(count_at,
                fmt::format("array of {} {} values ({} bytes) runs past the end of the "
                            "file ({} bytes left)",
                            count, value_type_name(elem_type), count * size, remaining()));
  }
  v.raw_ = bytes_.data() + pos_;
  pos_ += count * size;
  return Status::ok();
}

Status Parser::read_key_value(KeyValue& kv) {
  const uint64_t at = pos_;
  HEARTH_RETURN_IF_ERROR(read_string(kv.key, "key"));
  if (kv.key.empty()) return fail(at, "empty key");
  record_name_ = kv.key;
  const uint64_t type_at = pos_;
  uint32_t type = 0;
  HEARTH_RETURN_IF_ERROR(read(type, "value type"));
  if (type >= kValueTypeCount) return fail(type_at, fmt::format("unknown value type id {}", type));
  if (static_cast<ValueType>(type) == ValueType::kArray) return read_array(kv.value);
  return read_scalar(kv.value, static_cast<ValueType>(type));
}

Status Parser::read_metadata() {
  section_ = Section::kMetadata;
  const auto reserve = static_cast<size_t>(std::min<uint64_t>(n_kv_, kMaxReserve));
  out_.kvs_.reserve(reserve);
  out_.kv_index_.reserve(reserve);
  for (int64_t i = 0; i < n_kv_; ++i) {
    index_ = i;
    record_name_ = {};
    const uint64_t at = pos_;
    KeyValue kv;
    HEARTH_RETURN_IF_ERROR(read_key_value(kv));
    const auto [it, inserted] = out_.kv_index_.emplace(kv.key, out_.kvs_.size());
    if (!inserted) {
      return fail(at,
                  fmt::format("duplicate key (metadata entry {} has the same key)", it->second));
    }
    if (kv.key == "general.alignment") alignment_at_ = at;
    out_.kvs_.push_back(std::move(kv));
  }
  return Status::ok();
}

Status Parser::read_alignment() {
  const auto it = out_.kv_index_.find("general.alignment");
  if (it == out_.kv_index_.end()) return Status::ok();
  const Value& v = out_.kvs_[it->second].value;
  section_ = Section::kMetadata;
  index_ = static_cast<int64_t>(it->second);
  record_name_ = "general.alignment";
  if (v.type() != ValueType::kU32) {
    return fail(alignment_at_,
                fmt::format("alignment is stored as {}, expected u32", value_type_name(v.type())));
  }
  const uint64_t a = v.as_uint().value_or(0);
  if (a == 0 || !std::has_single_bit(a))
    return fail(alignment_at_, fmt::format("alignment {} is not a power of two", a));
  out_.alignment_ = static_cast<uint32_t>(a);
  return Status::ok();
}

Status Parser::read_tensor_type(TensorInfo& t, TensorTypeTraits& traits) {
  const uint64_t at = pos_;
  uint32_t type = 0;
  HEARTH_RETURN_IF_ERROR(read(type, "tensor type"));
  const auto found = tensor_type_traits(type);
  if (is_removed_type_id(type))
    return fail(at, fmt::format("tensor type id {} was removed from ggml", type));
  if (type >= kTensorTypeIdLimit || !found)
    return fail(at, fmt::format("unknown tensor type id {}", type));
  traits = *found;
  t.type = traits.type;
  return Status::ok();
}

Status Parser::compute_tensor_size(TensorInfo& t, const TensorTypeTraits& traits, uint64_t at) {
  if (t.ne[0] % traits.block_size != 0) {
    return fail(at, fmt::format("row length {} is not a multiple of the {} block size {}", t.ne[0],
                                traits.name, traits.block_size));
  }
  // The product of the dimensions must fit in int64 with zero dimensions counted as 1:
  // a zero must not hide an overflow of the others, which consumers multiply in any order
  // (n_rows(), n_elements(), strides).
  uint64_t n = 1;
  bool empty = false;
  for (int64_t ne : t.ne) {
    const auto d = static_cast<uint64_t>(std::max<int64_t>(ne, 1));
    if (n > static_cast<uint64_t>(INT64_MAX) / d)
      return fail(at, fmt::format("element count of shape {} overflows", t.shape_string()));
    n *= d;
    empty = empty || ne == 0;
  }
  const uint64_t blocks = empty ? 0 : n / traits.block_size;
  if (blocks != 0 && traits.type_size > static_cast<uint64_t>(INT64_MAX) / blocks) {
    return fail(at, fmt::format("byte size of a {} tensor of shape {} overflows", traits.name,
                                t.shape_string()));
  }
  t.n_bytes = blocks * traits.type_size;
  return Status::ok();
}

Status Parser::read_tensor_info(TensorInfo& t) {
  const uint64_t at = pos_;
  HEARTH_RETURN_IF_ERROR(read_string(t.name, "tensor name"));
  record_name_ = t.name;
  if (t.name.size() > kMaxTensorNameLength) {
    return fail(at, fmt::format("name of {} bytes is longer than the limit of {}", t.name.size(),
                                kMaxTensorNameLength));
  }
  const uint64_t dims_at = pos_;
  HEARTH_RETURN_IF_ERROR(read(t.n_dims, "dimension count"));
  if (t.n_dims > kMaxDims) {
    return fail(dims_at,
                fmt::format("{} dimensions, more than the limit of {}", t.n_dims, kMaxDims));
  }
  for (uint32_t d = 0; d < t.n_dims; ++d) {
    const uint64_t ne_at = pos_;
    uint64_t ne = 0;
    HEARTH_RETURN_IF_ERROR(read(ne, "dimension"));
    if (ne > static_cast<uint64_t>(INT64_MAX))
      return fail(ne_at, fmt::format("dimension {} is negative ({})", d, static_cast<int64_t>(ne)));
    t.ne[d] = static_cast<int64_t>(ne);
  }
  TensorTypeTraits traits{};
  HEARTH_RETURN_IF_ERROR(read_tensor_type(t, traits));
  HEARTH_RETURN_IF_ERROR(read(t.offset, "data offset"));
  return compute_tensor_size(t, traits, at);
}

Status Parser::read_tensor_infos() {
  section_ = Section::kTensorInfo;
  index_ = 0;
  record_name_ = {};
  const auto n_tensors = static_cast<uint64_t>(n_tensors_);
  if (n_tensors > remaining() / kMinTensorInfoBytes) {
    return fail(pos_, fmt::format("tensor count {} cannot fit in the {} bytes left", n_tensors,
                                  remaining()));
  }
  // Bounded by the check above: at most one TensorInfo per 24 bytes of the file.
  out_.tensors_.resize(n_tensors);
  tensor_info_at_.resize(n_tensors);
  out_.tensor_index_.reserve(static_cast<size_t>(std::min(n_tensors, kMaxReserve)));
  for (size_t i = 0; i < out_.tensors_.size(); ++i) {
    index_ = static_cast<int64_t>(i);
    record_name_ = {};
    tensor_info_at_[i] = pos_;
    TensorInfo& t = out_.tensors_[i];
    HEARTH_RETURN_IF_ERROR(read_tensor_info(t));
    const auto [it, inserted] = out_.tensor_index_.emplace(t.name, i);
    if (!inserted) {
      return fail(
          tensor_info_at_[i],
          fmt::format("duplicate tensor name (tensor info {} has the same name)", it->second));
    }
  }
  return Status::ok();
}

Status Parser::place_tensor_data() {
  const uint64_t align = out_.alignment_;
  if (n_tensors_ == 0) {
    out_.data_offset_ = pos_;
    return Status::ok();
  }
  section_ = Section::kPadding;
  const uint64_t data_offset = align_up(pos_, align);
  if (data_offset > bytes_.size()) {
    return fail(pos_, fmt::format("the file ends at byte {}, before the tensor data, which "
                                  "starts at byte {}",
                                  bytes_.size(), data_offset));
  }
  out_.data_offset_ = data_offset;
  const uint64_t data_size = bytes_.size() - data_offset;
  section_ = Section::kTensorData;
  uint64_t expected = 0;  // the reference requires tensors packed in directory order
  for (size_t i = 0; i < out_.tensors_.size(); ++i) {
    TensorInfo& t = out_.tensors_[i];
    index_ = static_cast<int64_t>(i);
    record_name_ = t.name;
    const uint64_t at = tensor_info_at_[i];
    if (t.offset % align != 0)
      return fail(at, fmt::format("data offset {} is not a multiple of {}", t.offset, align));
    if (t.offset != expected) {
      return fail(at, fmt::format("data offset {} is not packed: the previous tensors end at {}",
                                  t.offset, expected));
    }
    if (t.offset > data_size || t.n_bytes > data_size - t.offset) {
      return fail(at, fmt::format("data [{}, +{}) runs past the end of the file's {} data bytes",
                                  t.offset, t.n_bytes, data_size));
    }
    t.data = bytes_.data() + data_offset + t.offset;
    expected = t.offset + align_up(t.n_bytes, align);
  }
  return Status::ok();
}

}  // namespace hearth::gguf
