// The machine's memory read bandwidth, the ceiling of token generation (which streams the
// weights once per step): each thread sums its own share of a buffer much larger than the
// caches, best of a few passes.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "base/status.h"

namespace hearth::bench {

// GB/s (1e9 bytes) read with each thread count in `threads`, in that order. The buffer
// (`buffer_bytes` in total) lives in a child process, so it does not count in this
// process's peak RSS; without fork() it is measured in-process.
Result<std::vector<double>> measure_read_bandwidth(const std::vector<int32_t>& threads,
                                                   size_t buffer_bytes);

// The measurement itself, in this process.
Result<std::vector<double>> measure_read_bandwidth_here(const std::vector<int32_t>& threads,
                                                        size_t buffer_bytes);

}  // namespace hearth::bench
