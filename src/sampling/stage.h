// One step of a sampler chain. Filters and transforms rewrite or shrink the candidate
// array; a selecting stage (dist, greedy) chooses an entry. Stages with history (penalties,
// DRY, grammar) see every accepted token through accept() and forget it on reset().
#pragma once

#include <cstdint>
#include <string_view>

#include "sampling/candidates.h"

namespace hearth::sampling {

class Stage {
 public:
  virtual ~Stage() = default;
  // The reference's canonical sampler name ("top_k", "temperature", "dist", ...).
  virtual std::string_view name() const = 0;
  virtual void apply(Candidates& candidates) = 0;
  // A token was chosen (or replayed from the prompt).
  virtual void accept(int32_t /*token*/) {}
  // Back to the freshly built state; random stages re-seed.
  virtual void reset() {}
};

}  // namespace hearth::sampling
