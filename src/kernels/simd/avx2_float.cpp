// AVX2 kernels of the float weight types F32, F16 and BF16, and the F16/BF16 activation
// conversions.
//
// The dot products follow the reference's x86 SIMD schedule (ggml_vec_dot_f32/_f16/_bf16
// with 256-bit vectors): four accumulators of 8 f32 lanes over steps of 32 elements, the
// four combined as (a0 + a2) + (a1 + a3), then a fixed horizontal sum; the elements past
// the last whole step are added one by one afterwards (in f32 for F32, in f64 for F16 and
// BF16, as the reference does). F32 and F16 accumulate with FMA (F16 products are exact in
// f32, so FMA equals multiply-then-add there); BF16 multiplies then adds, as the reference's
// AVX2 path does (a BF16 product can underflow in f32, where FMA would differ).
//
// A tile computes R weight rows x T tokens; every output keeps its own four accumulators
// and goes through the same instructions in the same order as the 1x1 case, which is
// vec_dot, so each tile output equals vec_dot bit for bit.
#include <immintrin.h>

#include <cstddef>
#include <cstdint>
#include <cstring>

#include "base/tensor_type.h"
#include "kernels/simd/simd_table.h"

#pragma GCC push_options
#pragma GCC target("avx2,fma,f16c")

#include "kernels/simd/avx2_util.h"

namespace hearth::kernels::simd {
namespace {

constexpr int kStep = 32;  // elements per step: four vectors of 8 lanes

// ---- row formats: 8 elements widened to f32 lanes, and one element for the tails ----

struct F32Row {
  static constexpr int kBytes = 4;
  static __m256 load8(const uint8_t* p) {
    return _mm256_loadu_ps(reinterpret_cast<const float*>(p));
  }
  static float load1(const uint8_t* p) {
    float f = 0.0f;
    std::memcpy(&f, p, 4);
    return f;
  }
};

struct F16Row {
  static constexpr int kBytes = 2;
  static __m256 load8(const uint8_t* p) {
    return _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p)));
  }
  static float load1(const uint8_t* p) {
    uint16_t h = 0;
    std::memcpy(&h, p, 2);
    return _cvtsh_ss(h);
  }
};

struct BF16Row {
  static constexpr int kBytes = 2;
  static __m256 load8(const uint8_t* p) {
    const __m256i wide =
        _mm256_cvtepu16_epi32(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p)));
    return _mm256_castsi256_ps(_mm256_slli_epi32(wide, 16));
  }
  static float load1(const uint8_t* p) {
    uint16_t h = 0;
    std::memcpy(&h, p, 2);
    const uint32_t bits = static_cast<uint32_t>(h) << 16;
    float f = 0.0f;
    std::memcpy(&f, &bits, 4);
    return f;
  }
};

// ---- the per-type accumulate step and final reduction ----

// (a0 + a2) + (a1 + a3), then the two 128-bit halves, then two horizontal adds
// (GGML_F32x8_REDUCE).
float reduce_hadd(const __m256* a) {
  const __m256 s = _mm256_add_ps(_mm256_add_ps(a[0], a[2]), _mm256_add_ps(a[1], a[3]));
  const __m128 t0 = _mm_add_ps(_mm256_castps256_ps128(s), _mm256_extractf128_ps(s, 1));
  const __m128 t1 = _mm_hadd_ps(t0, t0);
  return _mm_cvtss_f32(_mm_hadd_ps(t1, t1));
}

// As reduce_hadd, but the last four lanes are summed as (g0 + g2) + (g1 + g3), the order of
// the reference's AVX2 BF16 dot product.
float reduce_movehl(const __m256* a) {
  const __m256 s = _mm256_add_ps(_mm256_add_ps(a[0], a[2]), _mm256_add_ps(a[1], a[3]));
  __m128 g = _mm_add_ps(_mm256_extractf128_ps(s, 1), _mm256_castps256_ps128(s));
  g = _mm_add_ps(g, _mm_movehl_ps(g, g));
  g = _mm_add_ss(g, _mm_movehdup_ps(g));
  return _mm_cvtss_f32(g);
}

struct F32Dot {
  using Row = F32Row;
  static __m256 step(__m256 acc, __m256 w, __m256 x) { return _mm256_fmadd_ps(w, x, acc); }
  // f32 tail: one fused multiply-add per element onto the reduced sum.
  static float finish(const __m256* acc, const uint8_t* w, const uint8_t* x, int64_t i, int64_t n) {
    float sum = reduce_hadd(acc);
    for (; i < n; ++i) {
      const __m128 p = _mm_set_ss(Row::load1(w + Row::kBytes * i));
      const __m128 q = _mm_set_ss(Row::load1(x + Row::kBytes * i));
      sum = _mm_cvtss_f32(_mm_fmadd_ss(p, q, _mm_set_ss(sum)));
    }
    return sum;
  }
};

