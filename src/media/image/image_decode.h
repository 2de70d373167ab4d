// Decoding an uploaded image into 8-bit RGB, as the reference does (stb_image asked for three
// channels: alpha is dropped, grey is replicated, 16-bit samples keep their high byte, a GIF
// gives its first frame), with the size limits checked on the header before any pixel buffer
// is allocated.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "base/status.h"

namespace hearth::media {

// Bounds on what decode_image accepts; each is checked before decoding.
struct ImageLimits {
  // Encoded bytes. stb_image takes an int length, so never more than INT_MAX.
  int64_t max_bytes = int64_t{64} << 20;
  // Width or height in pixels.
  int32_t max_side = 16384;
  // Width x height. 64 Mpx is 192 MiB of RGB8 and 768 MiB of f32 before any resize; larger
  // photographs are rare and only waste memory, since every preprocessor scales down to at
  // most a few Mpx.
  int64_t max_pixels = int64_t{64} * 1000 * 1000;
};

// Decoded pixels: ny rows of nx pixels, each R, G, B (row-major, interleaved): rgb.size() ==
// nx * ny * 3. The reference's clip_image_u8 / mtmd_bitmap layout.
struct ImageRgb8 {
  int32_t nx = 0;
  int32_t ny = 0;
  std::vector<uint8_t> rgb;
};

// Decodes PNG, JPEG (baseline and progressive), GIF (first frame), BMP, TGA, PSD, PIC and PNM:
// what stb_image reads, less Radiance HDR and 16-bit greyscale PNM (which Debian's stb_image
// 2.27 mishandles; see header_checks.h), and WebP (the reference reads it only through an
// external ffmpeg), each refused by name. Errors start with "image: " and name the problem (empty
// input, too many bytes, unrecognised or corrupt data, a size over the limits).
Result<ImageRgb8> decode_image(std::span<const uint8_t> bytes, const ImageLimits& limits = {});

}  // namespace hearth::media
