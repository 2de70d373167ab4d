#include "base/tensor_type.h"

#include <array>
#include <cctype>

namespace hearth {
namespace {

constexpr std::array<TensorTypeTraits, 35> kTraits = {{
    {TensorType::kF32, "f32", 1, 4},
    {TensorType::kF16, "f16", 1, 2},
    {TensorType::kQ4_0, "q4_0", 32, 18},
    {TensorType::kQ4_1, "q4_1", 32, 20},
    {TensorType::kQ5_0, "q5_0", 32, 22},
    {TensorType::kQ5_1, "q5_1", 32, 24},
    {TensorType::kQ8_0, "q8_0", 32, 34},
    {TensorType::kQ8_1, "q8_1", 32, 36},
    {TensorType::kQ2_K, "q2_K", 256, 84},
    {TensorType::kQ3_K, "q3_K", 256, 110},
    {TensorType::kQ4_K, "q4_K", 256, 144},
    {TensorType::kQ5_K, "q5_K", 256, 176},
    {TensorType::kQ6_K, "q6_K", 256, 210},
    {TensorType::kQ8_K, "q8_K", 256, 292},
    {TensorType::kIQ2_XXS, "iq2_xxs", 256, 66},
    {TensorType::kIQ2_XS, "iq2_xs", 256, 74},
    {TensorType::kIQ3_XXS, "iq3_xxs", 256, 98},
    {TensorType::kIQ1_S, "iq1_s", 256, 50},
    {TensorType::kIQ4_NL, "iq4_nl", 32, 18},
    {TensorType::kIQ3_S, "iq3_s", 256, 110},
    {TensorType::kIQ2_S, "iq2_s", 256, 82},
    {TensorType::kIQ4_XS, "iq4_xs", 256, 136},
    {TensorType::kI8, "i8", 1, 1},
    {TensorType::kI16, "i16", 1, 2},
    {TensorType::kI32, "i32", 1, 4},
    {TensorType::kI64, "i64", 1, 8},
    {TensorType::kF64, "f64", 1, 8},
    {TensorType::kIQ1_M, "iq1_m", 256, 56},
    {TensorType::kBF16, "bf16", 1, 2},
    {TensorType::kTQ1_0, "tq1_0", 256, 54},
    {TensorType::kTQ2_0, "tq2_0", 256, 66},
    {TensorType::kMXFP4, "mxfp4", 32, 17},
    {TensorType::kNVFP4, "nvfp4", 64, 36},
    {TensorType::kQ1_0, "q1_0", 128, 18},
    {TensorType::kQ2_0, "q2_0", 64, 18},
}};

bool equal_ignore_case(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    if (std::tolower(static_cast<unsigned char>(a[i])) !=
        std::tolower(static_cast<unsigned char>(b[i])))
      return false;
  }
  return true;
}

}  // namespace

std::optional<TensorTypeTraits> tensor_type_traits(uint32_t type_id) {
  for (const auto& t : kTraits) {
    if (static_cast<uint32_t>(t.type) == type_id) return t;
  }
  return std::nullopt;
}

const TensorTypeTraits& traits_of(TensorType type) {
  for (const auto& t : kTraits) {
    if (t.type == type) return t;
  }
  return kTraits[0];  // unreachable for valid enumerators
}

std::string_view tensor_type_name(TensorType type) {
  return traits_of(type).name;
}

std::optional<TensorType> tensor_type_from_name(std::string_view name) {
  for (const auto& t : kTraits) {
    if (equal_ignore_case(t.name, name)) return t.type;
  }
  return std::nullopt;
}

}  // namespace hearth
