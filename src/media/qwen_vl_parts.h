// Internal to hearth_media: what the Qwen-VL projectors (qwen2vl_projector.cpp,
// qwen3vl_projector.cpp) share, defined in qwen2vl_projector.cpp. The patch grid is gx x gy
// patches; the merger reads 2 x 2 squares of them, pw = gx / 2 by ph = gy / 2 squares, each
// four consecutive tokens (dy, dx) in the order the blocks see the squares.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "base/status.h"
#include "base/thread_pool.h"
#include "engine/weights.h"
#include "media/gelu_mlp.h"
#include "media/vit_blocks.h"

namespace hearth::media::detail {

// order[i]: the raster index (sy * pw + sx) of the i-th square the blocks see; windows: the
// [begin, end) ranges of squares that attend among themselves (empty: all attend to all).
struct SquareOrder {
  std::vector<int64_t> order;
  std::vector<std::pair<int64_t, int64_t>> windows;
};

// Squares in raster order.
SquareOrder raster_squares(int64_t n_squares);
// Qwen2.5-VL's windows of `side` x `side` squares in raster order (the last ones in a row or
// column cut short), squares in raster order inside each.
SquareOrder window_squares(int64_t pw, int64_t ph, int64_t side);

// The patches [gy * gx][E] (raster order) as the blocks' tokens: token 4i + 2dy + dx is patch
// (2 sy + dy, 2 sx + dx) of square order[i]. Fills plan.row / plan.col with each token's
// patch row and column, and plan.windows with the squares' windows in tokens.
std::vector<float> gather_squares(const std::vector<float>& patches, int64_t gx, int64_t E,
                                  const SquareOrder& squares, VitRunPlan& plan);

// The temporal patch pair on one still image: the first kernel (with the patch bias, if any)
// and `second` over the same pixels, added. [gy * gx][E] in raster order.
std::vector<float> embed_still_image(const VitBlocks& blocks, const engine::WeightMatrix& second,
                                     const float* pixels, int32_t nx, int32_t ny, ThreadPool& pool);

// The error for an image whose sides are not multiples of 2 patches (nullptr pixels too).
Status check_square_sides(const std::string& type, const float* pixels, int32_t nx, int32_t ny,
                          int32_t patch_size);

}  // namespace hearth::media::detail
