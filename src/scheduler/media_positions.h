// Rope positions of a sequence's rows for M-RoPE text models (qwen2vl, qwen3vl), as the
// reference's mtmd helper and server lay them out. A row keeps its KV index (its place in
// the sequence, engine::BatchToken::pos); its rope position is separate:
//   - an image chunk with a grid (MediaChunk::grid_nx/grid_ny) starting at index b, after
//     chunks that advanced the position by `shift` less than their rows: row i of the chunk
//     takes (t, h, w, e) = (b - shift, b - shift + i / grid_nx, b - shift + i % grid_nx, 0)
//     (mtmd_image_tokens_get_decoder_pos and set_position_mrope_2d);
//   - any other row at index k (text, generated tokens, drafts, an audio chunk's rows) takes
//     k - shift in all four components (set_position_mrope_1d, and llama_batch's broadcast
//     of a text token's one position), where shift sums n_tokens - n_pos() over the chunks
//     that end at or before k (server_tokens::pos_next).
// It depends only on the task's chunks and the index, so a reused prefix (slot cache, host
// prompt cache, a follow-up turn about the same image) holds exactly the rows a cold run
// writes there.
#pragma once

#include <cstdint>
#include <span>

#include "engine/batch.h"
#include "scheduler/task.h"

namespace hearth::scheduler {

// The rope position of index k of a sequence whose media chunks (ascending, not overlapping,
// TaskRequest::media) are `media`.
engine::RopePos media_rope_position(std::span<const MediaChunk> media, int32_t k);

}  // namespace hearth::scheduler
