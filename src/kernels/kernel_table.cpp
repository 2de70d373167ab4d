#include "kernels/kernel_table.h"

#include <array>

#include "kernels/quant_ref.h"
#include "kernels/vec_dot_ref.h"

namespace hearth::kernels {
namespace {

using Table = std::array<TypeKernels, kTensorTypeIdLimit>;

using TT = TensorType;

struct Entry {
  TensorType type;
  DequantizeRowFn dequantize_row;
  QuantizeRowFn quantize_row;
  TensorType vec_dot_type;
  VecDotFn vec_dot;
};

// Every readable type is a weight type with its dot product (quantization.md §2) and the
// shared generic matmul driver.
constexpr Entry kWeightEntries[] = {
    {TT::kF32, ref::dequantize_row_f32, ref::quantize_row_f32, TT::kF32, ref::vec_dot_f32},
    {TT::kF16, ref::dequantize_row_f16, ref::quantize_row_f16, TT::kF16, ref::vec_dot_f16},
    {TT::kBF16, ref::dequantize_row_bf16, ref::quantize_row_bf16, TT::kBF16, ref::vec_dot_bf16},
    {TT::kQ8_0, ref::dequantize_row_q8_0, ref::quantize_row_q8_0, TT::kQ8_0, ref::vec_dot_q8_0},
    {TT::kQ4_0, ref::dequantize_row_q4_0, ref::quantize_row_q4_0, TT::kQ8_0, ref::vec_dot_q4_0},
    {TT::kQ4_1, ref::dequantize_row_q4_1, ref::quantize_row_q4_1, TT::kQ8_1, ref::vec_dot_q4_1},
    {TT::kQ5_0, ref::dequantize_row_q5_0, ref::quantize_row_q5_0, TT::kQ8_0, ref::vec_dot_q5_0},
    {TT::kQ5_1, ref::dequantize_row_q5_1, ref::quantize_row_q5_1, TT::kQ8_1, ref::vec_dot_q5_1},
    {TT::kQ2_K, ref::dequantize_row_q2_k, ref::quantize_row_q2_k, TT::kQ8_K, ref::vec_dot_q2_k},
    {TT::kQ3_K, ref::dequantize_row_q3_k, ref::quantize_row_q3_k, TT::kQ8_K, ref::vec_dot_q3_k},
    {TT::kQ4_K, ref::dequantize_row_q4_k, ref::quantize_row_q4_k, TT::kQ8_K, ref::vec_dot_q4_k},
    {TT::kQ5_K, ref::dequantize_row_q5_k, ref::quantize_row_q5_k, TT::kQ8_K, ref::vec_dot_q5_k},
    {TT::kQ6_K, ref::dequantize_row_q6_k, ref::quantize_row_q6_k, TT::kQ8_K, ref::vec_dot_q6_k},
    {TT::kIQ4_NL, ref::dequantize_row_iq4_nl, ref::quantize_row_iq4_nl, TT::kQ8_0,
     ref::vec_dot_iq4_nl},
    {TT::kIQ4_XS, ref::dequantize_row_iq4_xs, ref::quantize_row_iq4_xs, TT::kQ8_K,
     ref::vec_dot_iq4_xs},
    {TT::kMXFP4, ref::dequantize_row_mxfp4, ref::quantize_row_mxfp4, TT::kQ8_0, ref::vec_dot_mxfp4},
};

struct ActivationEntry {
  TensorType type;
  QuantizeRowFn from_float;
};

// The activation formats (quantization.md §4.2). F16 and BF16 activations round exactly
// like the weight encoders; the 8-bit blocks use the reference's x86 activation variants.
constexpr ActivationEntry kActivationEntries[] = {
    {TT::kF32, ref::quantize_row_f32},       {TT::kF16, ref::quantize_row_f16},
    {TT::kBF16, ref::quantize_row_bf16},     {TT::kQ8_0, ref::quantize_act_row_q8_0},
    {TT::kQ8_1, ref::quantize_act_row_q8_1}, {TT::kQ8_K, ref::quantize_act_row_q8_k},
};

Table build_reference_table() {
  Table table{};
  for (const Entry& e : kWeightEntries) {
    TypeKernels& k = table[static_cast<uint32_t>(e.type)];
    k.dequantize_row = e.dequantize_row;
    k.quantize_row = e.quantize_row;
    k.vec_dot_type = e.vec_dot_type;
    k.vec_dot = e.vec_dot;
    k.matmul = matmul_reference;
  }
  for (const ActivationEntry& e : kActivationEntries) {
    table[static_cast<uint32_t>(e.type)].from_float = e.from_float;
  }
  return table;
}

const Table& reference_table() {
  static const Table table = build_reference_table();
  return table;
}

// The reference table with the SIMD entries of `level` laid over it: a SIMD vec_dot,
// tile or from_float replaces the reference's for its type; the generic driver
// (matmul_active) picks them up.
Table build_level_table(CpuLevel level) {
  Table table = reference_table();
  for (TypeKernels& k : table) {
    if (k.matmul == matmul_reference) k.matmul = matmul_active;
  }
  if (level == CpuLevel::kScalar) return table;
  simd::Table simd_table{};
  simd::register_avx2_float(simd_table);
  simd::register_avx2_legacy(simd_table);
  simd::register_avx2_kquants(simd_table);
  // AVX-512 VNNI: tiles of several tokens whose outputs equal the AVX2 vec_dot bit for bit.
  if (level == CpuLevel::kAvx512) {
    simd::register_avx512_legacy(simd_table);
    simd::register_avx512_kquants(simd_table);
  }
  for (size_t id = 0; id < table.size(); ++id) {
    const simd::Entry& e = simd_table[id];
    TypeKernels& k = table[id];
    if (e.vec_dot != nullptr && k.vec_dot != nullptr) k.vec_dot = e.vec_dot;
    if (e.tile != nullptr && k.vec_dot != nullptr) {
      k.tile = e.tile;
      k.tile_rows = e.max_rows;
      k.tile_tokens = e.max_tokens;
    }
    if (e.from_float != nullptr && k.from_float != nullptr) k.from_float = e.from_float;
    if (e.to_float != nullptr) {
      // F16/BF16: widening is exact, and their encoder is the activation conversion.
      k.dequantize_row = e.to_float;
      k.quantize_row = e.from_float;
    }
  }
  return table;
}

// Each level's table is built on first use of that level only: the register_* functions of
// a SIMD level are compiled for its instruction set and may use it, so a CPU must never run
// those of a level it lacks.
const Table& level_table(CpuLevel level) {
  switch (level) {
    case CpuLevel::kScalar: {
      static const Table scalar = build_level_table(CpuLevel::kScalar);
      return scalar;
    }
    case CpuLevel::kAvx2:
      break;
    case CpuLevel::kAvx512: {
      static const Table avx512 = build_level_table(CpuLevel::kAvx512);
      return avx512;
    }
  }
  static const Table avx2 = build_level_table(CpuLevel::kAvx2);
  return avx2;
}

const TypeKernels& lookup(const Table& table, TensorType type) {
  static const TypeKernels kNone{};
  const auto id = static_cast<uint32_t>(type);
  return id < table.size() ? table[id] : kNone;
}

}  // namespace

const TypeKernels& reference_kernels(TensorType type) {
  return lookup(reference_table(), type);
}

const TypeKernels& level_kernels(CpuLevel level, TensorType type) {
  return lookup(level_table(level), type);
}

const TypeKernels& active_kernels(TensorType type) {
  static const Table& table = level_table(active_cpu_level());
  return lookup(table, type);
}

}  // namespace hearth::kernels
