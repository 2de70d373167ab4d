// Scalar reference quantizers with a closed-form scale (quantization.md §3.9). For finite
// input their bytes equal llama.cpp's quantize_row_*_ref; float casts that the reference
// leaves undefined (non-finite input) are clamped here instead.
#include <algorithm>
#include <cfloat>
#include <cmath>
#include <cstring>

#include "base/half.h"
#include "kernels/block_access.h"
#include "kernels/block_formats.h"
#include "kernels/quant_ref.h"
#include "kernels/scale_fit.h"

namespace hearth::kernels::ref {
namespace {

// Truncation toward zero, as a C cast to an integer type does; NaN and values outside
// [lo, hi] (undefined for the cast) are clamped.
int trunc_clamped(float v, int lo, int hi) {
  if (!(v > static_cast<float>(lo))) return lo;
  if (!(v < static_cast<float>(hi))) return hi;
  return static_cast<int>(v);
}

void min_max(const float* x, int n, float& min, float& max) {
  min = FLT_MAX;
  max = -FLT_MAX;
  for (int j = 0; j < n; ++j) {
    if (x[j] < min) min = x[j];
    if (x[j] > max) max = x[j];
  }
}

void store_u32_le(uint8_t* p, uint32_t v) {
  for (int k = 0; k < 4; ++k) p[k] = static_cast<uint8_t>(v >> (8 * k));
}

}  // namespace

void quantize_row_f32(const float* src, void* dst, int64_t n) {
  std::memcpy(dst, src, static_cast<size_t>(n) * sizeof(float));
}

void quantize_row_f16(const float* src, void* dst, int64_t n) {
  auto* p = static_cast<uint8_t*>(dst);
  for (int64_t i = 0; i < n; ++i) {
    const f16_bits h = f32_to_f16(src[i]);
    std::memcpy(p + 2 * i, &h, 2);
  }
}

void quantize_row_bf16(const float* src, void* dst, int64_t n) {
  auto* p = static_cast<uint8_t*>(dst);
  for (int64_t i = 0; i < n; ++i) {
    const bf16_bits h = f32_to_bf16(src[i]);
    std::memcpy(p + 2 * i, &h, 2);
  }
}

void quantize_row_q8_0(const float* src, void* dst, int64_t n) {
  for (int64_t i = 0; i < n / kQK; ++i, src += kQK) {
    float amax = 0.0f;
    for (int j = 0; j < kQK; ++j) amax = std::fmax(amax, std::fabs(src[j]));
    const float d = amax / 127.0f;
    const float id = d != 0.0f ? 1.0f / d : 0.0f;
    BlockQ8_0 b;
    b.d = f32_to_f16(d);
    for (int j = 0; j < kQK; ++j) {
      b.qs[j] = static_cast<int8_t>(trunc_clamped(std::round(src[j] * id), -128, 127));
    }
    store_block(dst, i, b);
  }
}

void quantize_row_q4_0(const float* src, void* dst, int64_t n) {
  for (int64_t i = 0; i < n / kQK; ++i, src += kQK) {
    const float d = signed_absmax(src, kQK) / -8.0f;
    const float id = d != 0.0f ? 1.0f / d : 0.0f;
    BlockQ4_0 b;
    b.d = f32_to_f16(d);
    for (int j = 0; j < kQK / 2; ++j) {
      const int lo = std::min(15, trunc_clamped(src[j] * id + 8.5f, -128, 127));
      const int hi = std::min(15, trunc_clamped(src[j + kQK / 2] * id + 8.5f, -128, 127));
      b.qs[j] = static_cast<uint8_t>((lo & 0xF) | (hi << 4));
    }
    store_block(dst, i, b);
  }
}

void quantize_row_q4_1(const float* src, void* dst, int64_t n) {
  for (int64_t i = 0; i < n / kQK; ++i, src += kQK) {
    float min = 0.0f;
    float max = 0.0f;
    min_max(src, kQK, min, max);
    const float d = (max - min) / 15.0f;
    const float id = d != 0.0f ? 1.0f / d : 0.0f;
    BlockQ4_1 b;
    b.d = f32_to_f16(d);
    b.m = f32_to_f16(min);
    for (int j = 0; j < kQK / 2; ++j) {
      const int lo = std::min(15, trunc_clamped((src[j] - min) * id + 0.5f, -128, 127));
      const int hi = std::min(15, trunc_clamped((src[j + kQK / 2] - min) * id + 0.5f, -128, 127));
      b.qs[j] = static_cast<uint8_t>((lo & 0xF) | (hi << 4));
    }
    store_block(dst, i, b);
  }
}

void quantize_row_q5_0(const float* src, void* dst, int64_t n) {
  for (int64_t i = 0; i < n / kQK; ++i, src += kQK) {
    const float d = signed_absmax(src, kQK) / -16.0f;
    const float id = d != 0.0f ? 1.0f / d : 0.0f;
    BlockQ5_0 b;
    b.d = f32_to_f16(d);
    uint32_t qh = 0;
    for (int j = 0; j < kQK / 2; ++j) {
      const int lo = std::min(31, trunc_clamped(src[j] * id + 16.5f, -128, 127));
      const int hi = std::min(31, trunc_clamped(src[j + kQK / 2] * id + 16.5f, -128, 127));
      b.qs[j] = static_cast<uint8_t>((lo & 0xF) | ((hi & 0xF) << 4));
      qh |= static_cast<uint32_t>((lo >> 4) & 1) << j;
      qh |= static_cast<uint32_t>((hi >> 4) & 1) << (j + kQK / 2);
    }
    store_u32_le(b.qh, qh);
    store_block(dst, i, b);
  }
}

void quantize_row_q5_1(const float* src, void* dst, int64_t n) {
  for (int64_t i = 0; i < n / kQK; ++i, src += kQK) {
    float min = 0.0f;
    float max = 0.0f;
    min_max(src, kQK, min, max);
    const float d = (max - min) / 31.0f;
    const float id = d != 0.0f ? 1.0f / d : 0.0f;
    BlockQ5_1 b;
    b.d = f32_to_f16(d);
    b.m = f32_to_f16(min);
    uint32_t qh = 0;
    for (int j = 0; j < kQK / 2; ++j) {
      // The reference casts to uint8 without a clamp; in range for finite input.
      const int lo = trunc_clamped((src[j] - min) * id + 0.5f, 0, 31);
      const int hi = trunc_clamped((src[j + kQK / 2] - min) * id + 0.5f, 0, 31);
      b.qs[j] = static_cast<uint8_t>((lo & 0xF) | ((hi & 0xF) << 4));
      qh |= static_cast<uint32_t>((lo >> 4) & 1) << j;
      qh |= static_cast<uint32_t>((hi >> 4) & 1) << (j + kQK / 2);
    }
    store_u32_le(b.qh, qh);
    store_block(dst, i, b);
  }
}

namespace {

// The code whose value times d is nearest to x, the first on ties (the reference's search).
int nearest_fp4(float x, float d) {
  int best = 0;
  float best_err = std::fabs(static_cast<float>(kFp4Values[0]) * d - x);
  for (int i = 1; i < 16; ++i) {
    const float err = std::fabs(static_cast<float>(kFp4Values[i]) * d - x);
    if (err < best_err) {
      best = i;
      best_err = err;
    }
  }
  return best;
}

}  // namespace

void quantize_row_mxfp4(const float* src, void* dst, int64_t n) {
  for (int64_t i = 0; i < n / kQK; ++i, src += kQK) {
    float amax = 0.0f;
    for (int j = 0; j < kQK; ++j) amax = std::max(amax, std::fabs(src[j]));
    // The largest code is 6 (12 doubled), so the exponent leaves amax / 2^e in [4, 8); the
    // reference's cast is undefined outside [0, 255], clamped here.
    const float e = amax > 0.0f ? std::floor(std::log2(amax)) - 2.0f + 127.0f : 0.0f;
    BlockMxfp4 b;
    b.e = static_cast<uint8_t>(trunc_clamped(e, 0, 254));
    const float d = e8m0_half(b.e);
    for (int j = 0; j < kQK / 2; ++j) {
      b.qs[j] =
          static_cast<uint8_t>(nearest_fp4(src[j], d) | (nearest_fp4(src[j + kQK / 2], d) << 4));
    }
    store_block(dst, i, b);
  }
}

}  // namespace hearth::kernels::ref
