// The tensor element types a GGUF file can name (ggml type ids, stable across releases),
// with the block geometry needed to size a tensor even when Hearth cannot execute it.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

namespace hearth {

enum class TensorType : uint32_t {
  kF32 = 0,
  kF16 = 1,
  kQ4_0 = 2,
  kQ4_1 = 3,
  kQ5_0 = 6,
  kQ5_1 = 7,
  kQ8_0 = 8,
  kQ8_1 = 9,
  kQ2_K = 10,
  kQ3_K = 11,
  kQ4_K = 12,
  kQ5_K = 13,
  kQ6_K = 14,
  kQ8_K = 15,
  kIQ2_XXS = 16,
  kIQ2_XS = 17,
  kIQ3_XXS = 18,
  kIQ1_S = 19,
  kIQ4_NL = 20,
  kIQ3_S = 21,
  kIQ2_S = 22,
  kIQ4_XS = 23,
  kI8 = 24,
  kI16 = 25,
  kI32 = 26,
  kI64 = 27,
  kF64 = 28,
  kIQ1_M = 29,
  kBF16 = 30,
  kTQ1_0 = 34,
  kTQ2_0 = 35,
  kMXFP4 = 39,
  kNVFP4 = 40,
  kQ1_0 = 41,
  kQ2_0 = 42,
};

// One past the highest type id the reference knows (GGML_TYPE_COUNT in b10573).
inline constexpr uint32_t kTensorTypeIdLimit = 43;

struct TensorTypeTraits {
  TensorType type;
  std::string_view name;  // lower case, as the reference prints it ("q4_0", "f16")
  uint32_t block_size;    // elements per block
  uint32_t type_size;     // bytes per block
};

// Traits of a type id, or nullopt for ids that are not (or no longer) valid.
std::optional<TensorTypeTraits> tensor_type_traits(uint32_t type_id);
// Traits of a valid type; the type must be one of the enumerators.
const TensorTypeTraits& traits_of(TensorType type);
std::string_view tensor_type_name(TensorType type);
// Parses a name such as "q4_0" or "Q4_0" (case-insensitive).
std::optional<TensorType> tensor_type_from_name(std::string_view name);

// Bytes of one row of `n` elements; the caller guarantees n % block_size == 0.
inline uint64_t row_bytes(const TensorTypeTraits& t, uint64_t n) {
  return n / t.block_size * t.type_size;
}

}  // namespace hearth
