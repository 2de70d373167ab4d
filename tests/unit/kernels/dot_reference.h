// An independent, straightforward model of what vec_dot computes, for the vec_dot and
// matmul tests: the dequantized weight row times the activation row as its converted
// blocks represent it (d * q), summed in double. Written from quantization.md §3.7 and
// §4.2 without the kernels' code paths.
#pragma once

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <vector>

#include "base/half.h"
#include "base/tensor_type.h"
#include "kernels/quant.h"

namespace hearth::kernels::test {

struct DotReference {
  double value = 0.0;
  double abs_sum = 0.0;  // sum |w_i * a_i|, the scale of the rounding error
};

inline float read_f16(const uint8_t* p) {
  uint16_t h = 0;
  std::memcpy(&h, p, 2);
  return f16_to_f32(h);
}

// The activation row `act` (n elements in format `act_type`) as doubles.
inline std::vector<double> decode_activation(TensorType act_type, const uint8_t* act, int64_t n) {
  std::vector<double> a(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) {
    double v = 0.0;
    switch (act_type) {
      case TensorType::kF32: {
        float f = 0.0f;
        std::memcpy(&f, act + 4 * i, 4);
        v = f;
        break;
      }
      case TensorType::kF16:
        v = read_f16(act + 2 * i);
        break;
      case TensorType::kBF16: {
        uint16_t h = 0;
        std::memcpy(&h, act + 2 * i, 2);
        v = bf16_to_f32(h);
        break;
      }
      case TensorType::kQ8_0:  // d (f16) at 0, qs at 2, 34 bytes per 32
        v = read_f16(act + 34 * (i / 32)) * static_cast<int8_t>(act[34 * (i / 32) + 2 + i % 32]);
        break;
      case TensorType::kQ8_1:  // d (f16) at 0, s at 2, qs at 4, 36 bytes per 32
        v = read_f16(act + 36 * (i / 32)) * static_cast<int8_t>(act[36 * (i / 32) + 4 + i % 32]);
        break;
      case TensorType::kQ8_K: {  // d (f32) at 0, qs at 4, 292 bytes per 256
        float d = 0.0f;
        std::memcpy(&d, act + 292 * (i / 256), 4);
        v = static_cast<double>(d) * static_cast<int8_t>(act[292 * (i / 256) + 4 + i % 256]);
        break;
      }
      default:
        ADD_FAILURE() << "no activation format " << tensor_type_name(act_type);
    }
    a[static_cast<size_t>(i)] = v;
  }
  return a;
}

// sum_i w_i * a_i for one weight row of `type` and its activation row in `act_type`.
// Q4_1/Q5_1 take each block's sum of activations from the Q8_1 `s` field (the reference
// does, and s carries its own f16 rounding): the block's min m contributes m * s instead of
// m * d * sum(q).
inline DotReference reference_dot(TensorType type, const uint8_t* w, TensorType act_type,
                                  const uint8_t* act, int64_t n) {
  std::vector<float> wf(static_cast<size_t>(n));
  dequantize_row(type, w, wf.data(), n);
  const std::vector<double> a = decode_activation(act_type, act, n);
  DotReference r;
  for (int64_t i = 0; i < n; ++i) {
    const double p = static_cast<double>(wf[static_cast<size_t>(i)]) * a[static_cast<size_t>(i)];
    r.value += p;
    r.abs_sum += std::fabs(p);
  }
  if (act_type == TensorType::kQ8_1) {
    const size_t w_block = traits_of(type).type_size;
    for (int64_t b = 0; b < n / 32; ++b) {
      const double m = read_f16(w + static_cast<size_t>(b) * w_block + 2);
      const uint8_t* ab = act + 36 * b;
      double sum_a = 0.0;
      for (int j = 0; j < 32; ++j) sum_a += a[static_cast<size_t>(32 * b + j)];
      r.value += m * (read_f16(ab + 2) - sum_a);
      r.abs_sum += std::fabs(m * read_f16(ab + 2));
    }
  }
  return r;
}

}  // namespace hearth::kernels::test
