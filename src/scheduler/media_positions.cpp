#include "scheduler/media_positions.h"

namespace hearth::scheduler {

engine::RopePos media_rope_position(std::span<const MediaChunk> media, int32_t k) {
  int32_t shift = 0;  // positions the chunks before k advanced less than their rows
  for (const MediaChunk& c : media) {
    if (k < c.begin) break;
    if (k < c.begin + c.n_tokens) {
      if (c.grid_nx <= 0) return engine::RopePos::all(k - shift);
      const int32_t t = c.begin - shift;
      const int32_t i = k - c.begin;
      return {t, t + i / c.grid_nx, t + i % c.grid_nx, 0};
    }
    shift += c.n_tokens - c.n_pos();
  }
  return engine::RopePos::all(k - shift);
}

}  // namespace hearth::scheduler
