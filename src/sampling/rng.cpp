#include "sampling/rng.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <exception>
#include <vector>

namespace hearth::sampling {

uint32_t resolve_seed(uint32_t seed) {
  if (seed != kRandomSeed) return seed;
  try {
    std::random_device device;
    if (device.entropy() > 0) return device();
  } catch (const std::exception&) {
    // No usable device: fall through to the clock.
  }
  const auto ticks = std::chrono::system_clock::now().time_since_epoch().count();
  return static_cast<uint32_t>(ticks);
}

double uniform_double(std::mt19937& rng) {
  constexpr double kTwo32 = 4294967296.0;
  // The same operations, in the same order and precision, as libstdc++'s
  // generate_canonical<double, 53> with a 32-bit engine.
  double sum = static_cast<double>(rng()) * 1.0;
  sum += static_cast<double>(rng()) * kTwo32;
  const double value = sum / (kTwo32 * kTwo32);
  return value < 1.0 ? value : std::nextafter(1.0, 0.0);
}

float uniform_float(std::mt19937& rng) {
  const float value = static_cast<float>(rng()) / 4294967296.0f;
  return value < 1.0f ? value : std::nextafter(1.0f, 0.0f);
}

size_t discrete_draw(std::span<const TokenData> entries, std::mt19937& rng) {
  if (entries.size() < 2) return 0;
  double sum = 0.0;
  for (const TokenData& entry : entries) sum += static_cast<double>(entry.p);
  std::vector<double> cumulative(entries.size());
  double running = 0.0;
  for (size_t i = 0; i < entries.size(); ++i) {
    running += static_cast<double>(entries[i].p) / sum;
    cumulative[i] = running;
  }
  cumulative.back() = 1.0;
  const double u = uniform_double(rng);
  const auto it = std::lower_bound(cumulative.begin(), cumulative.end(), u);
  return static_cast<size_t>(it - cumulative.begin());
}

}  // namespace hearth::sampling
