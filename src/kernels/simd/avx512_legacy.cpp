// AVX-512 VNNI tiles of the 32-element block formats whose codes are offset integers:
// Q4_0 (u - 8), Q5_0 (u - 16) and Q8_0 (x, read as (x + 128) - 128). Each output is
// bit-identical to the AVX2 level's vec_dot (avx2_legacy.cpp), which this level keeps for
// one row and one token; only tiles of several tokens run here.
//
// Why the bits agree: per block, AVX2 forms 8 int32 lanes, lane k the exact sum of the 4
// products of elements 4k..4k+3 (vpmaddubsw + vpmaddwd; no pair saturates for these
// codes), then acc += (d_w * d_a) * float(lane) by one FMA. vpdpbusd forms the same exact
// 4-product sums in one instruction: lane = dpbusd(-offset * sum4(y), u, y), u the codes
// made unsigned (Q8_0: x xor 0x80 = x + 128). The f32 steps are the same instructions on
// wider registers, and the final sum of the 8 lanes is the AVX2 one.
//
// The kernel is written once over a vector width (Vec256: one token per register, Vec512:
// two tokens, the low and high 256-bit halves), so the 512-bit path and the 256-bit path
// that finishes an odd token are the same logic.
#include <immintrin.h>

#include <cstdint>
#include <cstring>

#include "kernels/block_access.h"
#include "kernels/block_formats.h"
#include "kernels/simd/simd_table.h"

// GCC 12's AVX-512 intrinsics start their results from deliberately undefined registers
// (_mm512_undefined_*), which -Wuninitialized reports once they are inlined here.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wuninitialized"
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#pragma GCC push_options
#pragma GCC target("avx512f,avx512bw,avx512vl,avx512dq,avx512vnni,avx2,fma,f16c")

#include "kernels/simd/avx2_util.h"

