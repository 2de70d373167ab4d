// The reference's default chain restricted to the basic stages:
// top_k -> top_p -> min_p -> temperature -> dist. Stages whose parameters make them a no-op
// stay in the chain as inert placeholders, as in the reference.
#pragma once

#include <cstdint>

#include "sampling/chain.h"
#include "sampling/rng.h"

namespace hearth::sampling {

// Defaults are llama-server's.
struct BasicParams {
  float temperature = 0.8f;  // <= 0: greedy
  int32_t top_k = 40;        // <= 0: off
  float top_p = 0.95f;       // >= 1: off
  float min_p = 0.05f;       // <= 0: off
  int32_t min_keep = 0;      // for top_p and min_p; < 0 counts as 0
  uint32_t seed = kRandomSeed;
};

// temperature <= 0 gives a chain of one greedy stage: the reference keeps the filters and
// masks all but the first maximum before dist, which chooses that same token (the filters
// always keep the top entry, and ties order by token id), so only the work differs.
Chain make_basic_chain(const BasicParams& params);

}  // namespace hearth::sampling
