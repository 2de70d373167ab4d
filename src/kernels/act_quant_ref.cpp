// Activation quantizers (quantization.md §4.2), bit-exact with the reference's x86 build:
// the 8-bit blocks every quantized weight type is multiplied with. Each row is converted
// on its own, so a token's quantized activations never depend on the rest of the batch.
#include <algorithm>
#include <cmath>
#include <cstring>

#include "base/half.h"
#include "kernels/block_access.h"
#include "kernels/block_formats.h"
#include "kernels/quant_ref.h"

namespace hearth::kernels::ref {
namespace {

// The x86 path rounds with vroundps (nearest, ties to even), converts with cvtps2dq and
// narrows with saturating packs. cvtps2dq turns NaN and out-of-range values into INT_MIN,
// which the packs saturate to -128.
int8_t round_even_saturated(float v) {
  const float r = std::nearbyint(v);  // the default rounding mode: nearest, ties to even
  if (!(r > -2147483648.0f && r < 2147483648.0f)) return -128;
  return static_cast<int8_t>(std::clamp(r, -128.0f, 127.0f));
}

// Nearest integer, ties to even, for |v| < 2^22: adding 1.5 * 2^23 leaves the rounded
// integer in the low mantissa bits (the reference's nearest_int).
int nearest_int(float v) {
  const float shifted = v + 12582912.0f;
  int32_t bits = 0;
  std::memcpy(&bits, &shifted, sizeof(bits));
  return (bits & 0x007FFFFF) - 0x00400000;
}

float block_amax(const float* x, int n) {
  float amax = 0.0f;
  for (int j = 0; j < n; ++j) amax = std::max(amax, std::fabs(x[j]));
  return amax;
}

// The shared part of Q8_0 and Q8_1: returns d before its f16 rounding and fills qs.
float quantize_q8_block(const float* x, int8_t* qs) {
  const float amax = block_amax(x, kQK);
  const float d = amax / 127.0f;
  const float id = amax != 0.0f ? 127.0f / amax : 0.0f;
  for (int j = 0; j < kQK; ++j) qs[j] = round_even_saturated(x[j] * id);
  return d;
}

}  // namespace

void quantize_act_row_q8_0(const float* src, void* dst, int64_t n) {
  for (int64_t i = 0; i < n / kQK; ++i, src += kQK) {
    BlockQ8_0 b;
    b.d = f32_to_f16(quantize_q8_block(src, b.qs));
    store_block(dst, i, b);
  }
}

void quantize_act_row_q8_1(const float* src, void* dst, int64_t n) {
  for (int64_t i = 0; i < n / kQK; ++i, src += kQK) {
    BlockQ8_1 b;
    const float d = quantize_q8_block(src, b.qs);
    int sum = 0;
    for (int j = 0; j < kQK; ++j) sum += b.qs[j];
    b.d = f32_to_f16(d);
    b.s = f32_to_f16(d * static_cast<float>(sum));
    store_block(dst, i, b);
  }
}

void quantize_act_row_q8_k(const float* src, void* dst, int64_t n) {
  for (int64_t i = 0; i < n / kQKK; ++i, src += kQKK) {
    // The signed value of largest magnitude, the first one on ties.
    float max = 0.0f;
    float amax = 0.0f;
    for (int j = 0; j < kQKK; ++j) {
      const float ax = std::fabs(src[j]);
      if (ax > amax) {
        amax = ax;
        max = src[j];
      }
    }
    BlockQ8K b{};  // an all-zero block stays d = 0, qs = 0, bsums = 0
    if (amax != 0.0f) {
      // Negative scale: the extreme maps to -127 whatever its sign.
      const float iscale = -127.0f / max;
      for (int j = 0; j < kQKK; ++j) {
        b.qs[j] = static_cast<int8_t>(std::min(127, nearest_int(iscale * src[j])));
      }
      for (int g = 0; g < kQKK / 16; ++g) {
        int sum = 0;
        for (int j = 16 * g; j < 16 * g + 16; ++j) sum += b.qs[j];
        b.bsums[g] = static_cast<int16_t>(sum);
      }
      b.d = 1.0f / iscale;
    }
    store_block(dst, i, b);
  }
}

}  // namespace hearth::kernels::ref
