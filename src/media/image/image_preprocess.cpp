#include "media/image/image_preprocess.h"

#include <algorithm>
#include <cmath>
#include <string>

#include "media/image/image_resize.h"
#include "media/image/image_steps.h"

namespace hearth::media {

PixelTensor to_tensor(const ImageRgb8& image, const PreprocessParams& params) {
  PixelTensor t;
  t.nx = image.nx;
  t.ny = image.ny;
  t.data.resize(image.rgb.size());
  const uint8_t* in = image.rgb.data();
  float* out = t.data.data();
  const float mean[3] = {params.image_mean[0], params.image_mean[1], params.image_mean[2]};
  const float std_dev[3] = {params.image_std[0], params.image_std[1], params.image_std[2]};
  for (size_t i = 0; i < image.rgb.size(); i += 3) {
    for (size_t c = 0; c < 3; ++c) {
      const float unit = static_cast<float>(in[i + c]) / 255.0f;
      out[i + c] = (unit - mean[c]) / std_dev[c];
    }
  }
  return t;
}

ImageSize size_preserving_ratio(ImageSize in, int32_t align, int32_t min_pixels, int32_t max_pixels,
                                int32_t longest_edge) {
  const int width = in.width;
  const int height = in.height;
  if (width <= 0 || height <= 0) return {0, 0};
  // Each takes a float, as the reference's lambdas do (ints convert on the call).
  auto round_by = [align](float x) {
    return static_cast<int>(std::round(x / static_cast<float>(align))) * align;
  };
  auto ceil_by = [align](float x) {
    return static_cast<int>(std::ceil(x / static_cast<float>(align))) * align;
  };
  auto floor_by = [align](float x) {
    return static_cast<int>(std::floor(x / static_cast<float>(align))) * align;
  };
  int w_bar = 0;
  int h_bar = 0;
  if (longest_edge > 0) {
    const float scale = std::min(static_cast<float>(longest_edge) / width,
                                 static_cast<float>(longest_edge) / height);
    w_bar = ceil_by(width * scale);
    h_bar = ceil_by(height * scale);
  } else {
    w_bar = std::max(align, round_by(width));
    h_bar = std::max(align, round_by(height));
  }
  const int64_t area = int64_t{h_bar} * w_bar;
  if (max_pixels > 0 && area > max_pixels) {
    const float beta = std::sqrt(static_cast<float>(height) * width / max_pixels);
    h_bar = std::max(align, floor_by(height / beta));
    w_bar = std::max(align, floor_by(width / beta));
  } else if (min_pixels > 0 && area < min_pixels) {
    const float beta =
        std::sqrt(static_cast<float>(min_pixels) / (static_cast<float>(height) * width));
    h_bar = ceil_by(height * beta);
    w_bar = ceil_by(width * beta);
  }
  return {w_bar, h_bar};
}

namespace {

Status params_error(const std::string& what) {
  return error(ErrorCode::kInvalidArgument, "image preprocessing: " + what);
}

// One square image_size x image_size image (gemma3, LLaVA-1.5).
Result<PreprocessedImage> preprocess_fixed(const ImageRgb8& image, const PreprocessParams& p) {
  if (p.image_size <= 0) return params_error("image_size must be positive");
  HEARTH_ASSIGN_OR_RETURN(
      ImageRgb8 resized,
      resize_image(image, {p.image_size, p.image_size}, p.resize_algo, p.resize_pad, p.pad_color));
  PreprocessedImage out;
  out.entries.push_back(to_tensor(resized, p));
  return out;
}

// One image of about the input's aspect ratio, both sides multiples of patch_size * n_merge,
// within the pixel limits (Qwen-VL, Pixtral).
Result<PreprocessedImage> preprocess_dynamic(const ImageRgb8& image, const PreprocessParams& p) {
  if (p.image_min_pixels <= 0 || p.image_max_pixels <= 0) {
    return params_error(
        "the dynamic-size preprocessor needs image_min_pixels and image_max_pixels");
  }
  const int32_t align = p.patch_size * p.n_merge;
  if (align <= 0) return params_error("patch_size * n_merge must be positive");
  const ImageSize target =
      size_preserving_ratio({image.nx, image.ny}, align, p.image_min_pixels, p.image_max_pixels, 0);
  HEARTH_ASSIGN_OR_RETURN(ImageRgb8 resized,
                          resize_image(image, target, p.resize_algo, p.resize_pad, p.pad_color));
  PreprocessedImage out;
  out.entries.push_back(to_tensor(resized, p));
  return out;
}

}  // namespace

Result<PreprocessedImage> preprocess_image(const ImageRgb8& image, const PreprocessParams& p) {
  if (image.nx <= 0 || image.ny <= 0 ||
      image.rgb.size() != static_cast<size_t>(image.nx) * static_cast<size_t>(image.ny) * 3) {
    return error(ErrorCode::kInvalidArgument,
                 "image: " + std::to_string(image.nx) + "x" + std::to_string(image.ny) + " with " +
                     std::to_string(image.rgb.size()) + " bytes is not an RGB image");
  }
  if (p.patch_size <= 0 || p.n_merge < 0) {
    return params_error("patch_size must be positive and n_merge not negative");
  }
  switch (p.family) {
    case ProjectorFamily::kGemma3:
      return preprocess_fixed(image, p);
    case ProjectorFamily::kLlava:
      if (!p.res_candidates.empty()) return preprocess_llava_uhd(image, p);
      return preprocess_fixed(image, p);
    case ProjectorFamily::kQwenVl:
    case ProjectorFamily::kPixtral:
    case ProjectorFamily::kGemma4v:
    case ProjectorFamily::kGemma4uv:
      return preprocess_dynamic(image, p);
    case ProjectorFamily::kIdefics3:
      return preprocess_idefics3(image, p);
    case ProjectorFamily::kInternVl:
      return preprocess_internvl(image, p);
    case ProjectorFamily::kLfm2:
      return preprocess_lfm2(image, p);
  }
  return params_error("unknown projector family");
}

}  // namespace hearth::media
