// IEEE binary16 and bfloat16 conversions, bit-exact with the reference engine
// (round to nearest even; bf16 keeps NaNs quiet).
#pragma once

#include <bit>
#include <cstdint>

namespace hearth {

using f16_bits = uint16_t;
using bf16_bits = uint16_t;

inline float f16_to_f32(f16_bits h) {
  const uint32_t sign = static_cast<uint32_t>(h & 0x8000u) << 16;
  uint32_t exp = (h >> 10) & 0x1Fu;
  uint32_t mant = h & 0x3FFu;
  uint32_t bits;
  if (exp == 0x1F) {
    bits = sign | 0x7F800000u | (mant << 13);  // inf or nan
  } else if (exp != 0) {
    bits = sign | ((exp + 112u) << 23) | (mant << 13);
  } else if (mant == 0) {
    bits = sign;
  } else {
    // Subnormal: normalize the mantissa.
    exp = 113;
    while ((mant & 0x400u) == 0) {
      mant <<= 1;
      --exp;
    }
    bits = sign | (exp << 23) | ((mant & 0x3FFu) << 13);
  }
  return std::bit_cast<float>(bits);
}

inline f16_bits f32_to_f16(float f) {
  const uint32_t x = std::bit_cast<uint32_t>(f);
  const uint32_t sign = (x >> 16) & 0x8000u;
  const uint32_t abs = x & 0x7FFFFFFFu;
  // NaN: the canonical quiet NaN, payload dropped (quantization.md §3.0).
  if (abs > 0x7F800000u) return static_cast<f16_bits>(sign | 0x7E00u);
  if (abs >= 0x477FF000u) return static_cast<f16_bits>(sign | 0x7C00u);  // overflow to inf
  if (abs < 0x38800000u) {
    // Result is subnormal or zero: shift the implicit-one mantissa into place with rounding.
    if (abs < 0x33000000u) return static_cast<f16_bits>(sign);  // below half the smallest subnormal
    const uint32_t e = abs >> 23;
    const uint32_t m = (abs & 0x7FFFFFu) | 0x800000u;
    const uint32_t shift = 126u - e;  // 14..24
    uint32_t half = m >> shift;
    const uint32_t rem = m & ((1u << shift) - 1u);
    const uint32_t halfway = 1u << (shift - 1u);
    if (rem > halfway || (rem == halfway && (half & 1u))) ++half;
    return static_cast<f16_bits>(sign | half);
  }
  uint32_t r = abs - 0x38000000u;  // rebias exponent from 127 to 15
  const uint32_t rem = r & 0x1FFFu;
  r >>= 13;
  if (rem > 0x1000u || (rem == 0x1000u && (r & 1u))) ++r;
  return static_cast<f16_bits>(sign | r);
}

inline float bf16_to_f32(bf16_bits h) {
  return std::bit_cast<float>(static_cast<uint32_t>(h) << 16);
}

inline bf16_bits f32_to_bf16(float f) {
  uint32_t x = std::bit_cast<uint32_t>(f);
  if ((x & 0x7FFFFFFFu) > 0x7F800000u) return static_cast<bf16_bits>((x >> 16) | 64u);  // quiet nan
  x += 0x7FFFu + ((x >> 16) & 1u);
  return static_cast<bf16_bits>(x >> 16);
}

}  // namespace hearth
