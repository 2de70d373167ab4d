// Weight rows and activations on which every float operation of a dot product is exact,
// so that any implementation (reference or SIMD, any summation order) must give the same
// bits: small integer values under scales of exactly 1.
#pragma once

#include <cstdint>
#include <vector>

#include "base/tensor_type.h"
#include "kernels/quant.h"
#include "test_util.h"

namespace hearth::kernels::test {

// Offsets of the f16 scale fields of a block and the values to give them on integer data.
struct ScaleField {
  int offset;
  uint16_t value;
};

inline std::vector<ScaleField> integer_scale_fields(TensorType type) {
  constexpr uint16_t kOne = 0x3C00, kMinus8 = 0xC800, kMinus16 = 0xCC00;
  switch (type) {
    case TensorType::kQ4_1:
      return {{0, kOne}, {2, kMinus8}};
    case TensorType::kQ5_1:
      return {{0, kOne}, {2, kMinus16}};
    case TensorType::kQ2_K:
      return {{80, kOne}, {82, kOne}};
    case TensorType::kQ3_K:
      return {{108, kOne}};
    case TensorType::kQ4_K:
    case TensorType::kQ5_K:
      return {{0, kOne}, {2, kOne}};
    case TensorType::kQ6_K:
      return {{208, kOne}};
    default:  // Q8_0, Q4_0, Q5_0, IQ4_NL, IQ4_XS: d at offset 0
      return {{0, kOne}};
  }
}

// A weight row with integer values: float types hold small integers, block types hold
// random codes and scales under super-scales of exactly 1 (and integer mins).
inline std::vector<uint8_t> integer_weights(TensorType type, int64_t n, uint32_t seed) {
  if (type == TensorType::kF32 || type == TensorType::kF16 || type == TensorType::kBF16) {
    std::vector<float> v(static_cast<size_t>(n));
    const auto r = random_bytes(v.size(), seed);
    for (size_t i = 0; i < v.size(); ++i) v[i] = static_cast<float>(r[i] % 41) - 20.0f;
    std::vector<uint8_t> out(row_bytes(traits_of(type), v.size()));
    quantize_row(type, v.data(), out.data(), static_cast<int64_t>(v.size()));
    return out;
  }
  const auto& t = traits_of(type);
  std::vector<uint8_t> bytes = random_bytes(row_bytes(t, static_cast<uint64_t>(n)), seed);
  if (type == TensorType::kMXFP4) {  // E8M0 128: a half-scale of 1 on the doubled codes
    for (size_t b = 0; b < bytes.size() / t.type_size; ++b) bytes[b * t.type_size] = 128;
    return bytes;
  }
  for (size_t b = 0; b < bytes.size() / t.type_size; ++b) {
    for (const ScaleField& f : integer_scale_fields(type)) {
      bytes[b * t.type_size + static_cast<size_t>(f.offset)] = static_cast<uint8_t>(f.value);
      bytes[b * t.type_size + static_cast<size_t>(f.offset) + 1] =
          static_cast<uint8_t>(f.value >> 8);
    }
  }
  return bytes;
}

// Activations in [-3, 3] with 127 opening every 32 values: every Q8_0/Q8_1 block gets
// d = 1 and every Q8_K block d = -1, so the conversion is exact, and all partial sums stay
// below 2^24, where f32 holds integers exactly.
inline std::vector<float> integer_activations(int64_t n, uint32_t seed) {
  std::vector<float> x(static_cast<size_t>(n));
  const auto r = random_bytes(x.size(), seed);
  for (size_t i = 0; i < x.size(); ++i) {
    x[i] = i % 32 == 0 ? 127.0f : static_cast<float>(r[i] % 7) - 3.0f;
  }
  return x;
}

}  // namespace hearth::kernels::test
