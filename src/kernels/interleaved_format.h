// The bytes of the interleaved layouts (interleaved.h) and the arguments of their tile
// kernels. Internal to hearth_kernels and its tests.
//
// A matrix is n_rows / 16 groups, each holding its 16 rows' blocks one block index after the
// other: group g, block b at data + (g * n_blocks + b) * kBytes. Within a group block,
// "chunk" c of the codes is 16 x 4 bytes: 4 bytes of row 0, then row 1, ... row 15, so a
// 32-byte load is 4 bytes of each of 8 rows and a 64-byte load of all 16.
//
// Q4_0 (kBytes 288 = 16 x 18):
//   f16 d[16]                       the rows' block scales
//   u8  qs[4][16][4]                chunk c = bytes 4c..4c+3 of each row's qs: low nibbles
//                                   are elements 4c..4c+3, high nibbles 16+4c..16+4c+3
// Q8_0 (kBytes 544 = 16 x 34):
//   f16 d[16]
//   u8  qs[8][16][4]                chunk c = elements 4c..4c+3, stored as code + 128
//                                   (x xor 0x80) so VNNI multiplies them as unsigned
// Q4_K (kBytes 2368 = 16 x 148, per 256-element super-block):
//   f16 d[16], f16 dmin[16]
//   u8  sc[8][16]                   6-bit scale of sub-block j, per row
//   u8  mn[4][16][2]                mins of sub-blocks 2k and 2k+1, per row (a 16-bit pair
//                                   each once widened)
//   u8  qs[4][8][16][4]             pair k, chunk c = bytes 32k+4c..+3 of each row's qs: low
//                                   nibbles are elements 64k+4c.., high 64k+32+4c..
// Q6_K (kBytes 3360 = 16 x 210, per 256-element super-block):
//   f16 d[16]
//   i8  sc[8][16][2]                scales of sub-blocks 2p and 2p+1 (16 elements each), per row
//   per half h (128 elements), per chunk c (0..7), 192 bytes:
//     u8 qla[16][4], qlb[16][4], qh[16][4]   bytes 4c..4c+3 of each row's ql run 64h,
//                                   ql run 64h+32 and qh run 32h. With l = 4c..4c+3, group g
//                                   (0..3) of those bytes is element 128h + 32g + l: low 4 bits
//                                   from the low (g 0, 1) or high (g 2, 3) nibble of qla (g
//                                   even) or qlb (g odd), high 2 bits = qh bits 2g, 2g+1;
//                                   value = code - 32.
// Q4_1 (kBytes 320 = 16 x 20): f16 d[16], f16 m[16], u8 qs[4][16][4] as Q4_0.
// Q5_0 (kBytes 352 = 16 x 22): f16 d[16];
//   u8  qh[16][4]                   byte c of row r: the fifth bits of chunk c, bits 0..3 for
//                                   elements 4c..4c+3, bits 4..7 for 16+4c..16+4c+3
//   u8  qs[4][16][4]                as Q4_0; value = code - 16
// Q5_1 (kBytes 384 = 16 x 24): f16 d[16], f16 m[16], qh and qs as Q5_0; value = d * code + m.
// IQ4_NL (kBytes 288): Q4_0's bytes; a code indexes kIq4nlValues.
// Q5_K (kBytes 2880 = 16 x 180): Q4_K's fields, with the fifth bits before the codes (placed
// after them, a block's first pair of sub-blocks read its last lines before its first codes,
// and decode out of cache ran at half the bandwidth on AVX-512):
//   u8  qh[8][16][4]  at 320        chunk c = bytes 4c..4c+3 of each row's qh: element
//                                   64k+4c+e takes bit 2k of byte e, element 64k+32+4c+e bit
//                                   2k+1, as its fifth bit
//   u8  qs[4][8][16][4] at 832      as Q4_K's
// IQ4_XS (kBytes 2208 = 16 x 138, per 256-element super-block):
//   f16 d[16]
//   i8  sc[4][16][2]                ls - 32 of sub-blocks 2k and 2k+1, per row
//   u8  qs[8][4][16][4]             sub-block j, chunk c = bytes 16j+4c..+3 of each row's qs:
//                                   low nibbles are elements 32j+4c.., high 32j+16+4c..; a
//                                   code indexes kIq4nlValues
// F16 (kBytes 1024 = 16 x 32 x 2, per 32 columns): for each column pair p (0..15), 64 bytes:
//   f16 odd[16], even[16]           columns 2p+1 and 2p of the 16 rows
// BF16 (kBytes 1024): for each column pair p, 64 bytes:
//   u32 pair[16]                    row r's columns 2p (low half) and 2p+1 (high half), the
//                                   operand layout of vdpbf16ps
#pragma once

