#include "sampling/mirostat_v2.h"

#include <cmath>
#include <limits>

namespace hearth::sampling {

MirostatV2Stage::MirostatV2Stage(uint32_t seed, float tau, float eta)
    : seed_(seed),
      resolved_seed_(resolve_seed(seed)),
      tau_(tau),
      eta_(eta),
      mu_(2.0f * tau),
      rng_(resolved_seed_) {}

void MirostatV2Stage::reset() {
  mu_ = 2.0f * tau_;
  resolved_seed_ = resolve_seed(seed_);
  rng_.seed(resolved_seed_);
}

void MirostatV2Stage::apply(Candidates& candidates) {
  if (candidates.empty()) return;
  candidates.sort();
  // Everything masked (e.g. by a grammar): nothing to choose, as with dist.
  if (candidates[0].logit == -std::numeric_limits<float>::infinity()) return;
  candidates.softmax();
  size_t keep = 0;
  while (keep < candidates.size() && -std::log2(candidates[keep].p) <= mu_) ++keep;
  candidates.truncate(keep == 0 ? 1 : keep);
  candidates.softmax();
  const size_t chosen = discrete_draw(candidates.entries(), rng_);
  candidates.select(static_cast<int32_t>(chosen));
  mu_ = mu_ - eta_ * (-std::log2(candidates[chosen].p) - tau_);
}

}  // namespace hearth::sampling
