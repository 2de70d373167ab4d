// Reading and writing the packed blocks of block_formats.h inside tensor data, which is
// only 2-byte aligned in general, and unpacking the small fields that several kernels
// share (the 32-bit qh word, the packed 6-bit scales). Internal to hearth_kernels.
#pragma once

#include <cstdint>
#include <cstring>

namespace hearth::kernels {

// Every f16 value widened to f32 (65536 entries, built on first use): a scale or element
// costs one load instead of a bit-level conversion (vec_dot_ref_legacy.cpp).
const float* f16_to_f32_table();

// Copies block i out of possibly unaligned data.
template <typename Block>
Block load_block(const void* src, int64_t i) {
  Block b;
  std::memcpy(&b, static_cast<const uint8_t*>(src) + i * static_cast<int64_t>(sizeof(Block)),
              sizeof(Block));
  return b;
}

// Copies a block into slot i of possibly unaligned data.
template <typename Block>
void store_block(void* dst, int64_t i, const Block& b) {
  std::memcpy(static_cast<uint8_t*>(dst) + i * static_cast<int64_t>(sizeof(Block)), &b,
              sizeof(Block));
}

inline uint32_t load_u32_le(const uint8_t* p) {
  return static_cast<uint32_t>(p[0]) | (static_cast<uint32_t>(p[1]) << 8) |
         (static_cast<uint32_t>(p[2]) << 16) | (static_cast<uint32_t>(p[3]) << 24);
}

// The 6-bit scale and min of sub-block k (0..7) of a Q4_K/Q5_K block.
inline void unpack_k4_scale_min(const uint8_t* q, int k, int& sc, int& mn) {
  if (k < 4) {
    sc = q[k] & 63;
    mn = q[k + 4] & 63;
  } else {
    sc = (q[k + 4] & 0xF) | ((q[k - 4] >> 6) << 4);
    mn = (q[k + 4] >> 4) | ((q[k] >> 6) << 4);
  }
}

// The signed scale (-32..31) of sub-block s (0..15) of a Q3_K block.
inline int unpack_q3k_scale(const uint8_t* scales, int s) {
  const int low4 = s < 8 ? (scales[s] & 0xF) : (scales[s - 8] >> 4);
  const int high2 = (scales[8 + (s % 4)] >> (2 * (s / 4))) & 3;
  return (low4 | (high2 << 4)) - 32;
}

// The 6-bit biased scale (0..63, the value is ls - 32) of sub-block b (0..7) of IQ4_XS.
inline int unpack_iq4xs_scale(const uint8_t* scales_l, uint16_t scales_h, int b) {
  return ((scales_l[b / 2] >> (4 * (b % 2))) & 0xF) | (((scales_h >> (2 * b)) & 3) << 4);
}

}  // namespace hearth::kernels