namespace hearth::kernels::simd {
namespace {

using avx2::hsum8;  // the AVX2 level's reduction order, which these outputs must match
using avx2::load256;
using avx2::load_u16;
using avx2::unpack_nibbles;

// 0x10 in byte e where bit e of the little-endian qh word is set.
inline __m256i unpack_fifth_bits(const uint8_t* qh) {
  uint32_t bits = 0;
  std::memcpy(&bits, qh, sizeof(bits));
  return _mm256_maskz_mov_epi8(bits, _mm256_set1_epi8(0x10));
}

// The weight formats: block bytes, the unsigned codes and the offset subtracted from them.
struct Q4_0 {
  static constexpr int kBytes = 18, kOffset = 8, kSlot = 0;
  static __m256i codes(const uint8_t* b) { return unpack_nibbles(b + 2); }
};

struct Q5_0 {
  static constexpr int kBytes = 22, kOffset = 16, kSlot = 1;
  static __m256i codes(const uint8_t* b) {
    return _mm256_or_si256(unpack_nibbles(b + 6), unpack_fifth_bits(b + 2));
  }
};

struct Q8_0 {
  static constexpr int kBytes = 34, kOffset = 128, kSlot = 2;
  static __m256i codes(const uint8_t* b) {
    return _mm256_xor_si256(load256(b + 2), _mm256_set1_epi8(static_cast<char>(0x80)));
  }
};

constexpr int kActBytes = 34;  // a Q8_0 activation block: f16 scale, 32 codes

// One register of activation blocks: one token (Vec256) or two (Vec512, token 2p in the low
// half, 2p + 1 in the high half).
struct Vec256 {
  using I = __m256i;
  using F = __m256;
  static constexpr int kTokens = 1;
  static I act(const uint8_t* const* x) { return load256(x[0] + 2); }
  static F act_scale(const float* f16, const uint8_t* const* x) {
    return _mm256_set1_ps(f16[load_u16(x[0])]);
  }
  static I codes(__m256i c) { return c; }
  static F set1(float v) { return _mm256_set1_ps(v); }
  static I set1_i8(int v) { return _mm256_set1_epi8(static_cast<char>(v)); }
  static I zero() { return _mm256_setzero_si256(); }
  static I dpbusd(I acc, I u, I s) { return _mm256_dpbusd_epi32(acc, u, s); }
  static I sub(I a, I b) { return _mm256_sub_epi32(a, b); }
  static F fzero() { return _mm256_setzero_ps(); }
  static F cvt(I v) { return _mm256_cvtepi32_ps(v); }
  static F mul(F a, F b) { return _mm256_mul_ps(a, b); }
  static F fma(F a, F b, F c) { return _mm256_fmadd_ps(a, b, c); }
  static void store(F acc, float* const* y) { *y[0] = hsum8(acc); }
};

struct Vec512 {
  using I = __m512i;
  using F = __m512;
  static constexpr int kTokens = 2;
  static I act(const uint8_t* const* x) {
    return _mm512_inserti64x4(_mm512_castsi256_si512(load256(x[0] + 2)), load256(x[1] + 2), 1);
  }
  static F act_scale(const float* f16, const uint8_t* const* x) {
    const __m256 lo = _mm256_set1_ps(f16[load_u16(x[0])]);
    const __m256 hi = _mm256_set1_ps(f16[load_u16(x[1])]);
    return _mm512_insertf32x8(_mm512_castps256_ps512(lo), hi, 1);
  }
  static I codes(__m256i c) { return _mm512_broadcast_i64x4(c); }
  static F set1(float v) { return _mm512_set1_ps(v); }
  static I set1_i8(int v) { return _mm512_set1_epi8(static_cast<char>(v)); }
  static I zero() { return _mm512_setzero_si512(); }
  static I dpbusd(I acc, I u, I s) { return _mm512_dpbusd_epi32(acc, u, s); }
  static I sub(I a, I b) { return _mm512_sub_epi32(a, b); }
  static F fzero() { return _mm512_setzero_ps(); }
  static F cvt(I v) { return _mm512_cvtepi32_ps(v); }
  static F mul(F a, F b) { return _mm512_mul_ps(a, b); }
  static F fma(F a, F b, F c) { return _mm512_fmadd_ps(a, b, c); }
  static void store(F acc, float* const* y) {
    *y[0] = hsum8(_mm512_castps512_ps256(acc));
    *y[1] = hsum8(_mm512_extractf32x8_ps(acc, 1));
  }
};

struct Args {
  const uint8_t* w;
  size_t w_stride;
  const uint8_t* x;
  size_t x_stride;
  int64_t n;
  float* y;
  size_t y_stride;
  const float* f16;  // f16_to_f32_table()
};

// R rows x P registers of tokens (P * V::kTokens tokens from `first_token`), all blocks.
// Per block and output: lane = dpbusd(-offset * sum4(y), u, y); acc += (d_w * d_a) * lane.
template <class K, class V, int R, int P>
void tile_kernel(const Args& a, int first_token) {
  using I = typename V::I;
  using F = typename V::F;
  const uint8_t* x[P][V::kTokens];
  float* y[P][V::kTokens];
  for (int p = 0; p < P; ++p) {
    for (int k = 0; k < V::kTokens; ++k) {
      const size_t t = static_cast<size_t>(first_token + p * V::kTokens + k);
      x[p][k] = a.x + t * a.x_stride;
      y[p][k] = a.y + t * a.y_stride;
    }
  }
  F acc[R][P];
  for (int r = 0; r < R; ++r) {
    for (int p = 0; p < P; ++p) acc[r][p] = V::fzero();
  }
  const I offset = V::set1_i8(K::kOffset);
  const int64_t nb = a.n / kQK;
  for (int64_t i = 0; i < nb; ++i) {
    I act[P], start[P];
    F act_d[P];
#pragma GCC unroll 4
    for (int p = 0; p < P; ++p) {
      const uint8_t* blk[V::kTokens];
      for (int k = 0; k < V::kTokens; ++k) blk[k] = x[p][k] + i * kActBytes;
      act[p] = V::act(blk);
      act_d[p] = V::act_scale(a.f16, blk);
      start[p] = V::sub(V::zero(), V::dpbusd(V::zero(), offset, act[p]));
    }
#pragma GCC unroll 4
    for (int r = 0; r < R; ++r) {
      const uint8_t* wb = a.w + static_cast<size_t>(r) * a.w_stride + i * K::kBytes;
      const I u = V::codes(K::codes(wb));
      const F w_d = V::set1(a.f16[load_u16(wb)]);
#pragma GCC unroll 4
      for (int p = 0; p < P; ++p) {
        const F lanes = V::cvt(V::dpbusd(start[p], u, act[p]));
        acc[r][p] = V::fma(V::mul(w_d, act_d[p]), lanes, acc[r][p]);
      }
    }
  }
  for (int r = 0; r < R; ++r) {
    for (int p = 0; p < P; ++p) {
      float* out[V::kTokens];
      for (int k = 0; k < V::kTokens; ++k) out[k] = y[p][k] + r;
      V::store(acc[r][p], out);
    }
  }
}

// Up to 4 rows x 6 tokens: 12 accumulators of two tokens, the rest for the activations.
constexpr int kMaxRows = 4;
constexpr int kMaxTokens = 6;

template <class K, int R>
void tile_rows(const Args& a, int n_tokens) {
  switch (n_tokens / 2) {
    case 3:
      tile_kernel<K, Vec512, R, 3>(a, 0);
      break;
    case 2:
      tile_kernel<K, Vec512, R, 2>(a, 0);
      break;
    case 1:
      tile_kernel<K, Vec512, R, 1>(a, 0);
      break;
    default:
      break;
  }
  if (n_tokens % 2 != 0) tile_kernel<K, Vec256, R, 1>(a, n_tokens - 1);
}

// The AVX2 tiles of Q4_0, Q5_0 and Q8_0, kept for a single token: decoding streams the
// weights once, which the AVX2 tile does with prefetches tuned for it, and a 512-bit register
// of one token would be half empty. Set when the level's table is built, read after.
TileFn avx2_single_token[3] = {nullptr, nullptr, nullptr};

template <class K>
void tile(const TileArgs& args) {
  if (args.n_tokens == 1) return avx2_single_token[K::kSlot](args);
  const Args a = {args.w, args.w_stride, args.x,        args.x_stride,
                  args.n, args.y,        args.y_stride, f16_to_f32_table()};
  switch (args.n_rows) {
    case 1:
      return tile_rows<K, 1>(a, args.n_tokens);
    case 2:
      return tile_rows<K, 2>(a, args.n_tokens);
    case 3:
      return tile_rows<K, 3>(a, args.n_tokens);
    default:
      return tile_rows<K, 4>(a, args.n_tokens);
  }
}

}  // namespace
}  // namespace hearth::kernels::simd

#pragma GCC pop_options
#pragma GCC diagnostic pop

namespace hearth::kernels::simd {

void register_avx512_legacy(Table& t) {
  const TensorType types[] = {TensorType::kQ4_0, TensorType::kQ5_0, TensorType::kQ8_0};
  const TileFn tiles[] = {tile<Q4_0>, tile<Q5_0>, tile<Q8_0>};
  for (int slot = 0; slot < 3; ++slot) {
    Entry& e = entry(t, types[slot]);
    // Called after register_avx2_legacy: its tile serves one token (up to 4 rows as well).
    avx2_single_token[slot] = e.tile;
    e.tile = tiles[slot];
    e.max_rows = kMaxRows;
    e.max_tokens = kMaxTokens;
  }
}

}  // namespace hearth::kernels::simd
