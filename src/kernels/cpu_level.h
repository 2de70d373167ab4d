// The SIMD instruction-set levels Hearth has kernels for, detected from the CPU at run
// time (cpuid through GCC's __builtin_cpu_supports), so one binary runs everywhere and
// uses the widest kernels the machine executes.
#pragma once

#include <string_view>
#include <vector>

namespace hearth::kernels {

enum class CpuLevel {
  kScalar = 0,  // the portable reference kernels
  kAvx2 = 1,    // AVX2 + FMA + F16C
  kAvx512 = 2,  // AVX-512 F/BW/VL/DQ + VNNI
};

// The highest level this CPU executes.
CpuLevel detected_cpu_level();
// The level the active kernels use: the detected one, lowered by the environment variable
// HEARTH_CPU_LEVEL=scalar|avx2|avx512 (read once; a level above the CPU's is ignored).
CpuLevel active_cpu_level();
// Every level from kScalar up to the detected one (what the kernel tests iterate over).
std::vector<CpuLevel> runnable_cpu_levels();

std::string_view cpu_level_name(CpuLevel level);

// AVX-512 BF16 (vdpbf16ps), an extension within the kAvx512 level: its BF16 matmul tile uses
// it where present (interleaved.h).
bool cpu_has_avx512_bf16();
// AVX-VNNI (the VEX forms of vpdpbusd/vpdpwssd), an extension within the kAvx2 level: its
// interleaved tiles use it where present (interleaved.h).
bool cpu_has_avx_vnni();

}  // namespace hearth::kernels
