#include "sampling/min_p.h"

#include <algorithm>
#include <cmath>

namespace hearth::sampling {

MinPStage::MinPStage(float p, int32_t min_keep)
    : p_(p), min_keep_(static_cast<size_t>(std::max(min_keep, 0))) {}

void MinPStage::apply(Candidates& candidates) {
  if (!(p_ > 0.0f) || candidates.empty()) return;
  const float min_logit = candidates.max_logit() + std::log(p_);
  const auto passes = [min_logit](const TokenData& entry) { return entry.logit >= min_logit; };
  if (!candidates.sorted()) {
    const auto entries = candidates.entries();
    const auto n_pass = static_cast<size_t>(std::count_if(entries.begin(), entries.end(), passes));
    if (n_pass > 0 && n_pass >= min_keep_) {
      candidates.keep_if(passes);
      return;
    }
    // Too few: the sorted prefix made of the passing entries topped up to min_keep. In that
    // order the passing entries come first, so sorting that many is enough.
    const size_t keep = std::min(std::max({n_pass, min_keep_, size_t{1}}), candidates.size());
    candidates.partial_sort(keep);
    candidates.truncate(keep);
    candidates.set_sorted(true);
    return;
  }
  size_t keep = 1;
  while (keep < candidates.size() && (passes(candidates[keep]) || keep < min_keep_)) ++keep;
  candidates.truncate(keep);
}

}  // namespace hearth::sampling
