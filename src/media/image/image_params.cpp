// From a projector file's hyper-parameters to PreprocessParams, as the reference's clip loader
// (clip.cpp, load_hparams) sets them per projector type.
#include <algorithm>
#include <climits>
#include <string>

#include "media/image/image_preprocess.h"

namespace hearth::media {
namespace {

Status param_error(const std::string& what) {
  return error(ErrorCode::kInvalidArgument, "image preprocessing: " + what);
}

// clip_hparams::set_limit_image_tokens(min, max): token counts (given, else the family's
// defaults) times the pixels of one merged patch.
// Computed in 64 bits: a product over int32 is refused rather than wrapped.
Result<int32_t> tokens_to_pixels(const PreprocessParams& p, int64_t tokens) {
  const int64_t patch_area = int64_t{p.patch_size} * p.patch_size * p.n_merge * p.n_merge;
  const int64_t pixels = tokens * patch_area;
  if (pixels > INT32_MAX) {
    return param_error(std::to_string(tokens) + " image tokens is too many pixels");
  }
  return static_cast<int32_t>(pixels);
}

Status set_token_limits(PreprocessParams& p, const ProjectorHparams& file, int32_t default_min,
                        int32_t default_max) {
  HEARTH_ASSIGN_OR_RETURN(
      p.image_min_pixels,
      tokens_to_pixels(p, file.image_min_tokens > 0 ? file.image_min_tokens : default_min));
  HEARTH_ASSIGN_OR_RETURN(
      p.image_max_pixels,
      tokens_to_pixels(p, file.image_max_tokens > 0 ? file.image_max_tokens : default_max));
  return Status::ok();
}

// clip_hparams::set_limit_image_tokens(): only what the user gave.
Status set_given_token_limits(PreprocessParams& p, const ProjectorHparams& file) {
  if (file.image_min_tokens > 0) {
    HEARTH_ASSIGN_OR_RETURN(p.image_min_pixels, tokens_to_pixels(p, file.image_min_tokens));
  }
  if (file.image_max_tokens > 0) {
    HEARTH_ASSIGN_OR_RETURN(p.image_max_pixels, tokens_to_pixels(p, file.image_max_tokens));
  }
  return Status::ok();
}

// InternVL's dynamic-high-resolution grids: a x b tiles for every a, b with
// min_tiles <= a, b and a * b <= max_tiles (set_internvl_dhr_res_candidates).
void set_internvl_candidates(PreprocessParams& p, int32_t min_tiles, int32_t max_tiles) {
  if (min_tiles < 1) return;
  for (int a = min_tiles; a <= max_tiles; ++a) {
    const int b_lo = std::max((min_tiles + a - 1) / a, min_tiles);
    const int b_hi = std::min(max_tiles / a, max_tiles);
    for (int b = b_lo; b <= b_hi; ++b) {
      p.res_candidates.push_back({a * p.image_size, b * p.image_size});
    }
  }
}

void apply_llava(PreprocessParams& p) {
  p.pad_color = {122, 116, 104};  // the CLIP mean colour
  if (!p.res_candidates.empty()) {
    p.resize_pad = PadStyle::kCeil;
    p.resize_algo = ResizeAlgo::kBilinear;
  } else {
    p.pad_overview = PadStyle::kNone;
    p.pad_refined = PadStyle::kCeil;
    p.pad_color_refined = {122, 116, 104};
    p.resize_algo_refined = ResizeAlgo::kBicubic;
    p.resize_algo_overview = ResizeAlgo::kBilinear;
  }
}

Status apply_family(PreprocessParams& p, const ProjectorHparams& file) {
  const int32_t merge = file.n_merge;
  switch (file.family) {
    case ProjectorFamily::kLlava:
      apply_llava(p);
      return Status::ok();
    case ProjectorFamily::kGemma3:
      p.n_merge = merge > 0 ? merge : 4;
      p.resize_algo = ResizeAlgo::kBilinear;
      return Status::ok();
    case ProjectorFamily::kQwenVl:
      p.n_merge = merge > 0 ? merge : 2;
      p.resize_algo = ResizeAlgo::kBilinear;
      return set_token_limits(p, file, 8, 4096);
    case ProjectorFamily::kPixtral:
      p.n_merge = merge > 0 ? merge : 1;
      p.resize_algo = ResizeAlgo::kBilinear;
      return set_token_limits(p, file, 8, 1024);
    case ProjectorFamily::kIdefics3:
      if (merge > 0) p.n_merge = merge;
      if (file.preproc_image_size > 0) p.image_longest_edge = file.preproc_image_size;
      return set_given_token_limits(p, file);
    case ProjectorFamily::kInternVl: {
      if (merge > 0) p.n_merge = merge;
      const int32_t min_tiles = file.preproc_min_tiles > 0 ? file.preproc_min_tiles : 1;
      const int32_t max_tiles = file.preproc_max_tiles > 0 ? file.preproc_max_tiles : 12;
      if (min_tiles > max_tiles || max_tiles > 64) {
        return param_error("InternVL tile range " + std::to_string(min_tiles) + ".." +
                           std::to_string(max_tiles) + " is not within 1..64");
      }
      set_internvl_candidates(p, min_tiles, max_tiles);
      return Status::ok();
    }
    case ProjectorFamily::kGemma4v:
    case ProjectorFamily::kGemma4uv:
      p.n_merge = merge > 0 ? merge : 3;  // the pooling kernel
      p.resize_algo = ResizeAlgo::kBilinear;
      if (file.family == ProjectorFamily::kGemma4uv) {
        // The "unified" variant merges in its patch convolution: bigger patches, no merge.
        p.patch_size *= p.n_merge;
        p.n_merge = 1;
      }
      return set_token_limits(p, file, 40, 280);
    case ProjectorFamily::kLfm2:
      p.resize_algo = ResizeAlgo::kBilinear;
      p.resize_algo_refined = ResizeAlgo::kBilinear;
      p.resize_algo_overview = ResizeAlgo::kBilinear;
      if (merge > 0) p.n_merge = merge;
      return set_token_limits(p, file, 64, 256);
  }
  return param_error("unknown projector family");
}

}  // namespace

Result<ProjectorFamily> projector_family_from_name(std::string_view name) {
  if (name == "gemma3") return ProjectorFamily::kGemma3;
  // "mlp" covers mlp_norm, which the reference only infers from an mm.3 tensor.
  if (name == "mlp" || name == "ldp" || name == "ldpv2") return ProjectorFamily::kLlava;
  // "qwen2.5o" (Qwen2.5-Omni) is qwen2.5vl_merger for its vision half.
  if (name == "qwen2vl_merger" || name == "qwen2.5vl_merger" || name == "qwen3vl_merger" ||
      name == "qwen2.5o") {
    return ProjectorFamily::kQwenVl;
  }
  if (name == "pixtral") return ProjectorFamily::kPixtral;
  if (name == "idefics3") return ProjectorFamily::kIdefics3;
  if (name == "internvl") return ProjectorFamily::kInternVl;
  if (name == "lfm2") return ProjectorFamily::kLfm2;
  if (name == "gemma4v") return ProjectorFamily::kGemma4v;
  if (name == "gemma4uv") return ProjectorFamily::kGemma4uv;
  return error(ErrorCode::kUnsupported,
               "image preprocessing: projector type '" + std::string(name) + "' is not supported");
}

Result<PreprocessParams> preprocess_params_for(const ProjectorHparams& file) {
  // Bounds that keep every product below in int32 (patch_area, pixel limits).
  if (file.image_size <= 0 || file.image_size > 8192) {
    return param_error("image_size " + std::to_string(file.image_size) + " is not in 1..8192");
  }
  if (file.patch_size <= 0 || file.patch_size > 1024) {
    return param_error("patch_size " + std::to_string(file.patch_size) + " is not in 1..1024");
  }
  if (file.n_merge < 0 || file.n_merge > 16) {
    return param_error("merge factor " + std::to_string(file.n_merge) + " is not in 0..16");
  }
  if (file.image_min_tokens > 1000000 || file.image_max_tokens > 1000000) {
    return param_error("image token limits over 1000000");
  }
  if (file.preproc_image_size < 0 || file.preproc_image_size > 65536) {
    return param_error("preproc_image_size " + std::to_string(file.preproc_image_size) +
                       " is not in 0..65536");
  }
  if (file.grid_pinpoints.size() % 2 != 0) {
    return param_error("image_grid_pinpoints has an odd number of values");
  }
  PreprocessParams p;
  p.family = file.family;
  p.image_size = file.image_size;
  p.patch_size = file.patch_size;
  p.image_mean = file.image_mean;
  p.image_std = file.image_std;
  for (size_t i = 0; i < file.grid_pinpoints.size(); i += 2) {
    const int32_t w = file.grid_pinpoints[i];
    const int32_t h = file.grid_pinpoints[i + 1];
    if (w <= 0 || h <= 0 || w > 65536 || h > 65536) {
      return param_error("image_grid_pinpoints has a size out of range");
    }
    p.res_candidates.push_back({w, h});
  }
  HEARTH_RETURN_IF_ERROR(apply_family(p, file));
  if (p.image_max_pixels > 0 && p.image_max_pixels < p.image_min_pixels) {
    return param_error("image_max_pixels is less than image_min_pixels");
  }
  return p;
}

}  // namespace hearth::media