#include <cstddef>
#include <cstdint>

#include "base/tensor_type.h"
#include "base/thread_pool.h"
#include "kernels/cpu_level.h"
#include "kernels/matmul.h"

namespace hearth::kernels::interleaved {

inline constexpr int kRows = 16;
inline constexpr int kChunkBytes = kRows * 4;

// The offset of value j (0..) of row r in a field of paired bytes, [j / 2][16 rows][2]: the
// mins of Q4_K/Q5_K and the sub-block scales of Q6_K and IQ4_XS (a 16-bit pair per lane).
constexpr int paired_byte(int j, int r) {
  return (j / 2) * 2 * kRows + 2 * r + j % 2;
}

struct Q4_0Layout {
  static constexpr int kElements = 32;
  static constexpr int kScales = 0;  // f16 d[16]
  static constexpr int kCodes = 32;  // u8 qs[4][16][4]
  static constexpr int kBytes = 288;
};

struct Q8_0Layout {
  static constexpr int kElements = 32;
  static constexpr int kScales = 0;
  static constexpr int kCodes = 32;  // u8 qs[8][16][4], biased by 128
  static constexpr int kBytes = 544;
};

struct Q4_KLayout {
  static constexpr int kElements = 256;
  static constexpr int kScales = 0;      // f16 d[16]
  static constexpr int kMinScales = 32;  // f16 dmin[16]
  static constexpr int kSubScales = 64;  // u8 sc[8][16]
  static constexpr int kMins = 192;      // u8 mn[4][16][2]
  static constexpr int kCodes = 320;     // u8 qs[4][8][16][4]
  static constexpr int kBytes = 2368;
};

struct Q6_KLayout {
  static constexpr int kElements = 256;
  static constexpr int kScales = 0;      // f16 d[16]
  static constexpr int kSubScales = 32;  // i8 sc[8][16][2]
  static constexpr int kCodes = 288;     // [2 halves][8 chunks][qla, qlb, qh][16][4]
  static constexpr int kHalfBytes = 8 * 3 * 64;
  static constexpr int kBytes = 3360;
};

struct Q4_1Layout {
  static constexpr int kElements = 32;
  static constexpr int kScales = 0;      // f16 d[16]
  static constexpr int kMinScales = 32;  // f16 m[16]
  static constexpr int kCodes = 64;      // u8 qs[4][16][4]
  static constexpr int kBytes = 320;
};

struct Q5_0Layout {
  static constexpr int kElements = 32;
  static constexpr int kScales = 0;     // f16 d[16]
  static constexpr int kHighBits = 32;  // u8 qh[16][4]
  static constexpr int kCodes = 96;     // u8 qs[4][16][4]
  static constexpr int kBytes = 352;
};

struct Q5_1Layout {
  static constexpr int kElements = 32;
  static constexpr int kScales = 0;      // f16 d[16]
  static constexpr int kMinScales = 32;  // f16 m[16]
  static constexpr int kHighBits = 64;   // u8 qh[16][4]
  static constexpr int kCodes = 128;     // u8 qs[4][16][4]
  static constexpr int kBytes = 384;
};

struct IQ4_NLLayout : Q4_0Layout {};

struct Q5_KLayout : Q4_KLayout {
  static constexpr int kHighBits = 320;  // u8 qh[8][16][4]
  static constexpr int kCodes = 832;     // u8 qs[4][8][16][4]
  static constexpr int kBytes = 2880;
};

struct IQ4_XSLayout {
  static constexpr int kElements = 256;
  static constexpr int kScales = 0;      // f16 d[16]
  static constexpr int kSubScales = 32;  // i8 sc[4][16][2]
  static constexpr int kCodes = 160;     // u8 qs[8][4][16][4]
  static constexpr int kBytes = 2208;
};

struct F16Layout {
  static constexpr int kElements = 32;
  static constexpr int kPairBytes = 64;
  static constexpr int kBytes = 1024;
};

struct BF16Layout : F16Layout {};

// Bytes of one group block of `type` (0: no interleaved layout), and its elements.
int group_block_bytes(TensorType type);
int group_block_elements(TensorType type);

// One tile call: the 16 rows of one group against n_tokens activation rows, all blocks.
// Activations are in the weight type's dot format, the reference engine's bytes: Q8_1 for
// Q4_1 and Q5_1, Q8_0 for the other 32-element blocks, Q8_K for the super-blocks, with side
// arrays filled once per token by the driver (Q6_K reads the Q8_K block's own 16-element
// sums, bsums, instead of xs):
//   xd[t * n_blocks + b]            the block's scale d as f32
//   xs[t * n_blocks * S + b * S + i] code sums: Q8_0/Q8_1 (S = 1) the block's sum of codes;
//                                   Q8_K (S = 4) the 32-element sub-block sums s_j as
//                                   16-bit pairs (s_2i low, s_2i+1 high)
//   xm[t * n_blocks + b]            Q8_1 only: the block's s (f16 of d * code sum) as f32,
//                                   which the min term multiplies as the reference does
// F16 and BF16 weights take the activations rounded to their own type (the reference's
// F16/BF16 rows, in x) and widened back to f32:
//   xf[t * n_blocks * 32 + i]       element i of token t
struct TileArgs {
  const uint8_t* w = nullptr;   // the group's first block
  const uint8_t* x = nullptr;   // token 0's converted row
  size_t x_stride = 0;          // bytes between tokens' rows
  const float* xd = nullptr;    // token 0's block scales
  const int32_t* xs = nullptr;  // token 0's code sums
  const float* xm = nullptr;    // token 0's Q8_1 block sums s
  const float* xf = nullptr;    // token 0's widened F16/BF16 row
  int64_t n_blocks = 0;
  float* y = nullptr;  // y[t * y_stride + r] for row r < 16 of the group
  size_t y_stride = 0;
  int n_tokens = 0;  // any number >= 1
};

using TileFn = void (*)(const TileArgs& args);

inline constexpr int kQ8KSums = 4;  // int32 pairs of sub-block sums per Q8_K block

// The scalar tiles (interleaved_ref.cpp): the arithmetic of interleaved.h written plainly.
void ref_tile_q4_0(const TileArgs& a);
void ref_tile_q8_0(const TileArgs& a);
void ref_tile_q4_k(const TileArgs& a);
void ref_tile_q6_k(const TileArgs& a);
void ref_tile_q4_1(const TileArgs& a);
void ref_tile_q5_0(const TileArgs& a);
void ref_tile_q5_1(const TileArgs& a);
void ref_tile_iq4_nl(const TileArgs& a);
void ref_tile_q5_k(const TileArgs& a);
void ref_tile_iq4_xs(const TileArgs& a);
void ref_tile_f16(const TileArgs& a);
void ref_tile_bf16(const TileArgs& a);

}  // namespace hearth::kernels::interleaved

