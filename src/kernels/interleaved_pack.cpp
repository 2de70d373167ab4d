// The interleaved layouts (interleaved_format.h): repacking 16 rows of the file's blocks at
// load, and reading a row back in the file's format.
#include <cstring>

#include "kernels/block_access.h"
#include "kernels/block_formats.h"
#include "kernels/interleaved.h"
#include "kernels/interleaved_format.h"

namespace hearth::kernels {
namespace interleaved {
namespace {

// 16 rows of the file's layout -> one group, block by block (`src` is row 0 of the group),
// and row r of a group back.
// Q8_0's codes + 128 (x xor 0x80), four at a time.
void flip_sign_bits(const void* src, void* dst) {
  uint32_t v = 0;
  std::memcpy(&v, src, 4);
  v ^= 0x80808080u;
  std::memcpy(dst, &v, 4);
}

void pack_q8_0(const uint8_t* src, size_t row_stride, int64_t n_blocks, uint8_t* dst) {
  using L = Q8_0Layout;
  for (int64_t b = 0; b < n_blocks; ++b) {
    uint8_t* out = dst + b * L::kBytes;
    for (int r = 0; r < kRows; ++r) {
      const auto blk = load_block<BlockQ8_0>(src + r * row_stride, b);
      std::memcpy(out + L::kScales + 2 * r, &blk.d, 2);
      for (int c = 0; c < kQK / 4; ++c)
        flip_sign_bits(blk.qs + 4 * c, out + L::kCodes + c * kChunkBytes + 4 * r);
    }
  }
}

void unpack_q8_0(const uint8_t* group, int r, int64_t n_blocks, uint8_t* row) {
  using L = Q8_0Layout;
  for (int64_t b = 0; b < n_blocks; ++b) {
    const uint8_t* in = group + b * L::kBytes;
    BlockQ8_0 blk;
    std::memcpy(&blk.d, in + L::kScales + 2 * r, 2);
    for (int c = 0; c < kQK / 4; ++c)
      flip_sign_bits(in + L::kCodes + c * kChunkBytes + 4 * r, blk.qs + 4 * c);
    store_block(row, b, blk);
  }
}

void pack_q6_k(const uint8_t* src, size_t row_stride, int64_t n_blocks, uint8_t* dst) {
  using L = Q6_KLayout;
  for (int64_t b = 0; b < n_blocks; ++b) {
    uint8_t* out = dst + b * L::kBytes;
    for (int r = 0; r < kRows; ++r) {
      const auto blk = load_block<BlockQ6K>(src + r * row_stride, b);
      std::memcpy(out + L::kScales + 2 * r, &blk.d, 2);
      for (int j = 0; j < 16; ++j)
        out[L::kSubScales + paired_byte(j, r)] = static_cast<uint8_t>(blk.scales[j]);
      for (int h = 0; h < 2; ++h) {
        for (int c = 0; c < 8; ++c) {
          uint8_t* chunk = out + L::kCodes + h * L::kHalfBytes + c * 3 * kChunkBytes + 4 * r;
          std::memcpy(chunk, blk.ql + 64 * h + 4 * c, 4);
          std::memcpy(chunk + kChunkBytes, blk.ql + 64 * h + 32 + 4 * c, 4);
          std::memcpy(chunk + 2 * kChunkBytes, blk.qh + 32 * h + 4 * c, 4);
        }
      }
    }
  }
}

void unpack_q6_k(const uint8_t* group, int r, int64_t n_blocks, uint8_t* row) {
  using L = Q6_KLayout;
  for (int64_t b = 0; b < n_blocks; ++b) {
    const uint8_t* in = group + b * L::kBytes;
    BlockQ6K blk;
    std::memcpy(&blk.d, in + L::kScales + 2 * r, 2);
    for (int j = 0; j < 16; ++j)
      blk.scales[j] = static_cast<int8_t>(in[L::kSubScales + paired_byte(j, r)]);
    for (int h = 0; h < 2; ++h) {
      for (int c = 0; c < 8; ++c) {
        const uint8_t* chunk = in + L::kCodes + h * L::kHalfBytes + c * 3 * kChunkBytes + 4 * r;
        std::memcpy(blk.ql + 64 * h + 4 * c, chunk, 4);
        std::memcpy(blk.ql + 64 * h + 32 + 4 * c, chunk + kChunkBytes, 4);
        std::memcpy(blk.qh + 32 * h + 4 * c, chunk + 2 * kChunkBytes, 4);
      }
    }
    store_block(row, b, blk);
  }
}

// The 16 code bytes of a 32-element block <-> row r's 4 bytes in each of 4 chunks.
void put_chunks(const uint8_t* qs, int n_chunks, int r, uint8_t* codes) {
  for (int c = 0; c < n_chunks; ++c) std::memcpy(codes + c * kChunkBytes + 4 * r, qs + 4 * c, 4);
}

void get_chunks(const uint8_t* codes, int n_chunks, int r, uint8_t* qs) {
  for (int c = 0; c < n_chunks; ++c) std::memcpy(qs + 4 * c, codes + c * kChunkBytes + 4 * r, 4);
}

// A Q5 block's qh word <-> the 4 bytes of interleaved_format.h: byte c holds the fifth bits of
// elements 4c..4c+3 (low half) and 16+4c..16+4c+3 (high half).
void put_q5_high_bits(const uint8_t* qh_le, int r, uint8_t* out) {
  const uint32_t qh = load_u32_le(qh_le);
  for (int c = 0; c < 4; ++c) {
    out[4 * r + c] =
        static_cast<uint8_t>(((qh >> (4 * c)) & 0xFu) | (((qh >> (16 + 4 * c)) & 0xFu) << 4));
  }
}

void get_q5_high_bits(const uint8_t* in, int r, uint8_t* qh_le) {
  uint32_t qh = 0;
  for (int c = 0; c < 4; ++c) {
    const uint32_t byte = in[4 * r + c];
    qh |= ((byte & 0xFu) << (4 * c)) | ((byte >> 4) << (16 + 4 * c));
  }
  for (int i = 0; i < 4; ++i) qh_le[i] = static_cast<uint8_t>(qh >> (8 * i));
}

// The 32-element blocks other than Q8_0 through one pair of functions: the offsets of a
// layout L (a field absent from L is skipped) and the block's own struct B.
template <class L>
constexpr int min_scales_of() {
  if constexpr (requires { L::kMinScales; }) {
    return L::kMinScales;
  } else {
    return -1;
  }
}

template <class L>
constexpr int high_bits_of() {
  if constexpr (requires { L::kHighBits; }) {
    return L::kHighBits;
  } else {
    return -1;
  }
}

template <class L, class B>
void pack_small(const uint8_t* src, size_t row_stride, int64_t n_blocks, uint8_t* dst) {
  for (int64_t b = 0; b < n_blocks; ++b) {
    uint8_t* out = dst + b * L::kBytes;
    for (int r = 0; r < kRows; ++r) {
      const auto blk = load_block<B>(src + r * row_stride, b);
      std::memcpy(out + L::kScales + 2 * r, &blk.d, 2);
      if constexpr (min_scales_of<L>() >= 0) std::memcpy(out + L::kMinScales + 2 * r, &blk.m, 2);
      if constexpr (high_bits_of<L>() >= 0) put_q5_high_bits(blk.qh, r, out + L::kHighBits);
      put_chunks(blk.qs, 4, r, out + L::kCodes);
    }
  }
}

template <class L, class B>
void unpack_small(const uint8_t* group, int r, int64_t n_blocks, uint8_t* row) {
  for (int64_t b = 0; b < n_blocks; ++b) {
    const uint8_t* in = group + b * L::kBytes;
    B blk;
    std::memcpy(&blk.d, in + L::kScales + 2 * r, 2);
    if constexpr (min_scales_of<L>() >= 0) std::memcpy(&blk.m, in + L::kMinScales + 2 * r, 2);
    if constexpr (high_bits_of<L>() >= 0) get_q5_high_bits(in + L::kHighBits, r, blk.qh);
    get_chunks(in + L::kCodes, 4, r, blk.qs);
    store_block(row, b, blk);
  }
}

// The fields Q4_K and Q5_K share (d, dmin, unpacked scales and mins, the nibbles), row r.
template <class L, class B>
void put_k4_fields(const B& blk, int r, uint8_t* out) {
  std::memcpy(out + L::kScales + 2 * r, &blk.d, 2);
  std::memcpy(out + L::kMinScales + 2 * r, &blk.dmin, 2);
  for (int j = 0; j < 8; ++j) {
    int sc = 0, mn = 0;
    unpack_k4_scale_min(blk.scales, j, sc, mn);
    out[L::kSubScales + j * kRows + r] = static_cast<uint8_t>(sc);
    out[L::kMins + paired_byte(j, r)] = static_cast<uint8_t>(mn);
  }
  put_chunks(blk.qs, 32, r, out + L::kCodes);
}

// The inverse of unpack_k4_scale_min: eight 6-bit scales and mins into the 12 packed bytes.
void pack_k4_scales(const int* sc, const int* mn, uint8_t* q) {
  for (int k = 0; k < 4; ++k) {
    q[k] = static_cast<uint8_t>(sc[k] | ((sc[k + 4] >> 4) << 6));
    q[k + 4] = static_cast<uint8_t>(mn[k] | ((mn[k + 4] >> 4) << 6));
    q[k + 8] = static_cast<uint8_t>((sc[k + 4] & 0xF) | ((mn[k + 4] & 0xF) << 4));
  }
}

template <class L, class B>
void get_k4_fields(const uint8_t* in, int r, B& blk) {
  std::memcpy(&blk.d, in + L::kScales + 2 * r, 2);
  std::memcpy(&blk.dmin, in + L::kMinScales + 2 * r, 2);
  int sc[8], mn[8];
  for (int j = 0; j < 8; ++j) {
    sc[j] = in[L::kSubScales + j * kRows + r];
    mn[j] = in[L::kMins + paired_byte(j, r)];
  }
  pack_k4_scales(sc, mn, blk.scales);
  get_chunks(in + L::kCodes, 32, r, blk.qs);
}

void pack_q4_k(const uint8_t* src, size_t row_stride, int64_t n_blocks, uint8_t* dst) {
  for (int64_t b = 0; b < n_blocks; ++b) {
    for (int r = 0; r < kRows; ++r)
      put_k4_fields<Q4_KLayout>(load_block<BlockQ4K>(src + r * row_stride, b), r,
                                dst + b * Q4_KLayout::kBytes);
  }
}

void unpack_q4_k(const uint8_t* group, int r, int64_t n_blocks, uint8_t* row) {
  for (int64_t b = 0; b < n_blocks; ++b) {
    BlockQ4K blk;
    get_k4_fields<Q4_KLayout>(group + b * Q4_KLayout::kBytes, r, blk);
    store_block(row, b, blk);
  }
}

void pack_q5_k(const uint8_t* src, size_t row_stride, int64_t n_blocks, uint8_t* dst) {
  using L = Q5_KLayout;
  for (int64_t b = 0; b < n_blocks; ++b) {
    uint8_t* out = dst + b * L::kBytes;
    for (int r = 0; r < kRows; ++r) {
      const auto blk = load_block<BlockQ5K>(src + r * row_stride, b);
      put_k4_fields<L>(blk, r, out);
      put_chunks(blk.qh, 8, r, out + L::kHighBits);
    }
  }
}

void unpack_q5_k(const uint8_t* group, int r, int64_t n_blocks, uint8_t* row) {
  using L = Q5_KLayout;
  for (int64_t b = 0; b < n_blocks; ++b) {
    const uint8_t* in = group + b * L::kBytes;
    BlockQ5K blk;
    get_k4_fields<L>(in, r, blk);
    get_chunks(in + L::kHighBits, 8, r, blk.qh);
    store_block(row, b, blk);
  }
}

void pack_iq4_xs(const uint8_t* src, size_t row_stride, int64_t n_blocks, uint8_t* dst) {
  using L = IQ4_XSLayout;
  for (int64_t b = 0; b < n_blocks; ++b) {
    uint8_t* out = dst + b * L::kBytes;
    for (int r = 0; r < kRows; ++r) {
      const auto blk = load_block<BlockIq4Xs>(src + r * row_stride, b);
      std::memcpy(out + L::kScales + 2 * r, &blk.d, 2);
      for (int j = 0; j < 8; ++j) {
        const int ls = unpack_iq4xs_scale(blk.scales_l, blk.scales_h, j);
        out[L::kSubScales + paired_byte(j, r)] = static_cast<uint8_t>(ls - 32);
      }
      put_chunks(blk.qs, 32, r, out + L::kCodes);
    }
  }
}

void unpack_iq4_xs(const uint8_t* group, int r, int64_t n_blocks, uint8_t* row) {
  using L = IQ4_XSLayout;
  for (int64_t b = 0; b < n_blocks; ++b) {
    const uint8_t* in = group + b * L::kBytes;
    BlockIq4Xs blk{};
    std::memcpy(&blk.d, in + L::kScales + 2 * r, 2);
    for (int j = 0; j < 8; ++j) {
      const int ls = static_cast<int8_t>(in[L::kSubScales + paired_byte(j, r)]) + 32;
      blk.scales_l[j / 2] =
          static_cast<uint8_t>(blk.scales_l[j / 2] | ((ls & 0xF) << (4 * (j % 2))));
      blk.scales_h = static_cast<uint16_t>(blk.scales_h | ((ls >> 4) << (2 * j)));
    }
    get_chunks(in + L::kCodes, 32, r, blk.qs);
    store_block(row, b, blk);
  }
}

// F16: each column pair as the 16 rows' odd column, then their even column.
void pack_f16(const uint8_t* src, size_t row_stride, int64_t n_blocks, uint8_t* dst) {
  using L = F16Layout;
  for (int64_t b = 0; b < n_blocks; ++b) {
    uint8_t* out = dst + b * L::kBytes;
    for (int r = 0; r < kRows; ++r) {
      const uint8_t* in = src + r * row_stride + b * L::kElements * 2;
      for (int p = 0; p < L::kElements / 2; ++p) {
        std::memcpy(out + p * L::kPairBytes + 2 * r, in + 4 * p + 2, 2);
        std::memcpy(out + p * L::kPairBytes + 32 + 2 * r, in + 4 * p, 2);
      }
    }
  }
}

void unpack_f16(const uint8_t* group, int r, int64_t n_blocks, uint8_t* row) {
  using L = F16Layout;
  for (int64_t b = 0; b < n_blocks; ++b) {
    const uint8_t* in = group + b * L::kBytes;
    uint8_t* out = row + b * L::kElements * 2;
    for (int p = 0; p < L::kElements / 2; ++p) {
      std::memcpy(out + 4 * p + 2, in + p * L::kPairBytes + 2 * r, 2);
      std::memcpy(out + 4 * p, in + p * L::kPairBytes + 32 + 2 * r, 2);
    }
  }
}

// BF16: each column pair as the 16 rows' 4 bytes, the row's own bytes.
void pack_bf16(const uint8_t* src, size_t row_stride, int64_t n_blocks, uint8_t* dst) {
  using L = BF16Layout;
  for (int64_t b = 0; b < n_blocks; ++b) {
    for (int r = 0; r < kRows; ++r) {
      put_chunks(src + r * row_stride + b * L::kElements * 2, L::kElements / 2, r,
                 dst + b * L::kBytes);
    }
  }
}

void unpack_bf16(const uint8_t* group, int r, int64_t n_blocks, uint8_t* row) {
  using L = BF16Layout;
  for (int64_t b = 0; b < n_blocks; ++b)
    get_chunks(group + b * L::kBytes, L::kElements / 2, r, row + b * L::kElements * 2);
}

using PackFn = void (*)(const uint8_t* src, size_t row_stride, int64_t n_blocks, uint8_t* dst);
using UnpackFn = void (*)(const uint8_t* group, int r, int64_t n_blocks, uint8_t* row);

struct Format {
  int bytes = 0;
  int elements = 0;
  PackFn pack = nullptr;
  UnpackFn unpack = nullptr;
};

Format format_of(TensorType type) {
  switch (type) {
    case TensorType::kQ4_0:
      return {Q4_0Layout::kBytes, Q4_0Layout::kElements, pack_small<Q4_0Layout, BlockQ4_0>,
              unpack_small<Q4_0Layout, BlockQ4_0>};
    case TensorType::kQ8_0:
      return {Q8_0Layout::kBytes, Q8_0Layout::kElements, pack_q8_0, unpack_q8_0};
    case TensorType::kQ4_K:
      return {Q4_KLayout::kBytes, Q4_KLayout::kElements, pack_q4_k, unpack_q4_k};
    case TensorType::kQ6_K:
      return {Q6_KLayout::kBytes, Q6_KLayout::kElements, pack_q6_k, unpack_q6_k};
    case TensorType::kQ4_1:
      return {Q4_1Layout::kBytes, Q4_1Layout::kElements, pack_small<Q4_1Layout, BlockQ4_1>,
              unpack_small<Q4_1Layout, BlockQ4_1>};
    case TensorType::kQ5_0:
      return {Q5_0Layout::kBytes, Q5_0Layout::kElements, pack_small<Q5_0Layout, BlockQ5_0>,
              unpack_small<Q5_0Layout, BlockQ5_0>};
    case TensorType::kQ5_1:
      return {Q5_1Layout::kBytes, Q5_1Layout::kElements, pack_small<Q5_1Layout, BlockQ5_1>,
              unpack_small<Q5_1Layout, BlockQ5_1>};
    case TensorType::kIQ4_NL:
      return {IQ4_NLLayout::kBytes, IQ4_NLLayout::kElements, pack_small<IQ4_NLLayout, BlockIq4Nl>,
              unpack_small<IQ4_NLLayout, BlockIq4Nl>};
    case TensorType::kQ5_K:
      return {Q5_KLayout::kBytes, Q5_KLayout::kElements, pack_q5_k, unpack_q5_k};
    case TensorType::kIQ4_XS:
      return {IQ4_XSLayout::kBytes, IQ4_XSLayout::kElements, pack_iq4_xs, unpack_iq4_xs};
    case TensorType::kF16:
      return {F16Layout::kBytes, F16Layout::kElements, pack_f16, unpack_f16};
    case TensorType::kBF16:
      return {BF16Layout::kBytes, BF16Layout::kElements, pack_bf16, unpack_bf16};
    default:
      return {};
  }
}

}  // namespace

int group_block_bytes(TensorType type) {
  return format_of(type).bytes;
}

int group_block_elements(TensorType type) {
  return format_of(type).elements;
}

}  // namespace interleaved

bool has_interleaved_layout(TensorType type) {
  return interleaved::format_of(type).bytes != 0;
}

bool can_interleave(const WeightMatrix& w) {
  const interleaved::Format f = interleaved::format_of(w.type);
  if (f.bytes == 0 || w.layout != WeightLayout::kRows || w.n_rows <= 0 ||
      w.n_rows % kInterleaveRows != 0 || w.n_cols <= 0 || w.n_cols % f.elements != 0)
    return false;
  // Q5_K's 256-bit tiles decode one token at half the row layout's speed (18 vs 35 t/s on
  // the 1.1B model, AVX2: the fifth bits and codes are read as two streams the prefetcher
  // does not follow) and gain nothing in prefill (80 vs 78 t/s), so Q5_K is repacked only
  // where the 512-bit tiles run.
  if (w.type == TensorType::kQ5_K) return active_cpu_level() >= CpuLevel::kAvx512;
  return active_cpu_level() != CpuLevel::kScalar;
}

size_t interleaved_bytes(const WeightMatrix& w) {
  const interleaved::Format f = interleaved::format_of(w.type);
  if (f.bytes == 0) return 0;
  return static_cast<size_t>(w.n_rows / kInterleaveRows) *
         static_cast<size_t>(w.n_cols / f.elements) * static_cast<size_t>(f.bytes);
}

WeightMatrix interleave(const WeightMatrix& w, void* dst) {
  const interleaved::Format f = interleaved::format_of(w.type);
  const int64_t n_blocks = w.n_cols / f.elements;
  const auto* src = static_cast<const uint8_t*>(w.data);
  auto* out = static_cast<uint8_t*>(dst);
  const size_t group_bytes = static_cast<size_t>(n_blocks) * static_cast<size_t>(f.bytes);
  for (int64_t g = 0; g < w.n_rows / kInterleaveRows; ++g) {
    f.pack(src + static_cast<size_t>(g) * kInterleaveRows * w.row_stride, w.row_stride, n_blocks,
           out + static_cast<size_t>(g) * group_bytes);
  }
  WeightMatrix view = w;
  view.data = dst;
  view.layout = WeightLayout::kInterleaved16;
  return view;
}

void extract_row(const WeightMatrix& w, int64_t r, void* dst) {
  const interleaved::Format f = interleaved::format_of(w.type);
  const int64_t n_blocks = w.n_cols / f.elements;
  const size_t group_bytes = static_cast<size_t>(n_blocks) * static_cast<size_t>(f.bytes);
  const auto* group =
      static_cast<const uint8_t*>(w.data) + static_cast<size_t>(r / kInterleaveRows) * group_bytes;
  f.unpack(group, static_cast<int>(r % kInterleaveRows), n_blocks, static_cast<uint8_t*>(dst));
}

}  // namespace hearth::kernels
