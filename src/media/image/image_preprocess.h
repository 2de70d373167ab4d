// The reference's image preprocessors (tools/mtmd/mtmd-image.cpp, chosen per projector type in
// mtmd.cpp, configured by clip.cpp's loader): decoded RGB8 pixels in, the f32 pixel tensors a
// vision encoder reads out, bit-identical with the reference.
#pragma once

#include <array>
#include <cstdint>
#include <string_view>
#include <vector>

#include "base/status.h"
#include "media/image/image_decode.h"

namespace hearth::media {

struct ImageSize {
  int32_t width = 0;
  int32_t height = 0;
  bool operator==(const ImageSize&) const = default;
};

// The reference's resize_algo and pad_style.
enum class ResizeAlgo { kBilinear, kBicubic, kBicubicPillow, kLanczos };
enum class PadStyle { kNone, kCeil, kNearest };

// Projector types grouped by the preprocessing they share.
enum class ProjectorFamily {
  kGemma3,    // "gemma3": fixed square, bilinear, letterboxed on black
  kLlava,     // "mlp" (and mlp_norm), "ldp", "ldpv2": fixed square (bicubic, padded with
              // the CLIP mean colour) or, with grid pinpoints, LLaVA-1.6 overview + tiles
  kQwenVl,    // "qwen2vl_merger", "qwen2.5vl_merger", "qwen3vl_merger", "qwen2.5o" (vision):
              // dynamic resolution
  kPixtral,   // "pixtral": dynamic resolution
  kIdefics3,  // "idefics3": overview + tiles of image_size after a longest-edge resize
  kInternVl,  // "internvl": tiles from the DHR candidate grids, then the overview
  kLfm2,      // "lfm2": one dynamic image, or 512-px tiles + thumbnail for large inputs
  kGemma4v,   // "gemma4v": dynamic resolution, 40..280 tokens by default
  kGemma4uv,  // "gemma4uv": as gemma4v with the merge folded into the patch size
};

// The family of a clip.projector_type string; kUnsupported for the others.
Result<ProjectorFamily> projector_family_from_name(std::string_view projector_type);

// What the projector file (and --image-min-tokens / --image-max-tokens) say; the input of
// preprocess_params_for. Zero means the key is absent.
struct ProjectorHparams {
  ProjectorFamily family = ProjectorFamily::kGemma3;
  int32_t image_size = 0;  // clip.vision.image_size
  int32_t patch_size = 0;  // clip.vision.patch_size
  std::array<float, 3> image_mean = {0, 0, 0};
  std::array<float, 3> image_std = {1, 1, 1};
  // clip.vision.spatial_merge_size (qwen, pixtral) or clip.vision.projector.scale_factor
  // (gemma3, gemma4v/uv, idefics3, internvl, lfm2); the family's default when absent.
  int32_t n_merge = 0;
  int32_t preproc_image_size = 0;       // clip.vision.preproc_image_size (idefics3)
  std::vector<int32_t> grid_pinpoints;  // clip.vision.image_grid_pinpoints: w0, h0, w1, h1...
  int32_t preproc_min_tiles = 0;        // clip.vision.preproc_min_tiles (internvl)
  int32_t preproc_max_tiles = 0;        // clip.vision.preproc_max_tiles (internvl)
  int32_t image_min_tokens = -1;        // --image-min-tokens; -1 = not given
  int32_t image_max_tokens = -1;        // --image-max-tokens; -1 = not given
};

// Everything the preprocessors read: the subset of the reference's clip_hparams used by
// mtmd-image.cpp for the families above.
struct PreprocessParams {
  ProjectorFamily family = ProjectorFamily::kGemma3;
  int32_t image_size = 0;
  int32_t patch_size = 0;
  int32_t n_merge = 1;  // patch merges per side
  std::array<float, 3> image_mean = {0, 0, 0};
  std::array<float, 3> image_std = {1, 1, 1};
  int32_t image_min_pixels = -1;   // -1 = unset
  int32_t image_max_pixels = -1;   // -1 = unset
  int32_t image_longest_edge = 0;  // 0 = unset
  // Single-image resize (fixed and dynamic sizes).
  ResizeAlgo resize_algo = ResizeAlgo::kBicubic;
  PadStyle resize_pad = PadStyle::kCeil;
  std::array<uint8_t, 3> pad_color = {0, 0, 0};
  // Tiled families: the tiles are cut from the "refined" image; the overview is separate.
  std::vector<ImageSize> res_candidates;
  ResizeAlgo resize_algo_refined = ResizeAlgo::kBicubic;
  ResizeAlgo resize_algo_overview = ResizeAlgo::kBilinear;
  PadStyle pad_refined = PadStyle::kCeil;
  PadStyle pad_overview = PadStyle::kNone;
  std::array<uint8_t, 3> pad_color_refined = {0, 0, 0};
  std::array<uint8_t, 3> pad_color_overview = {0, 0, 0};
};

// The parameters the reference's clip loader derives from a projector file for its family
// (default merge factors, resize algorithms, padding, token limits turned into pixel limits,
// InternVL's candidate grids). Errors name a missing or out-of-range value.
Result<PreprocessParams> preprocess_params_for(const ProjectorHparams& file);

// One normalized image: ny rows of nx pixels, each R, G, B as f32 ((v / 255 - mean) / std),
// row-major and interleaved: data[(y * nx + x) * 3 + c]. The reference's clip_image_f32 buf.
struct PixelTensor {
  int32_t nx = 0;
  int32_t ny = 0;
  std::vector<float> data;
};

// The reference's mtmd_image_preproc_out. `entries` are the images the encoder runs, in the
// reference's order (tiles row by row, or the one resized image); `overview` is the downscaled
// whole image of the tiled families (nx == 0 when there is none). Whether the overview goes
// before or after the tiles in the prompt is the projector's business (mtmd's ov_img_first).
struct PreprocessedImage {
  std::vector<PixelTensor> entries;
  PixelTensor overview;
  int32_t grid_x = 0;  // tiles per row, 0 when untiled
  int32_t grid_y = 0;  // tile rows
  bool has_overview() const { return overview.nx > 0 || overview.ny > 0; }
};

// Runs the family's preprocessor. Errors on parameters the reference would assert on (zero
// patch size, missing pixel limits, no candidates) and on outputs over a sanity limit.
Result<PreprocessedImage> preprocess_image(const ImageRgb8& image, const PreprocessParams& params);

// The largest width x height any single preprocessed tensor may have (a guard against
// parameters that would ask for absurd sizes): 64 Mpx.
inline constexpr int64_t kMaxPreprocessedPixels = int64_t{64} * 1000 * 1000;

}  // namespace hearth::media
