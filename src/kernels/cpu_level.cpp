#include "kernels/cpu_level.h"

#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>
#endif

#include <cstdlib>
#include <string>

#include "base/log.h"

namespace hearth::kernels {
namespace {

#if defined(__x86_64__) || defined(__i386__)
// F16C (CPUID leaf 1, ECX bit 29): read directly, as clang's __builtin_cpu_supports does
// not know the name.
bool has_f16c() {
  unsigned eax = 0, ebx = 0, ecx = 0, edx = 0;
  return __get_cpuid(1, &eax, &ebx, &ecx, &edx) != 0 && (ecx & (1u << 29)) != 0;
}
#endif

// A bit of CPUID leaf 7, sub-leaf 1, EAX (read directly, as for F16C).
bool cpuid_7_1_eax_bit(int bit) {
#if defined(__x86_64__) || defined(__i386__)
  unsigned eax = 0, ebx = 0, ecx = 0, edx = 0;
  return __get_cpuid_count(7, 1, &eax, &ebx, &ecx, &edx) != 0 && (eax & (1u << bit)) != 0;
#else
  (void)bit;
  return false;
#endif
}

CpuLevel detect() {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_cpu_init();
  const bool avx2 = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma") && has_f16c();
  if (!avx2) return CpuLevel::kScalar;
  const bool avx512 = __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
                      __builtin_cpu_supports("avx512vl") && __builtin_cpu_supports("avx512dq") &&
                      __builtin_cpu_supports("avx512vnni");
  return avx512 ? CpuLevel::kAvx512 : CpuLevel::kAvx2;
#else
  return CpuLevel::kScalar;
#endif
}

CpuLevel requested(CpuLevel detected) {
  const char* env = std::getenv("HEARTH_CPU_LEVEL");
  if (env == nullptr || *env == '\0') return detected;
  const std::string want(env);
  for (CpuLevel l : {CpuLevel::kScalar, CpuLevel::kAvx2, CpuLevel::kAvx512}) {
    if (want == cpu_level_name(l)) return l < detected ? l : detected;
  }
  log_warn("HEARTH_CPU_LEVEL={} is not one of scalar, avx2, avx512; using {}", want,
           cpu_level_name(detected));
  return detected;
}

}  // namespace

bool cpu_has_avx512_bf16() {
  static const bool has = detected_cpu_level() >= CpuLevel::kAvx512 && cpuid_7_1_eax_bit(5);
  return has;
}

bool cpu_has_avx_vnni() {
  static const bool has = detected_cpu_level() >= CpuLevel::kAvx2 && cpuid_7_1_eax_bit(4);
  return has;
}

CpuLevel detected_cpu_level() {
  static const CpuLevel level = detect();
  return level;
}

CpuLevel active_cpu_level() {
  static const CpuLevel level = requested(detected_cpu_level());
  return level;
}

std::vector<CpuLevel> runnable_cpu_levels() {
  std::vector<CpuLevel> out;
  for (int l = 0; l <= static_cast<int>(detected_cpu_level()); ++l)
    out.push_back(static_cast<CpuLevel>(l));
  return out;
}

std::string_view cpu_level_name(CpuLevel level) {
  switch (level) {
    case CpuLevel::kScalar:
      return "scalar";
    case CpuLevel::kAvx2:
      return "avx2";
    case CpuLevel::kAvx512:
      return "avx512";
  }
  return "unknown";
}

}  // namespace hearth::kernels
