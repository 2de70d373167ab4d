// Encoders for the K-quants and IQ4 formats. Each sub-block gets a least-squares scale
// (scale_fit.h); the sub-block scales are then quantized against the block's f16
// super-scale, and every value is re-rounded with the scales as the decoder will see them
// (computed with the same f32 operations as dequantize_ref.cpp).
#include <cmath>
#include <cstring>

#include "base/half.h"
#include "kernels/block_access.h"
#include "kernels/block_formats.h"
#include "kernels/quant_ref.h"
#include "kernels/scale_fit.h"

namespace hearth::kernels::ref {
namespace {

// Integer codes of a K-quant block with per-sub-block (scale, min) pairs.
struct AffineBlock {
  f16_bits d = 0;
  f16_bits dmin = 0;
  int sc[16] = {};
  int mn[16] = {};
  int u[kQKK] = {};
};

// Fits n_sub sub-blocks of sub_len values each (n_sub * sub_len == 256) with codes in
// [0, nmax] and scales/mins quantized to [0, scale_max].
void encode_affine(const float* x, int n_sub, int sub_len, int nmax, int scale_max,
                   AffineBlock& out) {
  AffineFit fits[16];
  float max_scale = 0.0f;
  float max_min = 0.0f;
  for (int s = 0; s < n_sub; ++s) {
    fits[s] = fit_affine(x + s * sub_len, sub_len, nmax);
    max_scale = std::fmax(max_scale, fits[s].scale);
    max_min = std::fmax(max_min, fits[s].min);
  }
  out.d = f32_to_f16(max_scale / static_cast<float>(scale_max));
  out.dmin = f32_to_f16(max_min / static_cast<float>(scale_max));
  const float d = f16_to_f32(out.d);
  const float dmin = f16_to_f32(out.dmin);
  for (int s = 0; s < n_sub; ++s) {
    out.sc[s] = d > 0.0f ? round_clamped(fits[s].scale / d, 0, scale_max) : 0;
    out.mn[s] = dmin > 0.0f ? round_clamped(fits[s].min / dmin, 0, scale_max) : 0;
    const float dl = d * static_cast<float>(out.sc[s]);
    const float ml = dmin * static_cast<float>(out.mn[s]);
    const float inv = dl > 0.0f ? 1.0f / dl : 0.0f;
    for (int i = s * sub_len; i < (s + 1) * sub_len; ++i) {
      out.u[i] = round_clamped((x[i] + ml) * inv, 0, nmax);
    }
  }
}

// Integer codes of a K-quant block with signed per-16 scales and signed codes.
struct SymmetricBlock {
  f16_bits d = 0;
  int sc[16] = {};
  int q[kQKK] = {};
};

// Codes in [nmin, nmax], sub-block scales in [scale_min, scale_max] (scale_min < 0).
void encode_symmetric(const float* x, int nmin, int nmax, int scale_min, int scale_max,
                      SymmetricBlock& out) {
  float scales[16];
  for (int s = 0; s < 16; ++s) scales[s] = fit_symmetric(x + 16 * s, 16, nmin, nmax);
  out.d = f32_to_f16(signed_absmax(scales, 16) / static_cast<float>(scale_min));
  const float d = f16_to_f32(out.d);
  for (int s = 0; s < 16; ++s) {
    out.sc[s] = d != 0.0f ? round_clamped(scales[s] / d, scale_min, scale_max) : 0;
    const float dl = d * static_cast<float>(out.sc[s]);
    const float inv = dl != 0.0f ? 1.0f / dl : 0.0f;
    for (int i = 16 * s; i < 16 * s + 16; ++i) out.q[i] = round_clamped(x[i] * inv, nmin, nmax);
  }
}

// Packs the eight 6-bit scales and mins of Q4_K/Q5_K.
void pack_k4_scales(const int* sc, const int* mn, uint8_t* q) {
  for (int k = 0; k < 4; ++k) {
    q[k] = static_cast<uint8_t>(sc[k] | ((sc[k + 4] >> 4) << 6));
    q[k + 4] = static_cast<uint8_t>(mn[k] | ((mn[k + 4] >> 4) << 6));
    q[k + 8] = static_cast<uint8_t>((sc[k + 4] & 0xF) | ((mn[k + 4] & 0xF) << 4));
  }
}

// Code of the IQ4 value nearest to x / scale.
int iq4_code(float x, float scale) {
  return nearest_iq4_index(scale != 0.0f ? x / scale : 0.0f);
}

}  // namespace

void quantize_row_q2_k(const float* src, void* dst, int64_t n) {
  for (int64_t i = 0; i < n / kQKK; ++i, src += kQKK) {
    AffineBlock a;
    encode_affine(src, 16, 16, 3, 15, a);
    BlockQ2K b{};
    b.d = a.d;
    b.dmin = a.dmin;
    for (int s = 0; s < 16; ++s) b.scales[s] = static_cast<uint8_t>(a.sc[s] | (a.mn[s] << 4));
    // Element e = 128 * half + 32 * j + l sits in bits 2j of qs[32 * half + l].
    for (int e = 0; e < kQKK; ++e) {
      const int half = e / 128, j = (e % 128) / 32, l = e % 32;
      b.qs[32 * half + l] |= static_cast<uint8_t>(a.u[e] << (2 * j));
    }
    store_block(dst, i, b);
  }
}

void quantize_row_q3_k(const float* src, void* dst, int64_t n) {
  for (int64_t i = 0; i < n / kQKK; ++i, src += kQKK) {
    SymmetricBlock a;
    encode_symmetric(src, -4, 3, -32, 31, a);
    BlockQ3K b{};
    b.d = a.d;
    for (int s = 0; s < 16; ++s) {
      const int biased = a.sc[s] + 32;
      if (s < 8) {
        b.scales[s] |= static_cast<uint8_t>(biased & 0xF);
      } else {
        b.scales[s - 8] |= static_cast<uint8_t>((biased & 0xF) << 4);
      }
      b.scales[8 + s % 4] |= static_cast<uint8_t>((biased >> 4) << (2 * (s / 4)));
    }
    for (int e = 0; e < kQKK; ++e) {
      const int half = e / 128, j = (e % 128) / 32, l = e % 32;
      const int u = a.q[e] + 4;  // low two bits in qs, the third in hmask
      b.qs[32 * half + l] |= static_cast<uint8_t>((u & 3) << (2 * j));
      b.hmask[l] |= static_cast<uint8_t>((u >> 2) << (4 * half + j));
    }
    store_block(dst, i, b);
  }
}

void quantize_row_q4_k(const float* src, void* dst, int64_t n) {
  for (int64_t i = 0; i < n / kQKK; ++i, src += kQKK) {
    AffineBlock a;
    encode_affine(src, 8, 32, 15, 63, a);
    BlockQ4K b{};
    b.d = a.d;
    b.dmin = a.dmin;
    pack_k4_scales(a.sc, a.mn, b.scales);
    // Element e = 64 * g + 32 * h + l: nibble h of qs[32 * g + l].
    for (int e = 0; e < kQKK; ++e) {
      const int g = e / 64, h = (e % 64) / 32, l = e % 32;
      b.qs[32 * g + l] |= static_cast<uint8_t>(a.u[e] << (4 * h));
    }
    store_block(dst, i, b);
  }
}

void quantize_row_q5_k(const float* src, void* dst, int64_t n) {
  for (int64_t i = 0; i < n / kQKK; ++i, src += kQKK) {
    AffineBlock a;
    encode_affine(src, 8, 32, 31, 63, a);
    BlockQ5K b{};
    b.d = a.d;
    b.dmin = a.dmin;
    pack_k4_scales(a.sc, a.mn, b.scales);
    for (int e = 0; e < kQKK; ++e) {
      const int g = e / 64, h = (e % 64) / 32, l = e % 32;
      b.qs[32 * g + l] |= static_cast<uint8_t>((a.u[e] & 0xF) << (4 * h));
      b.qh[l] |= static_cast<uint8_t>((a.u[e] >> 4) << (2 * g + h));
    }
    store_block(dst, i, b);
  }
}

void quantize_row_q6_k(const float* src, void* dst, int64_t n) {
  for (int64_t i = 0; i < n / kQKK; ++i, src += kQKK) {
    SymmetricBlock a;
    encode_symmetric(src, -32, 31, -128, 127, a);
    BlockQ6K b{};
    b.d = a.d;
    for (int s = 0; s < 16; ++s) b.scales[s] = static_cast<int8_t>(a.sc[s]);
    // Element e = 128 * half + 32 * k + l: low 4 bits in a nibble of ql, high 2 in qh.
    for (int e = 0; e < kQKK; ++e) {
      const int half = e / 128, k = (e % 128) / 32, l = e % 32;
      const int u = a.q[e] + 32;
      const int ql_index = 64 * half + ((k & 1) ? 32 : 0) + l;
      b.ql[ql_index] |= static_cast<uint8_t>((u & 0xF) << (k < 2 ? 0 : 4));
      b.qh[32 * half + l] |= static_cast<uint8_t>((u >> 4) << (2 * k));
    }
    store_block(dst, i, b);
  }
}

void quantize_row_iq4_nl(const float* src, void* dst, int64_t n) {
  for (int64_t i = 0; i < n / kQK; ++i, src += kQK) {
    BlockIq4Nl b{};
    b.d = f32_to_f16(fit_iq4(src, kQK));
    const float d = f16_to_f32(b.d);
    for (int j = 0; j < kQK / 2; ++j) {
      b.qs[j] = static_cast<uint8_t>(iq4_code(src[j], d) | (iq4_code(src[j + kQK / 2], d) << 4));
    }
    store_block(dst, i, b);
  }
}

void quantize_row_iq4_xs(const float* src, void* dst, int64_t n) {
  constexpr int kSub = kQKK / 32;
  for (int64_t i = 0; i < n / kQKK; ++i, src += kQKK) {
    float scales[kSub];
    for (int sb = 0; sb < kSub; ++sb) scales[sb] = fit_iq4(src + 32 * sb, 32);
    BlockIq4Xs b{};
    b.d = f32_to_f16(signed_absmax(scales, kSub) / -32.0f);
    const float d = f16_to_f32(b.d);
    for (int sb = 0; sb < kSub; ++sb) {
      const int ls = (d != 0.0f ? round_clamped(scales[sb] / d, -32, 31) : 0) + 32;
      b.scales_l[sb / 2] |= static_cast<uint8_t>((ls & 0xF) << (4 * (sb % 2)));
      b.scales_h = static_cast<uint16_t>(b.scales_h | ((ls >> 4) << (2 * sb)));
      const float dl = d * static_cast<float>(ls - 32);
      const float* x = src + 32 * sb;
      for (int r = 0; r < 16; ++r) {
        b.qs[16 * sb + r] =
            static_cast<uint8_t>(iq4_code(x[r], dl) | (iq4_code(x[r + 16], dl) << 4));
      }
    }
    store_block(dst, i, b);
  }
}

}  // namespace hearth::kernels::ref
