// The serving defaults llama-server b10621 starts with, written once: the option table,
// the server's configuration, the scheduler and the HTTP layer all start from these.
#pragma once

#include <cstdint>

namespace hearth {

inline constexpr int32_t kDefaultBatchSize = 2048;       // -b: tokens per engine step
inline constexpr int32_t kDefaultUbatchSize = 512;       // -ub: tokens per forward call
inline constexpr int32_t kDefaultPort = 8080;            // --port
inline constexpr int32_t kDefaultTimeoutSeconds = 3600;  // -to
inline constexpr int32_t kDefaultSsePingSeconds = 30;    // --sse-ping-interval
inline constexpr int32_t kDefaultCacheRamMib = 8192;     // -cram
inline constexpr float kDefaultSlotSimilarity = 0.10f;   // -sps

}  // namespace hearth