// f64 tail of exact f32 products onto the reduced sum (F16 and BF16).
template <class Row>
float finish_f64(float reduced, const uint8_t* w, const uint8_t* x, int64_t i, int64_t n) {
  double sum = static_cast<double>(reduced);
  for (; i < n; ++i) {
    const float p = Row::load1(w + Row::kBytes * i) * Row::load1(x + Row::kBytes * i);
    sum += static_cast<double>(p);
  }
  return static_cast<float>(sum);
}

struct F16Dot {
  using Row = F16Row;
  static __m256 step(__m256 acc, __m256 w, __m256 x) { return _mm256_fmadd_ps(w, x, acc); }
  static float finish(const __m256* acc, const uint8_t* w, const uint8_t* x, int64_t i, int64_t n) {
    return finish_f64<Row>(reduce_hadd(acc), w, x, i, n);
  }
};

struct BF16Dot {
  using Row = BF16Row;
  static __m256 step(__m256 acc, __m256 w, __m256 x) {
    return _mm256_add_ps(_mm256_mul_ps(w, x), acc);
  }
  static float finish(const __m256* acc, const uint8_t* w, const uint8_t* x, int64_t i, int64_t n) {
    return finish_f64<Row>(reduce_movehl(acc), w, x, i, n);
  }
};

// ---- the tile body: R rows x T tokens, each output with its own four accumulators ----

template <class Dot, int R, int T>
void dot_tile(const uint8_t* w, size_t w_stride, const uint8_t* x, size_t x_stride, int64_t n,
              float* y, size_t y_stride) {
  using Row = typename Dot::Row;
  __m256 acc[R][T][4];
  for (int r = 0; r < R; ++r)
    for (int t = 0; t < T; ++t)
      for (int j = 0; j < 4; ++j) acc[r][t][j] = _mm256_setzero_ps();
  const int64_t np = n & ~static_cast<int64_t>(kStep - 1);
  for (int64_t i = 0; i < np; i += kStep) {
    for (int j = 0; j < 4; ++j) {
      const size_t off = static_cast<size_t>(i + 8 * j) * Row::kBytes;
      __m256 wv[R];
      for (int r = 0; r < R; ++r) wv[r] = Row::load8(w + static_cast<size_t>(r) * w_stride + off);
      for (int t = 0; t < T; ++t) {
        const __m256 xv = Row::load8(x + static_cast<size_t>(t) * x_stride + off);
        for (int r = 0; r < R; ++r) acc[r][t][j] = Dot::step(acc[r][t][j], wv[r], xv);
      }
    }
  }
  for (int t = 0; t < T; ++t)
    for (int r = 0; r < R; ++r)
      y[static_cast<size_t>(t) * y_stride + static_cast<size_t>(r)] =
          Dot::finish(acc[r][t], w + static_cast<size_t>(r) * w_stride,
                      x + static_cast<size_t>(t) * x_stride, np, n);
}

// Two rows x two tokens: each loaded weight vector serves two tokens and each activation
// vector two rows, with 16 accumulators.
constexpr int kTileRows = 2;
constexpr int kTileTokens = 2;

// The tile of exactly a.n_rows x a.n_tokens (at most R x T).
template <class Dot, int R, int T>
void tile_of(const TileArgs& a) {
  if constexpr (R > 1) {
    if (a.n_rows < R) return tile_of<Dot, R - 1, T>(a);
  }
  if constexpr (T > 1) {
    if (a.n_tokens < T) return tile_of<Dot, R, T - 1>(a);
  }
  dot_tile<Dot, R, T>(a.w, a.w_stride, a.x, a.x_stride, a.n, a.y, a.y_stride);
}

template <class Dot>
void tile(const TileArgs& a) {
  tile_of<Dot, kTileRows, kTileTokens>(a);
}

template <class Dot>
float vec_dot(const void* x, const void* y, int64_t n) {
  float out = 0.0f;
  dot_tile<Dot, 1, 1>(static_cast<const uint8_t*>(x), 0, static_cast<const uint8_t*>(y), 0, n, &out,
                      0);
  return out;
}

// The registered kernels, as plain functions defined inside the target region.
float vec_dot_f32(const void* x, const void* y, int64_t n) {
  return vec_dot<F32Dot>(x, y, n);
}
float vec_dot_f16(const void* x, const void* y, int64_t n) {
  return vec_dot<F16Dot>(x, y, n);
}
float vec_dot_bf16(const void* x, const void* y, int64_t n) {
  return vec_dot<BF16Dot>(x, y, n);
}
void tile_f32(const TileArgs& a) {
  tile<F32Dot>(a);
}
void tile_f16(const TileArgs& a) {
  tile<F16Dot>(a);
}
void tile_bf16(const TileArgs& a) {
  tile<BF16Dot>(a);
}

