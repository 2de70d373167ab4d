// Steps shared by the preprocessors (image_preprocess.cpp) and the tiled families
// (image_slicing.cpp). Internal to hearth_media_image.
#pragma once

#include "base/status.h"
#include "media/image/image_decode.h"
#include "media/image/image_preprocess.h"

namespace hearth::media {

// u8 -> v / 255 -> (v - mean) / std, in two float roundings as the reference's from_u8 and
// normalize.
PixelTensor to_tensor(const ImageRgb8& image, const PreprocessParams& params);

// The reference's calc_size_preserved_ratio ("smart resize"): the size closest to `in` with
// both sides multiples of `align`, scaled first to `longest_edge` (when > 0) and then into
// [min_pixels, max_pixels] (each when > 0). {0, 0} for an empty input.
ImageSize size_preserving_ratio(ImageSize in, int32_t align, int32_t min_pixels, int32_t max_pixels,
                                int32_t longest_edge);

// The tiled families (image_slicing.cpp).
Result<PreprocessedImage> preprocess_llava_uhd(const ImageRgb8& image, const PreprocessParams& p);
Result<PreprocessedImage> preprocess_idefics3(const ImageRgb8& image, const PreprocessParams& p);
Result<PreprocessedImage> preprocess_internvl(const ImageRgb8& image, const PreprocessParams& p);
Result<PreprocessedImage> preprocess_lfm2(const ImageRgb8& image, const PreprocessParams& p);

}  // namespace hearth::media
