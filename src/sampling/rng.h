// Seeds and uniform draws for the random stages. The draws are the ones libstdc++'s
// std::uniform_real_distribution makes from a std::mt19937 (what the reference's Linux
// builds use), written out so a given seed picks the same tokens with any standard library.
#pragma once

#include <cstddef>
#include <cstdint>
#include <random>
#include <span>

#include "sampling/candidates.h"

namespace hearth::sampling {

// Seed value meaning "pick a random seed" (-1 in requests and on the command line).
inline constexpr uint32_t kRandomSeed = 0xFFFFFFFFu;

// `seed` itself, or for kRandomSeed a fresh value from the OS entropy source (the system
// clock when the random device reports no entropy or is unavailable).
uint32_t resolve_seed(uint32_t seed);

// Uniform double in [0, 1) from two 32-bit outputs: (g1 + g2 * 2^32) / 2^64 in double
// arithmetic, clamped to the largest double below 1.
double uniform_double(std::mt19937& rng);
// Uniform float in [0, 1) from one output: float(g) / 2^32, clamped below 1.
float uniform_float(std::mt19937& rng);

// The draw libstdc++'s std::discrete_distribution makes over the entries' p (mirostat and
// adaptive-p use it instead of dist's algorithm): the weights are normalized in double, one
// uniform_double u picks the first index whose cumulative probability is >= u, and the last
// cumulative value counts as exactly 1. Fewer than two entries draw nothing and give index 0,
// as libstdc++ does. Empty entries give 0 too; callers check for that first.
size_t discrete_draw(std::span<const TokenData> entries, std::mt19937& rng);

}  // namespace hearth::sampling
