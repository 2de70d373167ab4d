#include "engine/tensor_check.h"

#include <fmt/format.h>

#include <cmath>
#include <cstddef>
#include <cstring>
#include <vector>

#include "base/half.h"
#include "base/thread_pool.h"
#include "kernels/block_formats.h"

namespace hearth::engine {
namespace {

using kernels::BlockQ2K;
using kernels::BlockQ3K;
using kernels::BlockQ4K;
using kernels::BlockQ5K;
using kernels::BlockQ6K;
using kernels::BlockQ8K;

enum class Field { kF16, kF32, kE8M0, kIq1mScale };

// One scale of a quantized block: where it sits in the block and how it is stored.
struct ScaleField {
  const char* name;
  size_t offset;
  Field kind = Field::kF16;
};

// The scales ggml_validate_row_data checks, per format; empty for formats with none to check
// (integer tensors, NVFP4 whose every scale byte is valid).
std::vector<ScaleField> scale_fields(TensorType type, size_t type_size) {
  switch (type) {
    case TensorType::kQ4_0:
    case TensorType::kQ5_0:
    case TensorType::kQ8_0:
    case TensorType::kQ8_1:  // its `s` is derived and not checked, as in the reference
    case TensorType::kQ1_0:
    case TensorType::kQ2_0:
    case TensorType::kIQ4_NL:
    case TensorType::kIQ4_XS:
    case TensorType::kIQ1_S:
    case TensorType::kIQ2_XXS:
    case TensorType::kIQ2_XS:
    case TensorType::kIQ2_S:
    case TensorType::kIQ3_XXS:
    case TensorType::kIQ3_S:
      return {{"d", 0}};
    case TensorType::kQ4_1:
    case TensorType::kQ5_1:
      return {{"d", 0}, {"m", 2}};
    case TensorType::kQ2_K:
      return {{"d", offsetof(BlockQ2K, d)}, {"dmin", offsetof(BlockQ2K, dmin)}};
    case TensorType::kQ3_K:
      return {{"d", offsetof(BlockQ3K, d)}};
    case TensorType::kQ4_K:
      return {{"d", offsetof(BlockQ4K, d)}, {"dmin", offsetof(BlockQ4K, dmin)}};
    case TensorType::kQ5_K:
      return {{"d", offsetof(BlockQ5K, d)}, {"dmin", offsetof(BlockQ5K, dmin)}};
    case TensorType::kQ6_K:
      return {{"d", offsetof(BlockQ6K, d)}};
    case TensorType::kQ8_K:
      return {{"d", offsetof(BlockQ8K, d), Field::kF32}};
    case TensorType::kTQ1_0:
    case TensorType::kTQ2_0:
      return {{"d", type_size - sizeof(f16_bits)}};  // the ternary formats keep d last
    case TensorType::kMXFP4:
      return {{"e", 0, Field::kE8M0}};
    case TensorType::kIQ1_M:
      // The f16 scale is spread over the top nibbles of the block's last four u16 words.
      return {{"scale", type_size - 4 * sizeof(uint16_t), Field::kIq1mScale}};
    default:
      return {};
  }
}

template <class T>
T load(const uint8_t* p) {
  T v;
  std::memcpy(&v, p, sizeof(T));
  return v;
}

// "NaN", "infinite" or nullptr for a finite value.
const char* float_problem(double v) {
  if (std::isnan(v)) return "NaN";
  if (std::isinf(v)) return "infinite";
  return nullptr;
}

const char* scale_problem(const uint8_t* field, Field kind) {
  switch (kind) {
    case Field::kF16:
      return float_problem(f16_to_f32(load<f16_bits>(field)));
    case Field::kF32:
      return float_problem(load<float>(field));
    case Field::kE8M0:
      return *field == 0xff ? "invalid (0xff)" : nullptr;
    case Field::kIq1mScale: {
      uint16_t sc[4];
      std::memcpy(sc, field, sizeof(sc));
      const auto packed = static_cast<f16_bits>((sc[0] >> 12) | ((sc[1] >> 8) & 0x00f0) |
                                                ((sc[2] >> 4) & 0x0f00) | (sc[3] & 0xf000));
      return float_problem(f16_to_f32(packed));
    }
  }
  return nullptr;
}

// The element values of a float tensor; row and column of the first bad one.
std::optional<std::string> check_values(const gguf::TensorInfo& t) {
  const int64_t n = t.n_elements();
  const int64_t row_len = t.ne[0] > 0 ? t.ne[0] : 1;
  for (int64_t i = 0; i < n; ++i) {
    const uint8_t* p = t.data;
    double v = 0;
    switch (t.type) {
      case TensorType::kF32:
        v = load<float>(p + i * 4);
        break;
      case TensorType::kF16:
        v = f16_to_f32(load<f16_bits>(p + i * 2));
        break;
      case TensorType::kBF16:
        v = bf16_to_f32(load<bf16_bits>(p + i * 2));
        break;
      default:
        v = load<double>(p + i * 8);
        break;
    }
    if (const char* problem = float_problem(v))
      return fmt::format("{} at row {}, column {}", problem, i / row_len, i % row_len);
  }
  return std::nullopt;
}

}  // namespace

std::optional<std::string> find_invalid_data(const gguf::TensorInfo& t) {
  switch (t.type) {
    case TensorType::kF32:
    case TensorType::kF16:
    case TensorType::kBF16:
    case TensorType::kF64:
      return check_values(t);
    default:
      break;
  }
  const TensorTypeTraits& traits = traits_of(t.type);
  const std::vector<ScaleField> fields = scale_fields(t.type, traits.type_size);
  if (fields.empty()) return std::nullopt;
  const uint64_t n_blocks = t.n_bytes / traits.type_size;
  const uint64_t blocks_per_row = std::max<uint64_t>(1, t.ne[0] / traits.block_size);
  for (uint64_t b = 0; b < n_blocks; ++b) {
    const uint8_t* block = t.data + b * traits.type_size;
    for (const ScaleField& f : fields) {
      if (const char* problem = scale_problem(block + f.offset, f.kind))
        return fmt::format("{} block scale {} in row {}, block {}", problem, f.name,
                           b / blocks_per_row, b % blocks_per_row);
    }
  }
  return std::nullopt;
}

Status check_tensor_data(const gguf::Archive& archive, int n_threads) {
  const std::vector<const gguf::TensorInfo*>& tensors = archive.tensors();
  std::vector<std::optional<std::string>> problems(tensors.size());
  ThreadPool pool(n_threads > 0 ? n_threads : ThreadPool::hardware_threads());
  pool.parallel_for(static_cast<int64_t>(tensors.size()), [&](int64_t begin, int64_t end, int) {
    for (int64_t i = begin; i < end; ++i)
      problems[static_cast<size_t>(i)] = find_invalid_data(*tensors[static_cast<size_t>(i)]);
  });
  const gguf::TensorInfo* first = nullptr;
  std::string what;
  size_t n_bad = 0;
  for (size_t i = 0; i < tensors.size(); ++i) {
    if (!problems[i]) continue;
    if (n_bad++ == 0) {
      first = tensors[i];
      what = *problems[i];
    }
  }
  if (first == nullptr) return Status::ok();
  const std::string others =
      n_bad > 1 ? fmt::format(" (and {} more tensors with invalid data)", n_bad - 1) : "";
  return error(ErrorCode::kCorruptFile,
               fmt::format("{}: tensor '{}' has invalid data: {}{}", archive.primary().name(),
                           first->name, what, others));
}

}  // namespace hearth::engine
