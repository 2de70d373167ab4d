// AVX2 kernels (to be written).
#include "kernels/simd/simd_table.h"

namespace hearth::kernels::simd {

void register_avx2_legacy(Table& /*t*/) {}

}  // namespace hearth::kernels::simd
