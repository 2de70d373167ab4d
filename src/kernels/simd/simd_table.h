// The SIMD kernels of one instruction-set level, per weight type, as the SIMD source files
// register them (internal to hearth_kernels and its tests).
//
// A weight type's SIMD set is a dot-product *tile*: the outputs of up to `max_rows`
// consecutive weight rows against up to `max_tokens` activation rows, computed together
// so that each loaded weight block serves several tokens and each activation block several
// rows. The contract that makes results independent of batch composition:
//   every output of a tile is bit-identical to `vec_dot` of the same level on that row and
//   token, whatever n_rows/n_tokens the tile was called with
// (each output owns its accumulator, updated by the same instructions in the same block
// order, and reduced the same way). A SIMD `vec_dot` may round differently from the scalar
// reference (lane order, FMA); it must depend on n alone.
//
// Activation conversion (`from_float` of the activation types F16, BF16, Q8_0, Q8_1, Q8_K)
// is part of the numeric contract with the reference engine: a SIMD version must give the
// reference's bytes exactly.
//
// Source files compiled for a level must not instantiate standard-library templates or
// other inline functions shared with baseline code inside the target region (the linker
// could keep the AVX copy for every caller): includes come first, then
// `#pragma GCC target`, then plain C-style kernels in an anonymous namespace.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>

#include "base/tensor_type.h"

namespace hearth::kernels::simd {

struct TileArgs {
  const uint8_t* w = nullptr;  // first weight row
  size_t w_stride = 0;         // bytes between weight rows
  const uint8_t* x = nullptr;  // first activation row, in the weight type's vec_dot_type
  size_t x_stride = 0;         // bytes between activation rows
  int64_t n = 0;               // elements per row (a multiple of the block size)
  float* y = nullptr;          // y[t * y_stride + r]: token t, row r
  size_t y_stride = 0;         // floats between the output rows of two tokens
  int n_rows = 0;              // 1..max_rows
  int n_tokens = 0;            // 1..max_tokens
};

using TileFn = void (*)(const TileArgs& args);
using VecDotFn = float (*)(const void* x, const void* y, int64_t n);
using ConvertFn = void (*)(const float* src, void* dst, int64_t n);
using DequantizeFn = void (*)(const void* src, float* dst, int64_t n);

struct Entry {
  VecDotFn vec_dot = nullptr;  // one weight row · one activation row
  TileFn tile = nullptr;       // see above; null: the driver calls vec_dot per output
  int max_rows = 1;
  int max_tokens = 1;
  ConvertFn from_float = nullptr;  // activation types only; bit-identical to the reference
  // F16 and BF16 only: their rows widened to f32 (exact), and rounded from f32 (the same
  // rounding as the reference's encoder, which for these types is from_float).
  DequantizeFn to_float = nullptr;
};

using Table = std::array<Entry, kTensorTypeIdLimit>;

inline Entry& entry(Table& t, TensorType type) {
  return t[static_cast<uint32_t>(type)];
}

// Each fills the entries of its types; defined in simd/<level>_<family>.cpp.
void register_avx2_legacy(Table& t);  // Q4_0 Q4_1 Q5_0 Q5_1 Q8_0 IQ4_NL MXFP4; Q8_0/Q8_1 from_float
void register_avx2_kquants(Table& t);  // Q2_K Q3_K Q4_K Q5_K Q6_K IQ4_XS; Q8_K from_float
// AVX-512 VNNI tiles of Q4_0, Q5_0 and Q8_0 (each output equals the AVX2 vec_dot).
void register_avx512_legacy(Table& t);
// AVX-512 VNNI tiles of Q4_K and Q5_K (each output equals the AVX2 vec_dot).
void register_avx512_kquants(Table& t);
void register_avx2_float(Table& t);  // F32 F16 BF16; F16/BF16 from_float

}  // namespace hearth::kernels::simd
