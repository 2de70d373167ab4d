// Helpers shared by the sampling tests.
#pragma once

#include <cstdint>
#include <limits>
#include <vector>

#include "sampling/candidates.h"

namespace hearth::sampling::test {

inline constexpr float kNegInf = -std::numeric_limits<float>::infinity();

inline std::vector<int32_t> ids(const Candidates& candidates) {
  std::vector<int32_t> out;
  for (const TokenData& entry : candidates.entries()) out.push_back(entry.id);
  return out;
}

inline std::vector<float> logits_of(const Candidates& candidates) {
  std::vector<float> out;
  for (const TokenData& entry : candidates.entries()) out.push_back(entry.logit);
  return out;
}

}  // namespace hearth::sampling::test
