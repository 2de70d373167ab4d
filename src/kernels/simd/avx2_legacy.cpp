// AVX2 kernels of the 32-element block formats (Q4_0 Q4_1 Q5_0 Q5_1 Q8_0 IQ4_NL MXFP4) and the
// Q8_0/Q8_1 activation quantizers (quantization.md §3, §4).
//
// Dot products: per block, the codes are unpacked to 32 bytes and multiplied with the
// activation bytes by vpmaddubsw (unsigned x signed, pairs to int16) and vpmaddwd (pairs to
// int32), giving 8 int32 lanes of 4 products each: exactly the lanes of the reference
// engine's AVX2 kernels. Each lane is converted to f32 and added to an f32 accumulator by
// one FMA with the f32 product of the two block scales; the 8 lanes are summed at the end
// in a fixed order. So the f32 schedule is the reference engine's AVX2 one.
// - Q4_0/Q5_0 (codes u - 8 / u - 16): vpmaddubsw(u, y) - offset * (y0 + y1) per int16
//   pair, the offset term computed once per activation block and shared by all rows.
// - Q4_1/Q5_1 (unsigned codes): vpmaddubsw(u, y) directly, and the min term m * s summed
//   in a scalar f32 per output and added after the lanes.
// - Q8_0 (signed codes x): the sign trick, vpmaddubsw(|x|, sign(y, x)).
// - IQ4_NL (code values x > -128 by table lookup): vpmaddubsw(|y|, sign(x, y)), with |y|
//   once per activation block.
// - MXFP4: IQ4_NL's arithmetic with the E2M1 code book and the block's E8M0 scale.
// - IQ4_NL and MXFP4 alternate two accumulators over even and odd blocks and takes an odd last
//   block in scalar f32 after the lanes, as the reference engine does.
//
// A tile of R rows x T tokens keeps one accumulator (set) per output and runs, for every
// output, the instructions of the 1 x 1 case in the same block order: vec_dot is the 1 x 1
// instantiation of the same kernel template, so every tile output equals vec_dot.
#include <immintrin.h>

#include <cstdint>
#include <cstring>

#include "base/half.h"
#include "kernels/block_access.h"
#include "kernels/block_formats.h"
#include "kernels/simd/simd_table.h"

namespace hearth::kernels::simd {
namespace {

// Baseline code: the reference's f32 -> f16 rounding, called from the AVX2 quantizers
// below (two stores per block).
uint16_t half_bits(float f) {
  return f32_to_f16(f);
}

}  // namespace
}  // namespace hearth::kernels::simd

#pragma GCC push_options
#pragma GCC target("avx2,fma,f16c")

#include "kernels/simd/avx2_util.h"

