#include "sampling/top_k.h"

#include <algorithm>

namespace hearth::sampling {

void TopKStage::apply(Candidates& candidates) {
  if (k_ <= 0) return;
  const size_t k = std::min(static_cast<size_t>(k_), candidates.size());
  if (!candidates.sorted()) candidates.partial_sort(k);
  candidates.truncate(k);
  candidates.set_sorted(true);
}

}  // namespace hearth::sampling
