#include "base/numa.h"

#include <sched.h>

#include <algorithm>
#include <filesystem>

namespace hearth {

NumaTopology read_numa_topology(const std::string& system_dir) {
  namespace fs = std::filesystem;
  std::error_code ec;
  const fs::path root(system_dir);
  int n_cpus = 0;
  while (fs::exists(root / "cpu" / ("cpu" + std::to_string(n_cpus)), ec)) ++n_cpus;
  NumaTopology topology;
  for (int node = 0;; ++node) {
    const fs::path node_dir = root / "node" / ("node" + std::to_string(node));
    if (!fs::is_directory(node_dir, ec)) break;
    std::vector<int> cpus;
    for (int cpu = 0; cpu < n_cpus; ++cpu) {
      if (fs::exists(node_dir / ("cpu" + std::to_string(cpu)), ec)) cpus.push_back(cpu);
    }
    topology.node_cpus.push_back(std::move(cpus));
  }
  return topology;
}

int current_numa_node() {
  unsigned cpu = 0;
  unsigned node = 0;
  return getcpu(&cpu, &node) == 0 ? static_cast<int>(node) : 0;
}

std::vector<std::vector<int>> numa_thread_cpus(NumaStrategy strategy, const NumaTopology& topology,
                                               int n_threads, int start_node,
                                               const std::vector<int>& start_cpus) {
  const auto n_nodes = static_cast<int>(topology.node_cpus.size());
  if (strategy == NumaStrategy::kDisabled || n_nodes < 2 || n_threads < 1) return {};
  std::vector<std::vector<int>> out(static_cast<size_t>(n_threads));
  for (int i = 0; i < n_threads; ++i) {
    auto& set = out[static_cast<size_t>(i)];
    switch (strategy) {
      case NumaStrategy::kDistribute:
        set = topology.node_cpus[static_cast<size_t>(i % n_nodes)];
        break;
      case NumaStrategy::kIsolate:
        set = topology.node_cpus[static_cast<size_t>(std::clamp(start_node, 0, n_nodes - 1))];
        break;
      case NumaStrategy::kNumactl:
        set = start_cpus;
        break;
      case NumaStrategy::kDisabled:
        break;
    }
  }
  return out;
}

}  // namespace hearth
