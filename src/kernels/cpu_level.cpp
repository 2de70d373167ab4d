#include "kernels/cpu_level.h"

#include <cstdlib>
#include <string>

#include "base/log.h"

namespace hearth::kernels {
namespace {

CpuLevel detect() {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_cpu_init();
  const bool avx2 = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma") &&
                    __builtin_cpu_supports("f16c");
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
