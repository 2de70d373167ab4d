// Byte layouts of the quantized block formats (quantization.md §3), as packed structs whose
// sizes and field offsets match the GGUF bytes exactly. Tensor data is only 2-byte aligned
// in general (and arbitrary in caller buffers), so kernels copy a block into one of these
// structs (std::memcpy) rather than casting a data pointer.
#pragma once

#include <cstddef>
#include <cstdint>

#include "base/half.h"

namespace hearth::kernels {

// Elements per block of the 32-element ("legacy") formats and of the K-quant super-blocks.
inline constexpr int kQK = 32;
inline constexpr int kQKK = 256;
// Bytes of the packed 6-bit scales/mins of Q4_K and Q5_K, and of Q3_K's scales.
inline constexpr int kKScaleBytes = 12;

// Non-linear 4-bit code book of IQ4_NL and IQ4_XS (quantization.md §3.8).
inline constexpr int8_t kIq4nlValues[16] = {-127, -104, -83, -65, -49, -35, -22, -10,
                                            1,    13,   25,  38,  53,  69,  89,  113};

// MXFP4's E2M1 code values, doubled to integers (quantization.md §3; the block scale is
// halved to match, e8m0_half).
inline constexpr int8_t kFp4Values[16] = {0, 1, 2, 3, 4, 6, 8, 12, 0, -1, -2, -3, -4, -6, -8, -12};

// Half of an E8M0 scale, 2^(e - 128), as an f32 (subnormal for e < 2, as the reference
// builds it bit by bit; NaN (e = 255) is not special).
inline float e8m0_half(uint8_t e) {
  const uint32_t bits = e < 2 ? (0x00200000u << e) : (static_cast<uint32_t>(e) - 1u) << 23;
  float f;
  __builtin_memcpy(&f, &bits, sizeof(f));
  return f;
}

struct BlockQ8_0 {
  f16_bits d;
  int8_t qs[kQK];
};

struct BlockQ8_1 {
  f16_bits d;
  f16_bits s;  // d * sum(qs)
  int8_t qs[kQK];
};

struct BlockQ4_0 {
  f16_bits d;
  uint8_t qs[kQK / 2];  // byte j: element j (low nibble), element j + 16 (high nibble)
};

struct BlockQ4_1 {
  f16_bits d;
  f16_bits m;
  uint8_t qs[kQK / 2];
};

struct BlockQ5_0 {
  f16_bits d;
  uint8_t qh[4];  // little-endian u32, bit e = 5th bit of element e
  uint8_t qs[kQK / 2];
};

struct BlockQ5_1 {
  f16_bits d;
  f16_bits m;
  uint8_t qh[4];
  uint8_t qs[kQK / 2];
};

struct BlockIq4Nl {
  f16_bits d;
  uint8_t qs[kQK / 2];
};

// MXFP4 (OCP microscaling): one E8M0 exponent, then Q4_0's nibble order of E2M1 codes.
struct BlockMxfp4 {
  uint8_t e;
  uint8_t qs[kQK / 2];
};

struct BlockQ2K {
  uint8_t scales[kQKK / 16];  // per 16 elements: low nibble scale, high nibble min
  uint8_t qs[kQKK / 4];
  f16_bits d;
  f16_bits dmin;
};

struct BlockQ3K {
  uint8_t hmask[kQKK / 8];
  uint8_t qs[kQKK / 4];
  uint8_t scales[kKScaleBytes];  // sixteen 6-bit scales, biased by 32
  f16_bits d;
};

struct BlockQ4K {
  f16_bits d;
  f16_bits dmin;
  uint8_t scales[kKScaleBytes];  // eight 6-bit scales and eight 6-bit mins
  uint8_t qs[kQKK / 2];
};

struct BlockQ5K {
  f16_bits d;
  f16_bits dmin;
  uint8_t scales[kKScaleBytes];
  uint8_t qh[kQKK / 8];
  uint8_t qs[kQKK / 2];
};

struct BlockQ6K {
  uint8_t ql[kQKK / 2];
  uint8_t qh[kQKK / 4];
  int8_t scales[kQKK / 16];
  f16_bits d;
};

struct BlockQ8K {
  float d;
  int8_t qs[kQKK];
  int16_t bsums[kQKK / 16];
};

struct BlockIq4Xs {
  f16_bits d;
  uint16_t scales_h;  // 2 high bits of each sub-block scale
  uint8_t scales_l[kQKK / 64];
  uint8_t qs[kQKK / 2];
};

// The layouts are fixed by the file format; any padding would be a bug.
static_assert(sizeof(BlockQ8_0) == 34 && sizeof(BlockQ8_1) == 36);
static_assert(sizeof(BlockQ4_0) == 18 && sizeof(BlockQ4_1) == 20);
static_assert(sizeof(BlockQ5_0) == 22 && sizeof(BlockQ5_1) == 24);
static_assert(sizeof(BlockIq4Nl) == 18 && sizeof(BlockIq4Xs) == 136);
static_assert(sizeof(BlockMxfp4) == 17);
static_assert(sizeof(BlockQ2K) == 84 && sizeof(BlockQ3K) == 110);
static_assert(sizeof(BlockQ4K) == 144 && sizeof(BlockQ5K) == 176);
static_assert(sizeof(BlockQ6K) == 210 && sizeof(BlockQ8K) == 292);
static_assert(offsetof(BlockQ5_0, qs) == 6 && offsetof(BlockQ5_1, qs) == 8);
static_assert(offsetof(BlockQ2K, d) == 80 && offsetof(BlockQ3K, d) == 108);
static_assert(offsetof(BlockQ4K, qs) == 16 && offsetof(BlockQ5K, qs) == 48);
static_assert(offsetof(BlockQ6K, scales) == 192 && offsetof(BlockQ6K, d) == 208);
static_assert(offsetof(BlockQ8K, bsums) == 260 && offsetof(BlockIq4Xs, qs) == 8);

}  // namespace hearth::kernels
