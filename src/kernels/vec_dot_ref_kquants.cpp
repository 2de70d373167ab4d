// Scalar reference dot products of the 256-element super-block formats with Q8_K
// activations (quantization.md §4.3). The sub-block scales are applied in integers; one
// f32 scaling per super-block. The min terms of Q2_K/Q4_K/Q5_K never touch the quants:
//   sum_i (d*sc*u_i - dmin*mn) * dy*q8_i = d*dy * sum(sc*u*q8) - dmin*dy * sum(mn * bsums)
// where bsums are the activation's per-16 sums. Compiled with -ffp-contract=off.
#include "base/half.h"
#include "kernels/block_access.h"
#include "kernels/block_formats.h"
#include "kernels/vec_dot_ref.h"

namespace hearth::kernels::ref {
namespace {

// sum_j a[j] * b[j] over `len` elements, exact in int.
int dot_codes(const int8_t* a, const int8_t* b, int len) {
  int sum = 0;
  for (int j = 0; j < len; ++j) sum += a[j] * b[j];
  return sum;
}

// Q2_K and Q3_K spread each 128-element half over 32 bytes of qs: element 32j + l of
// the half is bit pair j of byte l.
void unpack_2bit(const uint8_t* qs, int8_t* q) {
  for (int half = 0; half < 2; ++half) {
    for (int j = 0; j < 4; ++j) {
      for (int l = 0; l < 32; ++l) {
        q[128 * half + 32 * j + l] = static_cast<int8_t>((qs[32 * half + l] >> (2 * j)) & 3);
      }
    }
  }
}

// Q4_K and Q5_K: each 64-element group is 32 bytes of qs, low nibbles first.
void unpack_4bit_groups(const uint8_t* qs, int8_t* q) {
  for (int g = 0; g < 4; ++g) {
    for (int l = 0; l < 32; ++l) {
      q[64 * g + l] = static_cast<int8_t>(qs[32 * g + l] & 0xF);
      q[64 * g + 32 + l] = static_cast<int8_t>(qs[32 * g + l] >> 4);
    }
  }
}

// The Q4_K/Q5_K integer sums of a super-block: isum = sum_k sc_k * sum_{i in k} u_i*q8_i
// over the eight 32-element sub-blocks, mins = sum_g bsums_g * mn_{g/2}.
void affine_sums(const uint8_t* scales, const int8_t* u, const BlockQ8K& by, int& isum, int& mins) {
  isum = 0;
  mins = 0;
  for (int k = 0; k < 8; ++k) {
    int sc = 0;
    int mn = 0;
    unpack_k4_scale_min(scales, k, sc, mn);
    isum += sc * dot_codes(u + 32 * k, by.qs + 32 * k, 32);
    mins += mn * (by.bsums[2 * k] + by.bsums[2 * k + 1]);
  }
}

}  // namespace

float vec_dot_q2_k(const void* x, const void* y, int64_t n) {
  float sumf = 0.0f;
  int8_t q[kQKK];
  for (int64_t i = 0; i < n / kQKK; ++i) {
    const auto bx = load_block<BlockQ2K>(x, i);
    const auto by = load_block<BlockQ8K>(y, i);
    unpack_2bit(bx.qs, q);
    int isum = 0;
    int summs = 0;
    for (int s = 0; s < kQKK / 16; ++s) {
      isum += (bx.scales[s] & 0xF) * dot_codes(q + 16 * s, by.qs + 16 * s, 16);
      summs += by.bsums[s] * (bx.scales[s] >> 4);
    }
    sumf += (by.d * f16_to_f32(bx.d)) * static_cast<float>(isum) -
            (by.d * f16_to_f32(bx.dmin)) * static_cast<float>(summs);
  }
  return sumf;
}

float vec_dot_q3_k(const void* x, const void* y, int64_t n) {
  float sumf = 0.0f;
  int8_t q[kQKK];
  for (int64_t i = 0; i < n / kQKK; ++i) {
    const auto bx = load_block<BlockQ3K>(x, i);
    const auto by = load_block<BlockQ8K>(y, i);
    unpack_2bit(bx.qs, q);
    // A clear high bit in hmask means the code is 4 lower (range -4..3).
    for (int half = 0; half < 2; ++half) {
      for (int j = 0; j < 4; ++j) {
        for (int l = 0; l < 32; ++l) {
          const int hb = (bx.hmask[l] >> (4 * half + j)) & 1;
          q[128 * half + 32 * j + l] =
              static_cast<int8_t>(q[128 * half + 32 * j + l] - (hb ? 0 : 4));
        }
      }
    }
    int isum = 0;
    for (int s = 0; s < kQKK / 16; ++s) {
      isum += unpack_q3k_scale(bx.scales, s) * dot_codes(q + 16 * s, by.qs + 16 * s, 16);
    }
    sumf += (f16_to_f32(bx.d) * by.d) * static_cast<float>(isum);
  }
  return sumf;
}

float vec_dot_q4_k(const void* x, const void* y, int64_t n) {
  float sumf = 0.0f;
  int8_t u[kQKK];
  for (int64_t i = 0; i < n / kQKK; ++i) {
    const auto bx = load_block<BlockQ4K>(x, i);
    const auto by = load_block<BlockQ8K>(y, i);
    unpack_4bit_groups(bx.qs, u);
    int isum = 0;
    int mins = 0;
    affine_sums(bx.scales, u, by, isum, mins);
    sumf += (f16_to_f32(bx.d) * by.d) * static_cast<float>(isum) -
            (f16_to_f32(bx.dmin) * by.d) * static_cast<float>(mins);
  }
  return sumf;
}

float vec_dot_q5_k(const void* x, const void* y, int64_t n) {
  float sumf = 0.0f;
  int8_t u[kQKK];
  for (int64_t i = 0; i < n / kQKK; ++i) {
    const auto bx = load_block<BlockQ5K>(x, i);
    const auto by = load_block<BlockQ8K>(y, i);
    unpack_4bit_groups(bx.qs, u);
    // Bit k of qh[l] is the 5th bit of element l of sub-block k.
    for (int k = 0; k < 8; ++k) {
      for (int l = 0; l < 32; ++l) {
        u[32 * k + l] = static_cast<int8_t>(u[32 * k + l] + 16 * ((bx.qh[l] >> k) & 1));
      }
    }
    int isum = 0;
    int mins = 0;
    affine_sums(bx.scales, u, by, isum, mins);
    sumf += (f16_to_f32(bx.d) * by.d) * static_cast<float>(isum) -
            (f16_to_f32(bx.dmin) * by.d) * static_cast<float>(mins);
  }
  return sumf;
}

float vec_dot_q6_k(const void* x, const void* y, int64_t n) {
  float sumf = 0.0f;
  int8_t q[kQKK];
  for (int64_t i = 0; i < n / kQKK; ++i) {
    const auto bx = load_block<BlockQ6K>(x, i);
    const auto by = load_block<BlockQ8K>(y, i);
    // Quarter k of each half: low or high nibbles of one of two 32-byte runs of ql, and
    // bit pair k of the half's 32 bytes of qh.
    for (int half = 0; half < 2; ++half) {
      for (int k = 0; k < 4; ++k) {
        const uint8_t* ql = bx.ql + 64 * half + ((k & 1) ? 32 : 0);
        const int shift = k < 2 ? 0 : 4;
        for (int l = 0; l < 32; ++l) {
          const int lo4 = (ql[l] >> shift) & 0xF;
          const int hi2 = (bx.qh[32 * half + l] >> (2 * k)) & 3;
          q[128 * half + 32 * k + l] = static_cast<int8_t>((lo4 | (hi2 << 4)) - 32);
        }
      }
    }
    int isum = 0;
    for (int s = 0; s < kQKK / 16; ++s) {
      isum += bx.scales[s] * dot_codes(q + 16 * s, by.qs + 16 * s, 16);
    }
    sumf += (f16_to_f32(bx.d) * by.d) * static_cast<float>(isum);
  }
  return sumf;
}

float vec_dot_iq4_xs(const void* x, const void* y, int64_t n) {
  float sumf = 0.0f;
  int8_t q[32];
  for (int64_t i = 0; i < n / kQKK; ++i) {
    const auto bx = load_block<BlockIq4Xs>(x, i);
    const auto by = load_block<BlockQ8K>(y, i);
    const float d4d8 = f16_to_f32(bx.d) * by.d;
    // One f32 scaling per 32-element sub-block.
    for (int b = 0; b < kQKK / 32; ++b) {
      const uint8_t* qs = bx.qs + 16 * b;
      for (int r = 0; r < 16; ++r) {
        q[r] = kIq4nlValues[qs[r] & 0xF];
        q[r + 16] = kIq4nlValues[qs[r] >> 4];
      }
      const int isum = dot_codes(q, by.qs + 32 * b, 32);
      const int ls = unpack_iq4xs_scale(bx.scales_l, bx.scales_h, b);
      sumf += (d4d8 * static_cast<float>(ls - 32)) * static_cast<float>(isum);
    }
  }
  return sumf;
}

}  // namespace hearth::kernels::ref
