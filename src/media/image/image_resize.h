// Resizing, padding and cropping of 8-bit RGB images, step for step as the reference's
// img_tool (tools/mtmd/mtmd-image.cpp) so that the pixels come out bit-identical: the same
// float and double expressions in the same order, the same truncations.
#pragma once

#include <array>
#include <cstdint>

#include "base/status.h"
#include "media/image/image_decode.h"
#include "media/image/image_preprocess.h"

namespace hearth::media {

// Resizes `src` to `target` with `algo`. PadStyle::kNone stretches; the other styles scale to
// fit inside `target` keeping the aspect ratio and centre the result on `pad_color`. A source
// already of the target size is copied whatever the style. Errors only on sizes that are zero
// or over the output limit.
Result<ImageRgb8> resize_image(const ImageRgb8& src, ImageSize target, ResizeAlgo algo,
                               PadStyle pad, std::array<uint8_t, 3> pad_color);

// The w x h block at (x, y); the caller keeps it inside `src`.
ImageRgb8 crop_image(const ImageRgb8& src, int32_t x, int32_t y, int32_t w, int32_t h);

}  // namespace hearth::media