namespace hearth::kernels::simd {
struct InterleavedEntry {
  interleaved::TileFn q4_0 = nullptr;
  interleaved::TileFn q8_0 = nullptr;
  interleaved::TileFn q4_k = nullptr;
  interleaved::TileFn q6_k = nullptr;
  interleaved::TileFn q4_1 = nullptr;
  interleaved::TileFn q5_0 = nullptr;
  interleaved::TileFn q5_1 = nullptr;
  interleaved::TileFn iq4_nl = nullptr;
  interleaved::TileFn q5_k = nullptr;
  interleaved::TileFn iq4_xs = nullptr;
  interleaved::TileFn f16 = nullptr;
  interleaved::TileFn bf16 = nullptr;
};
// Defined in simd/avx2_interleaved.cpp and simd/avx512_interleaved.cpp.
InterleavedEntry avx2_interleaved();
InterleavedEntry avx512_interleaved();
// The BF16 tile with vdpbf16ps (simd/avx512bf16_interleaved.cpp), for CPUs with AVX-512 BF16.
interleaved::TileFn avx512bf16_tile_bf16();
// The 256-bit VNNI tiles (simd/interleaved_tiles256.h): with the VEX forms of AVX-VNNI
// (simd/avxvnni_interleaved.cpp), which the AVX2 level uses where the CPU has them, and with
// the EVEX forms of AVX-512 VL VNNI (simd/avx512_interleaved.cpp), for tests.
InterleavedEntry avxvnni_interleaved();
InterleavedEntry avx512vl_vnni256_interleaved();
}  // namespace hearth::kernels::simd

namespace hearth::kernels::interleaved {
// matmul_interleaved() with the tiles of `entry` (tests of tile sets the dispatch does not
// pick on this CPU).
void matmul_with(const simd::InterleavedEntry& entry, CpuLevel level, const WeightMatrix& w,
                 const float* x, int64_t n_tokens, float* y, ThreadPool& pool);
}  // namespace hearth::kernels::interleaved
