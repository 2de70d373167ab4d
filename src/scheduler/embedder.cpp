#include "scheduler/embedder.h"

#include <algorithm>

#include "engine/pooling.h"

namespace hearth::scheduler::detail {

// The rows of embedding inputs that the pooling reads (an input starts at position 0:
// embedding tasks reuse no cache).
bool Embedder::wants_hidden(const Slot& slot, int32_t pos) const {
  if (!slot.task || slot.task->kind == TaskKind::kCompletion) return false;
  switch (engine::pooled_rows(hp_, pooling_)) {
    case engine::PooledRows::kFirst:
      return pos == 0;
    case engine::PooledRows::kLast:
      return pos == slot.task->n_prompt() - 1;
    default:
      return true;
  }
}

// Only the rows the pooling reads are kept: every row for none and mean, else the first (cls,
// rank) or the latest (last, Qwen3's rank), so a long last-pooled input holds one row.
void Embedder::keep_row(std::vector<float>& rows, std::span<const float> row) const {
  const engine::PooledRows read = engine::pooled_rows(hp_, pooling_);
  if (read == engine::PooledRows::kFirst && !rows.empty()) return;
  if (read == engine::PooledRows::kLast) rows.clear();
  rows.insert(rows.end(), row.begin(), row.end());
}

std::vector<Slot*> Embedder::gather(std::span<const StepToken> chunk, SlotTable& slots) {
  std::vector<Slot*> done;
  for (size_t i = 0; i < chunk.size(); ++i) {
    Slot& s = slots[chunk[i].slot];
    if (!s.task || s.task->kind == TaskKind::kCompletion) continue;
    const std::span<const float> row = ctx_.embedding(static_cast<int32_t>(i));
    if (!row.empty()) keep_row(s.task->rows, row);  // empty: a row the pooling does not read
    if (static_cast<int32_t>(s.cached.size()) == s.task->n_prompt() &&
        std::find(done.begin(), done.end(), &s) == done.end())
      done.push_back(&s);
  }
  return done;
}

EmbeddingResult Embedder::pool(const RunningTask& t) {
  EmbeddingResult result;
  result.index = t.index;
  result.n_tokens = t.n_prompt();
  const int64_t E = hp_.n_embd;
  if (pooling_ == engine::PoolingType::kNone) {
    for (int32_t k = 0; k < t.n_prompt(); ++k)
      result.vectors.emplace_back(t.rows.begin() + k * E, t.rows.begin() + (k + 1) * E);
  } else {
    std::vector<float> pooled =
        ctx_.pool(pooling_, t.rows.data(), static_cast<int64_t>(t.rows.size()) / E);
    if (pooling_ == engine::PoolingType::kRank) {
      result.score = pooled.empty() ? -1e6f : pooled[0];
    } else {
      engine::normalize_embedding(pooled.data(), pooled.data(), static_cast<int64_t>(pooled.size()),
                                  t.embd_normalize);
    }
    result.vectors.push_back(std::move(pooled));
  }
  return result;
}

}  // namespace hearth::scheduler::detail
