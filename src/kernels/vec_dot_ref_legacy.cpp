// Scalar reference dot products of the float types and the 32-element block formats
// (quantization.md §4.3). Compiled with -ffp-contract=off: every block scale is applied in
// the spec's operand order with separate f32 roundings.
#include <cstring>
#include <vector>

#include "base/half.h"
#include "kernels/block_access.h"
#include "kernels/block_formats.h"
#include "kernels/vec_dot_ref.h"

namespace hearth::kernels::ref {
namespace {

// sum_j a[j] * b[j] over one 32-element block, exact in int.
int dot_block(const int8_t* a, const int8_t* b) {
  int sum = 0;
  for (int j = 0; j < kQK; ++j) sum += a[j] * b[j];
  return sum;
}

// The 32 nibble codes of a legacy block (element j in the low nibble of byte j, element
// j + 16 in its high nibble), each with `offset` added.
void unpack_nibbles(const uint8_t* qs, int offset, int8_t* out) {
  for (int j = 0; j < kQK / 2; ++j) {
    out[j] = static_cast<int8_t>((qs[j] & 0xF) + offset);
    out[j + kQK / 2] = static_cast<int8_t>((qs[j] >> 4) + offset);
  }
}

// As unpack_nibbles, with bit e of the little-endian qh word as the 5th bit of element e.
void unpack_nibbles_qh(const uint8_t* qs, const uint8_t* qh_bytes, int offset, int8_t* out) {
  const uint32_t qh = load_u32_le(qh_bytes);
  for (int j = 0; j < kQK / 2; ++j) {
    const int lo = (qs[j] & 0xF) | static_cast<int>(((qh >> j) & 1u) << 4);
    const int hi = (qs[j] >> 4) | static_cast<int>(((qh >> (j + kQK / 2)) & 1u) << 4);
    out[j] = static_cast<int8_t>(lo + offset);
    out[j + kQK / 2] = static_cast<int8_t>(hi + offset);
  }
}

// Products of two 16-bit float rows are exact in f32 (at most 11 + 11 significant bits);
// the reference's scalar path sums them in double.
template <typename Widen>
float dot_half_rows(const void* x, const void* y, int64_t n, Widen widen) {
  const auto* px = static_cast<const uint8_t*>(x);
  const auto* py = static_cast<const uint8_t*>(y);
  double sum = 0.0;
  for (int64_t i = 0; i < n; ++i) {
    uint16_t a = 0;
    uint16_t b = 0;
    std::memcpy(&a, px + 2 * i, 2);
    std::memcpy(&b, py + 2 * i, 2);
    sum += static_cast<double>(widen(a) * widen(b));
  }
  return static_cast<float>(sum);
}

}  // namespace

float vec_dot_f32(const void* x, const void* y, int64_t n) {
  const auto* px = static_cast<const uint8_t*>(x);
  const auto* py = static_cast<const uint8_t*>(y);
  double sum = 0.0;
  for (int64_t i = 0; i < n; ++i) {
    float a = 0.0f;
    float b = 0.0f;
    std::memcpy(&a, px + 4 * i, 4);
    std::memcpy(&b, py + 4 * i, 4);
    sum += static_cast<double>(a * b);
  }
  return static_cast<float>(sum);
}

float vec_dot_f16(const void* x, const void* y, int64_t n) {
  const float* table = f16_to_f32_table();
  return dot_half_rows(x, y, n, [table](uint16_t h) { return table[h]; });
}

float vec_dot_bf16(const void* x, const void* y, int64_t n) {
  return dot_half_rows(x, y, n, [](uint16_t h) { return bf16_to_f32(h); });
}

float vec_dot_q8_0(const void* x, const void* y, int64_t n) {
  float sumf = 0.0f;
  for (int64_t i = 0; i < n / kQK; ++i) {
    const auto bx = load_block<BlockQ8_0>(x, i);
    const auto by = load_block<BlockQ8_0>(y, i);
    const int isum = dot_block(bx.qs, by.qs);
    sumf += static_cast<float>(isum) * (f16_to_f32(bx.d) * f16_to_f32(by.d));
  }
  return sumf;
}

float vec_dot_q4_0(const void* x, const void* y, int64_t n) {
  float sumf = 0.0f;
  int8_t q[kQK];
  for (int64_t i = 0; i < n / kQK; ++i) {
    const auto bx = load_block<BlockQ4_0>(x, i);
    const auto by = load_block<BlockQ8_0>(y, i);
    unpack_nibbles(bx.qs, -8, q);
    const int isum = dot_block(q, by.qs);
    sumf += static_cast<float>(isum) * f16_to_f32(bx.d) * f16_to_f32(by.d);
  }
  return sumf;
}

float vec_dot_q4_1(const void* x, const void* y, int64_t n) {
  float sumf = 0.0f;
  int8_t q[kQK];
  for (int64_t i = 0; i < n / kQK; ++i) {
    const auto bx = load_block<BlockQ4_1>(x, i);
    const auto by = load_block<BlockQ8_1>(y, i);
    unpack_nibbles(bx.qs, 0, q);
    const int isum = dot_block(q, by.qs);
    // The min term uses the activation's precomputed d * sum(q8) instead of the quants.
    sumf += (f16_to_f32(bx.d) * f16_to_f32(by.d)) * static_cast<float>(isum) +
            f16_to_f32(bx.m) * f16_to_f32(by.s);
  }
  return sumf;
}

float vec_dot_q5_0(const void* x, const void* y, int64_t n) {
  float sumf = 0.0f;
  int8_t q[kQK];
  for (int64_t i = 0; i < n / kQK; ++i) {
    const auto bx = load_block<BlockQ5_0>(x, i);
    const auto by = load_block<BlockQ8_0>(y, i);
    unpack_nibbles_qh(bx.qs, bx.qh, -16, q);
    const int isum = dot_block(q, by.qs);
    sumf += (f16_to_f32(bx.d) * f16_to_f32(by.d)) * static_cast<float>(isum);
  }
  return sumf;
}

float vec_dot_q5_1(const void* x, const void* y, int64_t n) {
  float sumf = 0.0f;
  int8_t q[kQK];
  for (int64_t i = 0; i < n / kQK; ++i) {
    const auto bx = load_block<BlockQ5_1>(x, i);
    const auto by = load_block<BlockQ8_1>(y, i);
    unpack_nibbles_qh(bx.qs, bx.qh, 0, q);
    const int isum = dot_block(q, by.qs);
    sumf += (f16_to_f32(bx.d) * f16_to_f32(by.d)) * static_cast<float>(isum) +
            f16_to_f32(bx.m) * f16_to_f32(by.s);
  }
  return sumf;
}

namespace {

// A 4-bit code-book format against Q8_0: per block, the codes' values (`values`) times the
// activation bytes summed in integers, scaled by f16(dy) * the block's own scale.
template <class Block, float (*BlockScale)(const Block&)>
float vec_dot_code_book(const void* x, const void* y, int64_t n, const int8_t (&values)[16]) {
  float sumf = 0.0f;
  int8_t q[kQK];
  for (int64_t i = 0; i < n / kQK; ++i) {
    const auto bx = load_block<Block>(x, i);
    const auto by = load_block<BlockQ8_0>(y, i);
    for (int j = 0; j < kQK / 2; ++j) {
      q[j] = values[bx.qs[j] & 0xF];
      q[j + kQK / 2] = values[bx.qs[j] >> 4];
    }
    const int isum = dot_block(q, by.qs);
    sumf += (f16_to_f32(by.d) * BlockScale(bx)) * static_cast<float>(isum);
  }
  return sumf;
}

float iq4_nl_scale(const BlockIq4Nl& b) {
  return f16_to_f32(b.d);
}
float mxfp4_scale(const BlockMxfp4& b) {
  return e8m0_half(b.e);
}

}  // namespace

float vec_dot_iq4_nl(const void* x, const void* y, int64_t n) {
  return vec_dot_code_book<BlockIq4Nl, iq4_nl_scale>(x, y, n, kIq4nlValues);
}

// IQ4_NL's arithmetic with the E2M1 code book and the E8M0 scale (f16(dy) * e8m0_half(e)).
float vec_dot_mxfp4(const void* x, const void* y, int64_t n) {
  return vec_dot_code_book<BlockMxfp4, mxfp4_scale>(x, y, n, kFp4Values);
}

}  // namespace hearth::kernels::ref

namespace hearth::kernels {

// The F16 dot product widens every weight for every token, and the exact bit-level
// conversion of base/half.h costs more than the multiply-add.
const float* f16_to_f32_table() {
  static const std::vector<float> table = [] {
    std::vector<float> t(65536);
    for (uint32_t i = 0; i < t.size(); ++i) t[i] = f16_to_f32(static_cast<f16_bits>(i));
    return t;
  }();
  return table.data();
}

}  // namespace hearth::kernels
