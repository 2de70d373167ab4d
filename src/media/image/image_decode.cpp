#include "media/image/image_decode.h"

#include "media/image/header_checks.h"

#include <stb_image.h>

#include <climits>
#include <cstring>
#include <memory>
#include <string>
#include <string_view>

namespace hearth::media {
namespace {

Status image_error(ErrorCode code, const std::string& what) {
  return error(code, "image: " + what);
}

std::string stb_reason() {
  const char* reason = stbi_failure_reason();
  return reason != nullptr ? reason : "unknown error";
}

bool starts_with(std::span<const uint8_t> bytes, std::string_view prefix) {
  return bytes.size() >= prefix.size() &&
         std::memcmp(bytes.data(), prefix.data(), prefix.size()) == 0;
}

struct StbFree {
  void operator()(stbi_uc* p) const { stbi_image_free(p); }
};

// Refuses a size before anything of that size is allocated.
Status check_size(int64_t nx, int64_t ny, const ImageLimits& limits) {
  if (nx <= 0 || ny <= 0) {
    return image_error(ErrorCode::kCorruptFile,
                       "zero-size image (" + std::to_string(nx) + "x" + std::to_string(ny) + ")");
  }
  if (nx > limits.max_side || ny > limits.max_side) {
    return image_error(ErrorCode::kResourceExhausted,
                       std::to_string(nx) + "x" + std::to_string(ny) + " has a side over the " +
                           std::to_string(limits.max_side) + "-pixel limit");
  }
  if (nx * ny > limits.max_pixels) {
    return image_error(ErrorCode::kResourceExhausted,
                       std::to_string(nx) + "x" + std::to_string(ny) + " is over the " +
                           std::to_string(limits.max_pixels) + "-pixel limit");
  }
  return Status::ok();
}

}  // namespace

Result<ImageRgb8> decode_image(std::span<const uint8_t> bytes, const ImageLimits& limits) {
  if (bytes.empty()) return image_error(ErrorCode::kInvalidArgument, "empty input");
  const int64_t byte_limit = std::min<int64_t>(limits.max_bytes, INT_MAX);
  if (static_cast<int64_t>(bytes.size()) > byte_limit) {
    return image_error(ErrorCode::kResourceExhausted,
                       std::to_string(bytes.size()) + " bytes is over the " +
                           std::to_string(byte_limit) + "-byte limit");
  }
  if (bytes.size() >= 12 && std::memcmp(bytes.data(), "RIFF", 4) == 0 &&
      std::memcmp(bytes.data() + 8, "WEBP", 4) == 0) {
    // The reference decodes WebP only through an external ffmpeg (when built with video
    // support); stb_image cannot.
    return image_error(ErrorCode::kUnsupported, "WebP images are not supported");
  }
  if (starts_with(bytes, "#?RADIANCE\n") || starts_with(bytes, "#?RGBE\n")) {
    // Debian's stb_image 2.27 loops forever on a zero run length in Radiance HDR data (and
    // writes past its scanline on a long one); 2.28 fixed both. Refused rather than decoded.
    return image_error(ErrorCode::kUnsupported, "Radiance HDR images are not supported");
  }
  HEARTH_RETURN_IF_ERROR(check_jpeg_structure(bytes));
  HEARTH_RETURN_IF_ERROR(check_pnm_header(bytes));
  const int len = static_cast<int>(bytes.size());
  // The header first: a small file may claim a huge canvas (a decompression bomb).
  int nx = 0;
  int ny = 0;
  int channels = 0;
  if (stbi_info_from_memory(bytes.data(), len, &nx, &ny, &channels) == 0) {
    return image_error(ErrorCode::kCorruptFile,
                       "unrecognised or corrupt image (" + stb_reason() + ")");
  }
  HEARTH_RETURN_IF_ERROR(check_size(nx, ny, limits));
  // After the size check, which bounds the work this inflates.
  HEARTH_RETURN_IF_ERROR(check_png_inflated_size(bytes));

  int dec_nx = 0;
  int dec_ny = 0;
  std::unique_ptr<stbi_uc, StbFree> pixels(
      stbi_load_from_memory(bytes.data(), len, &dec_nx, &dec_ny, &channels, 3));
  if (pixels == nullptr) {
    return image_error(ErrorCode::kCorruptFile, "cannot decode (" + stb_reason() + ")");
  }
  HEARTH_RETURN_IF_ERROR(check_size(dec_nx, dec_ny, limits));
  ImageRgb8 image;
  image.nx = dec_nx;
  image.ny = dec_ny;
  const size_t n = static_cast<size_t>(dec_nx) * static_cast<size_t>(dec_ny) * 3;
  image.rgb.assign(pixels.get(), pixels.get() + n);
  return image;
}

}  // namespace hearth::media