namespace hearth::kernels::simd {
namespace {

// ---------------------------------------------------------------------------------------
// Small helpers.

inline float load_f16(const float* f16, const uint8_t* p) {
  return f16[avx2::load_u16(p)];
}

inline __m256 broadcast_f16(const float* f16, const uint8_t* p) {
  return _mm256_broadcast_ss(f16 + avx2::load_u16(p));
}

inline __m128i load16(const void* p) {
  return _mm_loadu_si128(static_cast<const __m128i*>(p));
}

inline __m256i load32(const void* p) {
  return _mm256_loadu_si256(static_cast<const __m256i*>(p));
}

inline int hsum_i32(__m256i v) {
  __m128i s = _mm_add_epi32(_mm256_castsi256_si128(v), _mm256_extracti128_si256(v, 1));
  s = _mm_add_epi32(s, _mm_unpackhi_epi64(s, s));
  s = _mm_add_epi32(s, _mm_shuffle_epi32(s, 1));
  return _mm_cvtsi128_si32(s);
}

// 0x10 in byte e where bit e of the little-endian qh word is set, else 0.
inline __m256i unpack_fifth_bits(const uint8_t* qh) {
  uint32_t bits = 0;
  std::memcpy(&bits, qh, sizeof(bits));
  const __m256i spread =
      _mm256_shuffle_epi8(_mm256_set1_epi32(static_cast<int>(bits)),
                          _mm256_setr_epi64x(0x0000000000000000, 0x0101010101010101,
                                             0x0202020202020202, 0x0303030303030303));
  const __m256i select = _mm256_set1_epi64x(static_cast<int64_t>(0x8040201008040201));
  const __m256i set = _mm256_cmpeq_epi8(_mm256_and_si256(spread, select), select);
  return _mm256_and_si256(set, _mm256_set1_epi8(0x10));
}

// ---------------------------------------------------------------------------------------
// The weight formats. Each names its block size, its activation block (Q8_0: d, qs at 2;
// Q8_1: d, s, qs at 4), how its 32 codes are unpacked into bytes and how vpmaddubsw
// (unsigned x signed) multiplies them:
//   kUnsigned: codes u >= 0 as they are; the value is u - kOffset, or u plus the min term
//     m * s when kMin (m at byte 2);
//   kSignByCodes: signed codes x, as |x| times sign(y, x) (x may be -128, y never is);
//   kSignByAct: signed codes x > -128, as |y| times sign(x, y), |y| shared by the rows.
enum class Mul { kUnsigned, kSignByCodes, kSignByAct };

struct Q4_0 {
  static constexpr int kBytes = 18, kActBytes = 34, kOffset = 8;
  static constexpr Mul kMul = Mul::kUnsigned;
  static constexpr bool kMin = false, kTwoAcc = false;
  static __m256i codes(const uint8_t* b) { return avx2::unpack_nibbles(b + 2); }
};

struct Q4_1 {
  static constexpr int kBytes = 20, kActBytes = 36, kOffset = 0;
  static constexpr Mul kMul = Mul::kUnsigned;
  static constexpr bool kMin = true, kTwoAcc = false;
  static __m256i codes(const uint8_t* b) { return avx2::unpack_nibbles(b + 4); }
};

struct Q5_0 {
  static constexpr int kBytes = 22, kActBytes = 34, kOffset = 16;
  static constexpr Mul kMul = Mul::kUnsigned;
  static constexpr bool kMin = false, kTwoAcc = false;
  static __m256i codes(const uint8_t* b) {
    return _mm256_or_si256(avx2::unpack_nibbles(b + 6), unpack_fifth_bits(b + 2));
  }
};

struct Q5_1 {
  static constexpr int kBytes = 24, kActBytes = 36, kOffset = 0;
  static constexpr Mul kMul = Mul::kUnsigned;
  static constexpr bool kMin = true, kTwoAcc = false;
  static __m256i codes(const uint8_t* b) {
    return _mm256_or_si256(avx2::unpack_nibbles(b + 8), unpack_fifth_bits(b + 4));
  }
};

struct Q8_0 {
  static constexpr int kBytes = 34, kActBytes = 34, kOffset = 0;
  static constexpr Mul kMul = Mul::kSignByCodes;
  static constexpr bool kMin = false, kTwoAcc = false;
  static __m256i codes(const uint8_t* b) { return load32(b + 2); }
};

// 32 nibble codes (16 bytes at q) mapped through a 16-entry int8 code book.
inline __m256i code_book_lookup(const int8_t* book, const uint8_t* q) {
  const __m256i values = _mm256_broadcastsi128_si256(load16(book));
  return _mm256_shuffle_epi8(values, avx2::unpack_nibbles(q));
}

struct Iq4Nl {
  static constexpr int kBytes = 18, kActBytes = 34, kOffset = 0;
  static constexpr Mul kMul = Mul::kSignByAct;  // code values -127..113
  static constexpr bool kMin = false, kTwoAcc = true;
  static __m256i codes(const uint8_t* b) { return code_book_lookup(kIq4nlValues, b + 2); }
};

struct Mxfp4 {
  static constexpr int kBytes = 17, kActBytes = 34, kOffset = 0;
  static constexpr Mul kMul = Mul::kSignByAct;  // code values -12..12
  static constexpr bool kMin = false, kTwoAcc = true;
  static __m256i codes(const uint8_t* b) { return code_book_lookup(kFp4Values, b + 1); }
  static float scale(const float* /*f16*/, const uint8_t* b) { return e8m0_half(b[0]); }
};

// A weight block's scale: the f16 at its start, or the type's own (MXFP4's E8M0 byte).
template <class K>
inline float weight_scale(const float* f16, const uint8_t* blk) {
  if constexpr (requires { K::scale(f16, blk); }) {
    return K::scale(f16, blk);
  } else {
    return load_f16(f16, blk);
  }
}

// ---------------------------------------------------------------------------------------
// One block of one activation row (shared by the rows of a tile) and of one weight row
// (shared by the tokens).

struct TokBlock {
  __m256i q;     // the 32 activation bytes
  __m256i abs;   // kSignByAct: |q|
  __m256i corr;  // kOffset * (q[2k] + q[2k+1]) per int16 pair
  __m256 d;      // the block scale, broadcast
  float s;       // Q8_1: d * sum(q)
};

struct RowBlock {
  __m256i codes;
  __m256i abs;  // kSignByCodes: |codes|
  __m256 d;     // the block scale, broadcast
  float m;      // kMin: the block minimum
};

template <class K>
inline TokBlock load_tok(const float* f16, const uint8_t* blk) {
  TokBlock t{};
  t.q = load32(blk + (K::kMin ? 4 : 2));
  t.d = broadcast_f16(f16, blk);
  if constexpr (K::kMul == Mul::kSignByAct) t.abs = _mm256_sign_epi8(t.q, t.q);
  if constexpr (K::kOffset != 0) {
    t.corr = _mm256_maddubs_epi16(_mm256_set1_epi8(K::kOffset), t.q);
  }
  if constexpr (K::kMin) t.s = load_f16(f16, blk + 2);
  return t;
}

template <class K>
inline RowBlock load_row(const float* f16, const uint8_t* blk) {
  RowBlock r{};
  r.codes = K::codes(blk);
  if constexpr (K::kMul == Mul::kSignByCodes) r.abs = _mm256_sign_epi8(r.codes, r.codes);
  r.d = _mm256_set1_ps(weight_scale<K>(f16, blk));
  if constexpr (K::kMin) r.m = load_f16(f16, blk + 2);
  return r;
}

// The 8 int32 lanes (4 code x activation products each) of one block pair.
template <class K>
inline __m256i block_lanes(const RowBlock& r, const TokBlock& t) {
  __m256i p16;
  if constexpr (K::kMul == Mul::kSignByCodes) {
    p16 = _mm256_maddubs_epi16(r.abs, _mm256_sign_epi8(t.q, r.codes));
  } else if constexpr (K::kMul == Mul::kSignByAct) {
    p16 = _mm256_maddubs_epi16(t.abs, _mm256_sign_epi8(r.codes, t.q));
  } else {
    p16 = _mm256_maddubs_epi16(r.codes, t.q);
    if constexpr (K::kOffset != 0) p16 = _mm256_sub_epi16(p16, t.corr);
  }
  return _mm256_madd_epi16(p16, _mm256_set1_epi16(1));
}

// acc += (dx * dy) * lanes; sum_m += m * s.
template <class K>
inline void accumulate(const RowBlock& r, const TokBlock& t, __m256& acc, float& sum_m) {
  const __m256 lanes = _mm256_cvtepi32_ps(block_lanes<K>(r, t));
  acc = _mm256_fmadd_ps(_mm256_mul_ps(r.d, t.d), lanes, acc);
  if constexpr (K::kMin) sum_m += r.m * t.s;
}

// ---------------------------------------------------------------------------------------
// The tile kernel: R weight rows x T activation rows, all blocks.

// TileArgs without its default member initializers (no constructor is ever called here).
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

// Block i of every row and token, into `acc` (and `sum_m`).
template <class K, int R, int T>
inline void tile_block(const Args& a, int64_t i, __m256 (&acc)[R][T], float (&sum_m)[R][T]) {
  TokBlock tok[T];
#pragma GCC unroll 8
  for (int t = 0; t < T; ++t) {
    tok[t] = load_tok<K>(a.f16, a.x + static_cast<size_t>(t) * a.x_stride + i * K::kActBytes);
  }
#pragma GCC unroll 8
  for (int r = 0; r < R; ++r) {
    const RowBlock row =
        load_row<K>(a.f16, a.w + static_cast<size_t>(r) * a.w_stride + i * K::kBytes);
#pragma GCC unroll 8
    for (int t = 0; t < T; ++t) accumulate<K>(row, tok[t], acc[r][t], sum_m[r][t]);
  }
}

// A matrix-vector product streams the weights, R rows at a time; each row alone is a short
// stream (a few dozen cache lines) that the hardware prefetchers pick up late. So while a
// pass runs over rows [0, R), the R rows after it (next in memory when the rows are
// contiguous, as in a weight matrix) are prefetched, the same number of bytes per block.
// A hint only: addresses past the matrix are never read.
template <class K, int R>
inline void prefetch_next_rows(const Args& a, int64_t i) {
  constexpr int kBytesPerBlock = R * K::kBytes;
  // Integer arithmetic: the address may lie past the end of the weights.
  const uintptr_t p = reinterpret_cast<uintptr_t>(a.w) + static_cast<uintptr_t>(R) * a.w_stride +
                      static_cast<uintptr_t>(i) * kBytesPerBlock;
#pragma GCC unroll 8
  for (int k = 0; k <= kBytesPerBlock / 64; ++k) {
    _mm_prefetch(reinterpret_cast<const char*>(p + 64 * k), _MM_HINT_T0);
  }
}

// IQ4_NL's odd last block: (dy * dx) * isum in scalar f32.
template <class K>
inline float tail_block(const float* f16, const uint8_t* w, const uint8_t* x) {
  const RowBlock r = load_row<K>(f16, w);
  const TokBlock t = load_tok<K>(f16, x);
  const float d = load_f16(f16, x) * weight_scale<K>(f16, w);
  return d * static_cast<float>(hsum_i32(block_lanes<K>(r, t)));
}

template <class K, int R, int T>
void tile_kernel(const Args& a) {
  const int64_t nb = a.n / kQK;
  __m256 acc[R][T], acc_odd[R][T];  // acc_odd: IQ4_NL's odd blocks
  float sum_m[R][T];
#pragma GCC unroll 8
  for (int r = 0; r < R; ++r) {
#pragma GCC unroll 8
    for (int t = 0; t < T; ++t) {
      acc[r][t] = _mm256_setzero_ps();
      acc_odd[r][t] = _mm256_setzero_ps();
      sum_m[r][t] = 0.0f;
    }
  }
  int64_t i = 0;
  if constexpr (K::kTwoAcc) {
    for (; i + 1 < nb; i += 2) {
      if constexpr (T == 1) prefetch_next_rows<K, R>(a, i);
      tile_block<K, R, T>(a, i, acc, sum_m);
      if constexpr (T == 1) prefetch_next_rows<K, R>(a, i + 1);
      tile_block<K, R, T>(a, i + 1, acc_odd, sum_m);
    }
  } else {
    for (; i < nb; ++i) {
      if constexpr (T == 1) prefetch_next_rows<K, R>(a, i);
      tile_block<K, R, T>(a, i, acc, sum_m);
    }
  }
#pragma GCC unroll 8
  for (int r = 0; r < R; ++r) {
#pragma GCC unroll 8
    for (int t = 0; t < T; ++t) {
      float v = 0.0f;
      if constexpr (K::kTwoAcc) {
        v = avx2::hsum8(_mm256_add_ps(acc[r][t], acc_odd[r][t]));
        if (i < nb) {
          v += tail_block<K>(a.f16, a.w + static_cast<size_t>(r) * a.w_stride + i * K::kBytes,
                             a.x + static_cast<size_t>(t) * a.x_stride + i * K::kActBytes);
        }
      } else {
        v = avx2::hsum8(acc[r][t]);
      }
      if constexpr (K::kMin) v += sum_m[r][t];
      a.y[static_cast<size_t>(t) * a.y_stride + static_cast<size_t>(r)] = v;
    }
  }
}

// ---------------------------------------------------------------------------------------
// Dispatch over tile shapes: up to 4 rows x 2 tokens, 8 accumulators (16 for IQ4_NL's
// pairs), which leaves registers for the unpacked codes and the activation blocks.

constexpr int kMaxRows = 4;
constexpr int kMaxTokens = 2;

template <class K, int R>
void tile_rows(const Args& a, int n_tokens) {
  if (n_tokens == 2) return tile_kernel<K, R, 2>(a);
  tile_kernel<K, R, 1>(a);
}

template <class K>
void tile(const TileArgs& args) {
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

template <class K>
float vec_dot(const void* x, const void* y, int64_t n) {
  float out = 0.0f;
  // w_stride: the prefetch of the "next rows" reads the row after this one in memory, the
  // next one in a scan over consecutive rows (attention over a KV cache).
  const Args a = {static_cast<const uint8_t*>(x),
                  static_cast<size_t>(n / kQK * K::kBytes),
                  static_cast<const uint8_t*>(y),
                  0,
                  n,
                  &out,
                  0,
                  f16_to_f32_table()};
  tile_kernel<K, 1, 1>(a);
  return out;
}

// ---------------------------------------------------------------------------------------
// Activation quantizers, byte for byte the reference's (act_quant_ref.cpp): amax ignores
// NaNs (vmaxps returns its second operand when the first is NaN), d = amax / 127,
// id = 127 / amax (0 for an all-zero block), codes = vroundps (nearest even) of x * id,
// vcvtps2dq (NaN and out-of-range to INT_MIN) and saturating packs.

// The codes of one block into `q`; returns d before its f16 rounding.
inline float quantize_block_q8(const float* x, uint8_t* q, __m256i* codes) {
  __m256 v[4];
  __m256 amax = _mm256_setzero_ps();
  const __m256 sign = _mm256_set1_ps(-0.0f);
  for (int k = 0; k < 4; ++k) {
    v[k] = _mm256_loadu_ps(x + 8 * k);
    amax = _mm256_max_ps(_mm256_andnot_ps(sign, v[k]), amax);
  }
  __m128 m = _mm_max_ps(_mm256_extractf128_ps(amax, 1), _mm256_castps256_ps128(amax));
  m = _mm_max_ps(m, _mm_movehl_ps(m, m));
  m = _mm_max_ss(m, _mm_movehdup_ps(m));
  const float max_abs = _mm_cvtss_f32(m);
  const float d = max_abs / 127.0f;
  const __m256 id = _mm256_set1_ps(max_abs != 0.0f ? 127.0f / max_abs : 0.0f);
  __m256i i32[4];
  for (int k = 0; k < 4; ++k) {
    const __m256 r =
        _mm256_round_ps(_mm256_mul_ps(v[k], id), _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
    i32[k] = _mm256_cvtps_epi32(r);
  }
  // The packs interleave 128-bit lanes; the permutation restores element order.
  const __m256i i16a = _mm256_packs_epi32(i32[0], i32[1]);
  const __m256i i16b = _mm256_packs_epi32(i32[2], i32[3]);
  const __m256i i8 = _mm256_permutevar8x32_epi32(_mm256_packs_epi16(i16a, i16b),
                                                 _mm256_setr_epi32(0, 4, 1, 5, 2, 6, 3, 7));
  _mm256_storeu_si256(reinterpret_cast<__m256i*>(q), i8);
  *codes = i8;
  return d;
}

void store_half(uint8_t* p, float f) {
  const uint16_t h = half_bits(f);
  std::memcpy(p, &h, sizeof(h));
}

void from_float_q8_0(const float* src, void* dst, int64_t n) {
  auto* out = static_cast<uint8_t*>(dst);
  for (int64_t i = 0; i < n / kQK; ++i, src += kQK, out += sizeof(BlockQ8_0)) {
    __m256i codes;
    store_half(out, quantize_block_q8(src, out + 2, &codes));
  }
}

void from_float_q8_1(const float* src, void* dst, int64_t n) {
  auto* out = static_cast<uint8_t*>(dst);
  for (int64_t i = 0; i < n / kQK; ++i, src += kQK, out += sizeof(BlockQ8_1)) {
    __m256i codes;
    const float d = quantize_block_q8(src, out + 4, &codes);
    const __m256i pairs = _mm256_maddubs_epi16(_mm256_set1_epi8(1), codes);
    const int sum = hsum_i32(_mm256_madd_epi16(pairs, _mm256_set1_epi16(1)));
    store_half(out, d);
    store_half(out + 2, d * static_cast<float>(sum));
  }
}

}  // namespace
}  // namespace hearth::kernels::simd

#pragma GCC pop_options

namespace hearth::kernels::simd {
namespace {

template <class K>
Entry weight_entry() {
  return Entry{vec_dot<K>, tile<K>, kMaxRows, kMaxTokens, nullptr};
}

}  // namespace

void register_avx2_legacy(Table& t) {
  entry(t, TensorType::kQ4_0) = weight_entry<Q4_0>();
  entry(t, TensorType::kQ4_1) = weight_entry<Q4_1>();
  entry(t, TensorType::kQ5_0) = weight_entry<Q5_0>();
  entry(t, TensorType::kQ5_1) = weight_entry<Q5_1>();
  entry(t, TensorType::kQ8_0) = weight_entry<Q8_0>();
  entry(t, TensorType::kIQ4_NL) = weight_entry<Iq4Nl>();
  entry(t, TensorType::kMXFP4) = weight_entry<Mxfp4>();
  entry(t, TensorType::kQ8_0).from_float = from_float_q8_0;
  entry(t, TensorType::kQ8_1).from_float = from_float_q8_1;
}

}  // namespace hearth::kernels::simd
