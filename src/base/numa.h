// NUMA placement (llama-server's --numa): the machine's nodes as /sys describes them, and the
// CPUs each thread of a pool is pinned to under a strategy, as the reference does it. On a
// machine with one node every strategy leaves the threads unpinned, as in the reference.
#pragma once

#include <string>
#include <vector>

namespace hearth {

enum class NumaStrategy { kDisabled, kDistribute, kIsolate, kNumactl };

struct NumaTopology {
  std::vector<std::vector<int>> node_cpus;  // node n's CPUs, ascending
};

// Reads node0, node1, ... under `system_dir`/node (up to the first missing one) and, for
// each, which of cpu0, cpu1, ... (up to the first missing `system_dir`/cpu/cpuN) it holds.
// No node directory: an empty topology.
NumaTopology read_numa_topology(const std::string& system_dir = "/sys/devices/system");

// The node of the CPU the calling thread runs on now; 0 when unknown.
int current_numa_node();

// Thread i's CPUs (i = 0 the calling thread) for a pool of `n_threads` under `strategy`:
// distribute puts thread i on node i % nodes, isolate puts every thread on `start_node`,
// numactl gives every thread `start_cpus` (the set the process started with). Empty (no
// pinning) when disabled or with fewer than two nodes.
std::vector<std::vector<int>> numa_thread_cpus(NumaStrategy strategy, const NumaTopology& topology,
                                               int n_threads, int start_node,
                                               const std::vector<int>& start_cpus);

}  // namespace hearth
