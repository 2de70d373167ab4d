// The tiled families: an overview (the whole image downscaled) plus tiles cut from a "refined"
// resize of the image (LLaVA-UHD style, mtmd_image_preprocessor_llava_uhd and its subclasses).
#include <algorithm>
#include <cmath>
#include <limits>
#include <string>

#include "media/image/image_resize.h"
#include "media/image/image_steps.h"

namespace hearth::media {
namespace {

struct Tile {
  int32_t x = 0;
  int32_t y = 0;
  ImageSize size;
};

// The reference's slice_instructions.
struct SliceInstructions {
  ImageSize overview_size;
  ImageSize refined_size;  // {0, 0} when untiled
  ImageSize grid_size;     // tiles per row, rows
  std::vector<Tile> tiles;
};

struct Sliced {
  ImageRgb8 overview;
  std::vector<ImageRgb8> tiles;
};

Status slicing_error(const std::string& what) {
  return error(ErrorCode::kInvalidArgument, "image preprocessing: " + what);
}

// Resizes to the overview size and, when there are tiles, to the refined size, then crops.
Result<Sliced> slice_image(const ImageRgb8& image, const SliceInstructions& inst,
                           const PreprocessParams& p) {
  Sliced out;
  HEARTH_ASSIGN_OR_RETURN(
      out.overview, resize_image(image, inst.overview_size, p.resize_algo_overview, p.pad_overview,
                                 p.pad_color_overview));
  if (inst.tiles.empty()) return out;
  HEARTH_ASSIGN_OR_RETURN(ImageRgb8 refined,
                          resize_image(image, inst.refined_size, p.resize_algo_refined,
                                       p.pad_refined, p.pad_color_refined));
  for (const Tile& t : inst.tiles) {
    if (t.x < 0 || t.y < 0 || t.size.width <= 0 || t.size.height <= 0 ||
        t.x + t.size.width > refined.nx || t.y + t.size.height > refined.ny) {
      return slicing_error("a tile falls outside the refined image");
    }
    out.tiles.push_back(crop_image(refined, t.x, t.y, t.size.width, t.size.height));
  }
  return out;
}

// Overview, then tiles, each normalized; the grid as given.
PreprocessedImage to_output(const Sliced& sliced, const SliceInstructions& inst,
                            const PreprocessParams& p) {
  PreprocessedImage out;
  out.overview = to_tensor(sliced.overview, p);
  for (const ImageRgb8& tile : sliced.tiles) out.entries.push_back(to_tensor(tile, p));
  out.grid_x = inst.grid_size.width;
  out.grid_y = inst.grid_size.height;
  return out;
}

// The candidate that keeps the most of the image's resolution after an aspect-preserving fit,
// wasting the least area on ties (LLaVA-NeXT's select_best_resolution).
ImageSize select_best_resolution(ImageSize original, const std::vector<ImageSize>& candidates) {
  ImageSize best;
  int64_t min_wasted = std::numeric_limits<int>::max();
  int64_t max_effective = 0;
  for (const ImageSize& c : candidates) {
    const float scale = std::min(static_cast<float>(c.width) / original.width,
                                 static_cast<float>(c.height) / original.height);
    const int64_t fit_w = static_cast<int>(original.width * scale);
    const int64_t fit_h = static_cast<int>(original.height * scale);
    const int64_t effective = std::min(fit_w * fit_h, int64_t{original.width} * original.height);
    const int64_t wasted = int64_t{c.width} * c.height - effective;
    if (effective > max_effective || (effective == max_effective && wasted < min_wasted)) {
      max_effective = effective;
      min_wasted = wasted;
      best = c;
    }
  }
  return best;
}

// Tiles of image_size over the best candidate grid; none when the image fits in one tile.
Result<SliceInstructions> pinpoint_instructions(ImageSize original, const PreprocessParams& p) {
  if (p.res_candidates.empty()) {
    return slicing_error("this projector needs resolution candidates (grid pinpoints)");
  }
  const int32_t slice = p.image_size;
  if (slice <= 0) return slicing_error("image_size must be positive");
  SliceInstructions inst;
  inst.overview_size = {slice, slice};
  if (original.width <= slice && original.height <= slice) return inst;
  const ImageSize refine = select_best_resolution(original, p.res_candidates);
  inst.refined_size = refine;
  for (int y = 0; y < refine.height; y += slice) {
    for (int x = 0; x < refine.width; x += slice) {
      inst.tiles.push_back(
          {x, y, {std::min(slice, refine.width - x), std::min(slice, refine.height - y)}});
    }
  }
  inst.grid_size = {refine.width / slice, refine.height / slice};
  return inst;
}

}  // namespace

Result<PreprocessedImage> preprocess_llava_uhd(const ImageRgb8& image, const PreprocessParams& p) {
  HEARTH_ASSIGN_OR_RETURN(SliceInstructions inst, pinpoint_instructions({image.nx, image.ny}, p));
  HEARTH_ASSIGN_OR_RETURN(Sliced sliced, slice_image(image, inst, p));
  return to_output(sliced, inst, p);
}

Result<PreprocessedImage> preprocess_internvl(const ImageRgb8& image, const PreprocessParams& p) {
  // As LLaVA-UHD; the projector places the overview after the tiles.
  return preprocess_llava_uhd(image, p);
}

// Longest edge to image_longest_edge keeping the ratio, both sides rounded up to multiples of
// image_size, cut into image_size tiles (the last row and column may be narrower only if
// the rounding did not reach a multiple); overview image_size square.
Result<PreprocessedImage> preprocess_idefics3(const ImageRgb8& image, const PreprocessParams& p) {
  const int32_t size = p.image_size;
  if (size <= 0) return slicing_error("image_size must be positive");
  const ImageSize refined =
      size_preserving_ratio({image.nx, image.ny}, size, std::max(0, p.image_min_pixels),
                            std::max(0, p.image_max_pixels), p.image_longest_edge);
  if (int64_t{refined.width} * refined.height > kMaxPreprocessedPixels) {
    return slicing_error("the refined image is over the preprocessing limit");
  }
  SliceInstructions inst;
  inst.overview_size = {size, size};
  inst.refined_size = refined;
  inst.grid_size = {static_cast<int>(std::ceil(static_cast<float>(refined.width) / size)),
                    static_cast<int>(std::ceil(static_cast<float>(refined.height) / size))};
  for (int y = 0; y < refined.height; y += size) {
    for (int x = 0; x < refined.width; x += size) {
      inst.tiles.push_back(
          {x, y, {std::min(size, refined.width - x), std::min(size, refined.height - y)}});
    }
  }
  HEARTH_ASSIGN_OR_RETURN(Sliced sliced, slice_image(image, inst, p));
  return to_output(sliced, inst, p);
}

namespace {

// LFM2's tiling constants (its processor_config.json, as the reference hard-codes them).
constexpr int kLfm2MinTiles = 2;
constexpr int kLfm2MaxTiles = 10;
constexpr float kLfm2MaxPixelsTolerance = 2.0f;
constexpr int kLfm2TileSize = 512;

// Tiles only when the image, rounded to whole merged patches, exceeds twice max_pixels.
bool lfm2_should_tile(ImageSize original, const PreprocessParams& p) {
  const int align = p.patch_size * p.n_merge;
  auto round_by = [align](float x) {
    return static_cast<int>(std::nearbyint(static_cast<double>(x) / align)) * align;
  };
  const int h_bar = std::max(p.patch_size, round_by(original.height));
  const int w_bar = std::max(p.patch_size, round_by(original.width));
  return static_cast<double>(h_bar) * static_cast<double>(w_bar) >
         static_cast<double>(p.image_max_pixels) * kLfm2MaxPixelsTolerance;
}

// Every w x h grid with 2..10 tiles, ordered by tile count. std::sort (not stable) on the same
// sequence as the reference: ties between equal counts then resolve the same way.
std::vector<ImageSize> lfm2_target_ratios() {
  std::vector<ImageSize> ratios;
  for (int n = kLfm2MinTiles; n <= kLfm2MaxTiles; n++) {
    for (int w = 1; w <= n; w++) {
      for (int h = 1; h <= n; h++) {
        if (w * h < kLfm2MinTiles || w * h > kLfm2MaxTiles) continue;
        const bool found = std::any_of(ratios.begin(), ratios.end(), [&](const ImageSize& r) {
          return r.width == w && r.height == h;
        });
        if (!found) ratios.push_back({w, h});
      }
    }
  }
  std::sort(ratios.begin(), ratios.end(), [](const ImageSize& a, const ImageSize& b) {
    return a.width * a.height < b.width * b.height;
  });
  return ratios;
}

// The grid whose aspect ratio is closest to the image's; on a tie the later (larger) grid
// wins when the image covers more than half of it.
ImageSize lfm2_grid(ImageSize original) {
  const float aspect = static_cast<float>(original.width) / original.height;
  const float area = static_cast<float>(original.width * original.height);
  float best_diff = std::numeric_limits<float>::max();
  ImageSize best = {1, 1};
  for (const ImageSize& r : lfm2_target_ratios()) {
    const float diff = std::abs(aspect - static_cast<float>(r.width) / r.height);
    if (diff < best_diff) {
      best_diff = diff;
      best = r;
    } else if (diff == best_diff) {
      const float target_area =
          static_cast<float>(kLfm2TileSize * kLfm2TileSize * r.width * r.height);
      if (area > 0.5f * target_area) best = r;
    }
  }
  return best;
}

Result<SliceInstructions> lfm2_instructions(ImageSize original, const PreprocessParams& p) {
  const int32_t align = p.patch_size * p.n_merge;
  if (align <= 0) return slicing_error("patch_size * n_merge must be positive");
  SliceInstructions inst;
  inst.overview_size =
      size_preserving_ratio(original, align, p.image_min_pixels, p.image_max_pixels, 0);
  if (!lfm2_should_tile(original, p)) return inst;
  const ImageSize grid = lfm2_grid(original);
  inst.grid_size = grid;
  inst.refined_size = {kLfm2TileSize * grid.width, kLfm2TileSize * grid.height};
  for (int row = 0; row < grid.height; row++) {
    for (int col = 0; col < grid.width; col++) {
      inst.tiles.push_back(
          {col * kLfm2TileSize, row * kLfm2TileSize, {kLfm2TileSize, kLfm2TileSize}});
    }
  }
  return inst;
}

}  // namespace

// Large images: 512-px tiles plus a thumbnail (the overview). Others: one dynamic-size image
// as the only entry, with no overview (which would add a thumbnail marker to the prompt).
Result<PreprocessedImage> preprocess_lfm2(const ImageRgb8& image, const PreprocessParams& p) {
  HEARTH_ASSIGN_OR_RETURN(SliceInstructions inst, lfm2_instructions({image.nx, image.ny}, p));
  HEARTH_ASSIGN_OR_RETURN(Sliced sliced, slice_image(image, inst, p));
  if (!inst.tiles.empty()) return to_output(sliced, inst, p);
  PreprocessedImage out;
  out.entries.push_back(to_tensor(sliced.overview, p));
  return out;
}

}  // namespace hearth::media