// ---- activation conversions ----

void from_float_f16(const float* src, void* dst, int64_t n) {
  auto* out = static_cast<uint8_t*>(dst);
  int64_t i = 0;
  for (; i + 8 <= n; i += 8) {
    _mm_storeu_si128(reinterpret_cast<__m128i*>(out + 2 * i),
                     avx2::f16_round8(_mm256_loadu_ps(src + i)));
  }
  if (i < n) {
    float in[8] = {0.0f, 0.0f, 0.0f, 0.0f, 0.0f, 0.0f, 0.0f, 0.0f};
    uint16_t h[8];
    const auto rest = static_cast<size_t>(n - i);
    std::memcpy(in, src + i, rest * sizeof(float));
    _mm_storeu_si128(reinterpret_cast<__m128i*>(h), avx2::f16_round8(_mm256_loadu_ps(in)));
    std::memcpy(out + 2 * i, h, rest * 2);
  }
}

void to_float_f16(const void* src, float* dst, int64_t n) {
  const auto* in = static_cast<const uint16_t*>(src);
  int64_t i = 0;
  for (; i + 8 <= n; i += 8)
    _mm256_storeu_ps(dst + i,
                     _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(in + i))));
  for (; i < n; ++i) dst[i] = _cvtsh_ss(in[i]);
}

// Eight f32 to bf16 in the low halves of 32-bit lanes: round to nearest even by adding
// 0x7FFF plus the kept lowest bit; NaN keeps its top bits and is made quiet.
__m256i bf16_round8(__m256 v) {
  const __m256i x = _mm256_castps_si256(v);
  const __m256i abs = _mm256_and_si256(x, _mm256_set1_epi32(0x7FFFFFFF));
  const __m256i nan = _mm256_cmpgt_epi32(abs, _mm256_set1_epi32(0x7F800000));
  const __m256i hi = _mm256_srli_epi32(x, 16);
  const __m256i lsb = _mm256_and_si256(hi, _mm256_set1_epi32(1));
  const __m256i bias = _mm256_add_epi32(_mm256_set1_epi32(0x7FFF), lsb);
  const __m256i rounded = _mm256_srli_epi32(_mm256_add_epi32(x, bias), 16);
  const __m256i quiet = _mm256_or_si256(hi, _mm256_set1_epi32(64));
  return _mm256_blendv_epi8(rounded, quiet, nan);
}

// Sixteen f32 to bf16, in order.
__m256i bf16_round16(const float* src) {
  const __m256i lo = bf16_round8(_mm256_loadu_ps(src));
  const __m256i hi = bf16_round8(_mm256_loadu_ps(src + 8));
  // packus interleaves 128-bit lanes: [lo0-3 hi0-3 lo4-7 hi4-7] -> reorder the quarters.
  return _mm256_permute4x64_epi64(_mm256_packus_epi32(lo, hi), 0xD8);
}

void from_float_bf16(const float* src, void* dst, int64_t n) {
  auto* out = static_cast<uint8_t*>(dst);
  int64_t i = 0;
  for (; i + 16 <= n; i += 16) {
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(out + 2 * i), bf16_round16(src + i));
  }
  if (i < n) {
    float in[16];
    uint16_t h[16];
    const auto rest = static_cast<size_t>(n - i);
    std::memset(in, 0, sizeof(in));
    std::memcpy(in, src + i, rest * sizeof(float));
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(h), bf16_round16(in));
    std::memcpy(out + 2 * i, h, rest * 2);
  }
}

}  // namespace
}  // namespace hearth::kernels::simd

#pragma GCC pop_options

namespace hearth::kernels::simd {

void register_avx2_float(Table& t) {
  Entry& f32 = entry(t, TensorType::kF32);
  f32.vec_dot = vec_dot_f32;
  f32.tile = tile_f32;
  f32.max_rows = kTileRows;
  f32.max_tokens = kTileTokens;

  Entry& f16 = entry(t, TensorType::kF16);
  f16.vec_dot = vec_dot_f16;
  f16.tile = tile_f16;
  f16.max_rows = kTileRows;
  f16.max_tokens = kTileTokens;
  f16.from_float = from_float_f16;
  f16.to_float = to_float_f16;

  Entry& bf16 = entry(t, TensorType::kBF16);
  bf16.vec_dot = vec_dot_bf16;
  bf16.tile = tile_bf16;
  bf16.max_rows = kTileRows;
  bf16.max_tokens = kTileTokens;
  bf16.from_float = from_float_bf16;
}

}  // namespace hearth::kernels::simd
