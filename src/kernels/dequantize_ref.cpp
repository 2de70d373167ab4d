// Scalar reference dequantization (quantization.md §3). Each formula is evaluated in the
// spec's operand order in f32; this file is compiled with -ffp-contract=off so that no
// `a*b - c` becomes an FMA, which would change the last bit relative to llama.cpp.
#include <cstring>

#include "base/half.h"
#include "kernels/block_access.h"
#include "kernels/block_formats.h"
#include "kernels/quant_ref.h"

namespace hearth::kernels::ref {

void dequantize_row_f32(const void* src, float* dst, int64_t n) {
  std::memcpy(dst, src, static_cast<size_t>(n) * sizeof(float));
}

void dequantize_row_f16(const void* src, float* dst, int64_t n) {
  const auto* p = static_cast<const uint8_t*>(src);
  for (int64_t i = 0; i < n; ++i) {
    f16_bits h;
    std::memcpy(&h, p + 2 * i, 2);
    dst[i] = f16_to_f32(h);
  }
}

void dequantize_row_bf16(const void* src, float* dst, int64_t n) {
  const auto* p = static_cast<const uint8_t*>(src);
  for (int64_t i = 0; i < n; ++i) {
    bf16_bits h;
    std::memcpy(&h, p + 2 * i, 2);
    dst[i] = bf16_to_f32(h);
  }
}

void dequantize_row_q8_0(const void* src, float* dst, int64_t n) {
  for (int64_t i = 0; i < n / kQK; ++i, dst += kQK) {
    const auto b = load_block<BlockQ8_0>(src, i);
    const float d = f16_to_f32(b.d);
    for (int e = 0; e < kQK; ++e) dst[e] = static_cast<float>(b.qs[e]) * d;
  }
}

void dequantize_row_q4_0(const void* src, float* dst, int64_t n) {
  for (int64_t i = 0; i < n / kQK; ++i, dst += kQK) {
    const auto b = load_block<BlockQ4_0>(src, i);
    const float d = f16_to_f32(b.d);
    for (int j = 0; j < kQK / 2; ++j) {
      dst[j] = static_cast<float>((b.qs[j] & 0xF) - 8) * d;
      dst[j + kQK / 2] = static_cast<float>((b.qs[j] >> 4) - 8) * d;
    }
  }
}

void dequantize_row_q4_1(const void* src, float* dst, int64_t n) {
  for (int64_t i = 0; i < n / kQK; ++i, dst += kQK) {
    const auto b = load_block<BlockQ4_1>(src, i);
    const float d = f16_to_f32(b.d);
    const float m = f16_to_f32(b.m);
    for (int j = 0; j < kQK / 2; ++j) {
      dst[j] = static_cast<float>(b.qs[j] & 0xF) * d + m;
      dst[j + kQK / 2] = static_cast<float>(b.qs[j] >> 4) * d + m;
    }
  }
}

void dequantize_row_q5_0(const void* src, float* dst, int64_t n) {
  for (int64_t i = 0; i < n / kQK; ++i, dst += kQK) {
    const auto b = load_block<BlockQ5_0>(src, i);
    const float d = f16_to_f32(b.d);
    const uint32_t qh = load_u32_le(b.qh);
    for (int j = 0; j < kQK / 2; ++j) {
      const int lo = (b.qs[j] & 0xF) | static_cast<int>(((qh >> j) & 1u) << 4);
      const int hi = (b.qs[j] >> 4) | static_cast<int>(((qh >> (j + 16)) & 1u) << 4);
      dst[j] = static_cast<float>(lo - 16) * d;
      dst[j + kQK / 2] = static_cast<float>(hi - 16) * d;
    }
  }
}

void dequantize_row_q5_1(const void* src, float* dst, int64_t n) {
  for (int64_t i = 0; i < n / kQK; ++i, dst += kQK) {
    const auto b = load_block<BlockQ5_1>(src, i);
    const float d = f16_to_f32(b.d);
    const float m = f16_to_f32(b.m);
    const uint32_t qh = load_u32_le(b.qh);
    for (int j = 0; j < kQK / 2; ++j) {
      const int lo = (b.qs[j] & 0xF) | static_cast<int>(((qh >> j) & 1u) << 4);
      const int hi = (b.qs[j] >> 4) | static_cast<int>(((qh >> (j + 16)) & 1u) << 4);
      dst[j] = static_cast<float>(lo) * d + m;
      dst[j + kQK / 2] = static_cast<float>(hi) * d + m;
    }
  }
}

void dequantize_row_q2_k(const void* src, float* dst, int64_t n) {
  for (int64_t i = 0; i < n / kQKK; ++i, dst += kQKK) {
    const auto b = load_block<BlockQ2K>(src, i);
    const float d = f16_to_f32(b.d);
    const float dmin = f16_to_f32(b.dmin);
    // Two halves of 128 elements; in each, four 32-element groups take successive bit
    // pairs of the same 32 bytes, and each group is two 16-element sub-blocks.
    for (int half = 0; half < 2; ++half) {
      for (int j = 0; j < 4; ++j) {
        for (int sub = 0; sub < 2; ++sub) {
          const int sc = b.scales[8 * half + 2 * j + sub];
          const float dl = d * static_cast<float>(sc & 0xF);
          const float ml = dmin * static_cast<float>(sc >> 4);
          for (int l = 16 * sub; l < 16 * sub + 16; ++l) {
            const int q = (b.qs[32 * half + l] >> (2 * j)) & 3;
            dst[128 * half + 32 * j + l] = dl * static_cast<float>(q) - ml;
          }
        }
      }
    }
  }
}

void dequantize_row_q3_k(const void* src, float* dst, int64_t n) {
  for (int64_t i = 0; i < n / kQKK; ++i, dst += kQKK) {
    const auto b = load_block<BlockQ3K>(src, i);
    const float d = f16_to_f32(b.d);
    for (int half = 0; half < 2; ++half) {
      for (int j = 0; j < 4; ++j) {
        for (int sub = 0; sub < 2; ++sub) {
          const float dl =
              d * static_cast<float>(unpack_q3k_scale(b.scales, 8 * half + 2 * j + sub));
          for (int l = 16 * sub; l < 16 * sub + 16; ++l) {
            const int lo2 = (b.qs[32 * half + l] >> (2 * j)) & 3;
            const int hb = (b.hmask[l] >> (4 * half + j)) & 1;
            const int q = lo2 - (hb ? 0 : 4);
            dst[128 * half + 32 * j + l] = dl * static_cast<float>(q);
          }
        }
      }
    }
  }
}

void dequantize_row_q4_k(const void* src, float* dst, int64_t n) {
  for (int64_t i = 0; i < n / kQKK; ++i, dst += kQKK) {
    const auto b = load_block<BlockQ4K>(src, i);
    const float d = f16_to_f32(b.d);
    const float dmin = f16_to_f32(b.dmin);
    // Four 64-element groups; each uses 32 bytes, low nibbles first.
    for (int g = 0; g < 4; ++g) {
      for (int h = 0; h < 2; ++h) {
        int sc = 0;
        int mn = 0;
        unpack_k4_scale_min(b.scales, 2 * g + h, sc, mn);
        const float d1 = d * static_cast<float>(sc);
        const float m1 = dmin * static_cast<float>(mn);
        for (int l = 0; l < 32; ++l) {
          const int u = h ? (b.qs[32 * g + l] >> 4) : (b.qs[32 * g + l] & 0xF);
          dst[64 * g + 32 * h + l] = d1 * static_cast<float>(u) - m1;
        }
      }
    }
  }
}

void dequantize_row_q5_k(const void* src, float* dst, int64_t n) {
  for (int64_t i = 0; i < n / kQKK; ++i, dst += kQKK) {
    const auto b = load_block<BlockQ5K>(src, i);
    const float d = f16_to_f32(b.d);
    const float dmin = f16_to_f32(b.dmin);
    for (int g = 0; g < 4; ++g) {
      for (int h = 0; h < 2; ++h) {
        const int k = 2 * g + h;
        int sc = 0;
        int mn = 0;
        unpack_k4_scale_min(b.scales, k, sc, mn);
        const float d1 = d * static_cast<float>(sc);
        const float m1 = dmin * static_cast<float>(mn);
        for (int l = 0; l < 32; ++l) {
          const int lo = h ? (b.qs[32 * g + l] >> 4) : (b.qs[32 * g + l] & 0xF);
          const int u = lo + 16 * ((b.qh[l] >> k) & 1);
          dst[64 * g + 32 * h + l] = d1 * static_cast<float>(u) - m1;
        }
      }
    }
  }
}

void dequantize_row_q6_k(const void* src, float* dst, int64_t n) {
  for (int64_t i = 0; i < n / kQKK; ++i, dst += kQKK) {
    const auto b = load_block<BlockQ6K>(src, i);
    const float d = f16_to_f32(b.d);
    // Each 128-element half: quarter k takes low (k < 2) or high nibbles of one of two
    // 32-byte runs of ql, and bit pair k of the same 32 bytes of qh.
    for (int half = 0; half < 2; ++half) {
      for (int k = 0; k < 4; ++k) {
        const int ql_base = 64 * half + ((k & 1) ? 32 : 0);
        const int shift = k < 2 ? 0 : 4;
        for (int sub = 0; sub < 2; ++sub) {
          const float dl = d * static_cast<float>(b.scales[8 * half + 2 * k + sub]);
          for (int l = 16 * sub; l < 16 * sub + 16; ++l) {
            const int lo4 = (b.ql[ql_base + l] >> shift) & 0xF;
            const int hi2 = (b.qh[32 * half + l] >> (2 * k)) & 3;
            dst[128 * half + 32 * k + l] = dl * static_cast<float>((lo4 | (hi2 << 4)) - 32);
          }
        }
      }
    }
  }
}

void dequantize_row_iq4_nl(const void* src, float* dst, int64_t n) {
  for (int64_t i = 0; i < n / kQK; ++i, dst += kQK) {
    const auto b = load_block<BlockIq4Nl>(src, i);
    const float d = f16_to_f32(b.d);
    for (int j = 0; j < kQK / 2; ++j) {
      dst[j] = d * static_cast<float>(kIq4nlValues[b.qs[j] & 0xF]);
      dst[j + kQK / 2] = d * static_cast<float>(kIq4nlValues[b.qs[j] >> 4]);
    }
  }
}

void dequantize_row_mxfp4(const void* src, float* dst, int64_t n) {
  for (int64_t i = 0; i < n / kQK; ++i, dst += kQK) {
    const auto b = load_block<BlockMxfp4>(src, i);
    const float d = e8m0_half(b.e);
    for (int j = 0; j < kQK / 2; ++j) {
      dst[j] = static_cast<float>(kFp4Values[b.qs[j] & 0xF]) * d;
      dst[j + kQK / 2] = static_cast<float>(kFp4Values[b.qs[j] >> 4]) * d;
    }
  }
}

void dequantize_row_iq4_xs(const void* src, float* dst, int64_t n) {
  for (int64_t i = 0; i < n / kQKK; ++i, dst += kQKK) {
    const auto b = load_block<BlockIq4Xs>(src, i);
    const float d = f16_to_f32(b.d);
    for (int sb = 0; sb < kQKK / 32; ++sb) {
      const int ls = unpack_iq4xs_scale(b.scales_l, b.scales_h, sb);
      const float dl = d * static_cast<float>(ls - 32);
      const uint8_t* qs = b.qs + 16 * sb;
      float* y = dst + 32 * sb;
      for (int r = 0; r < 16; ++r) {
        y[r] = dl * static_cast<float>(kIq4nlValues[qs[r] & 0xF]);
        y[r + 16] = dl * static_cast<float>(kIq4nlValues[qs[r] >> 4]);
      }
    }
  }
}

}  // namespace hearth::kernels::ref
