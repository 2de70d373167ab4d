#include "sampling/top_p.h"

#include <algorithm>

namespace hearth::sampling {
namespace {

// A large unsorted array (a whole vocabulary) usually has its nucleus in the first few
// hundred entries: order only those, and sort everything only if the nucleus is longer. The
// sort order is total, so both ways give the same result.
constexpr size_t kPartialSortAbove = 1024;
constexpr size_t kPartialSortCount = 256;

}  // namespace

TopPStage::TopPStage(float p, int32_t min_keep)
    : p_(p), min_keep_(static_cast<size_t>(std::max(min_keep, 0))) {}

size_t TopPStage::nucleus_size(const Candidates& candidates, size_t limit) const {
  float cumulative = 0.0f;
  for (size_t i = 0; i < limit; ++i) {
    cumulative += candidates[i].p;
    if (cumulative >= p_ && i + 1 >= min_keep_) return i + 1;
  }
  return 0;
}

void TopPStage::apply(Candidates& candidates) {
  if (p_ >= 1.0f || candidates.empty()) return;
  candidates.softmax();
  size_t keep = 0;
  if (!candidates.sorted() && candidates.size() > kPartialSortAbove) {
    candidates.partial_sort(kPartialSortCount);
    keep = nucleus_size(candidates, kPartialSortCount);
  }
  if (keep == 0) {
    if (!candidates.sorted()) candidates.sort();
    keep = nucleus_size(candidates, candidates.size());
  }
  if (keep > 0) candidates.truncate(keep);
  candidates.set_sorted(true);
}

}  // namespace hearth::sampling
