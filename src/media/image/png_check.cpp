// check_png_inflated_size (header_checks.h): counts the inflated bytes of a PNG's IDAT stream
// with zlib, in a fixed buffer, stopping as soon as the count passes the bound.
#include <zlib.h>

#include <algorithm>
#include <array>
#include <cstring>
#include <string>

#include "media/image/header_checks.h"

namespace hearth::media {
namespace {

constexpr uint8_t kPngSignature[8] = {0x89, 'P', 'N', 'G', '\r', '\n', 0x1a, '\n'};

uint32_t read_be32(std::span<const uint8_t> b, size_t at) {
  return (uint32_t{b[at]} << 24) | (uint32_t{b[at + 1]} << 16) | (uint32_t{b[at + 2]} << 8) |
         b[at + 3];
}

// Twice the inflated size stb_image needs for a PNG of this header: one filter byte and the
// packed samples per row (Adam7's passes need a little more than that, hence the factor).
uint64_t inflated_bound(uint32_t width, uint32_t height, uint8_t depth, uint8_t color_type) {
  uint64_t channels = 4;  // the largest, for a colour type stb_image will refuse anyway
  switch (color_type) {
    case 0:
      channels = 1;
      break;  // grey
    case 2:
      channels = 3;
      break;  // RGB
    case 3:
      channels = 1;
      break;  // palette index
    case 4:
      channels = 2;
      break;  // grey + alpha
    default:
      break;  // 6: RGBA
  }
  const uint64_t row = 1 + (uint64_t{width} * channels * std::min<uint8_t>(depth, 16) + 7) / 8;
  return 2 * row * height + 4096;
}

// Inflates the IDAT chunks in order; false once more than `bound` bytes come out.
class InflateCounter {
 public:
  InflateCounter(bool raw_deflate, uint64_t bound) : bound_(bound) {
    ok_ = inflateInit2(&stream_, raw_deflate ? -15 : 15) == Z_OK;
  }
  ~InflateCounter() {
    if (ok_) inflateEnd(&stream_);
  }
  InflateCounter(const InflateCounter&) = delete;
  InflateCounter& operator=(const InflateCounter&) = delete;

  // Feeds one chunk's data; false when the bound is passed.
  bool feed(std::span<const uint8_t> data) {
    if (!ok_ || done_) return true;
    stream_.next_in = const_cast<Bytef*>(data.data());
    stream_.avail_in = static_cast<uInt>(data.size());
    while (stream_.avail_in > 0 && !done_) {
      stream_.next_out = out_.data();
      stream_.avail_out = static_cast<uInt>(out_.size());
      const int rc = inflate(&stream_, Z_NO_FLUSH);
      total_ += out_.size() - stream_.avail_out;
      if (total_ > bound_) return false;
      // End of stream, or corrupt data that stb_image will report itself.
      if (rc != Z_OK) done_ = true;
    }
    return true;
  }

 private:
  z_stream stream_{};
  bool ok_ = false;
  bool done_ = false;
  uint64_t bound_ = 0;
  uint64_t total_ = 0;
  std::array<Bytef, 64 * 1024> out_{};
};

}  // namespace

Status check_png_inflated_size(std::span<const uint8_t> bytes) {
  if (bytes.size() < 33 || std::memcmp(bytes.data(), kPngSignature, 8) != 0) return Status::ok();
  size_t pos = 8;
  // Apple's CgBI PNGs (a CgBI chunk first) hold raw deflate data without the zlib header.
  const bool cgbi = std::memcmp(bytes.data() + 12, "CgBI", 4) == 0;
  if (cgbi) pos += 12 + read_be32(bytes, 8);
  if (pos + 8 + 13 > bytes.size() || std::memcmp(bytes.data() + pos + 4, "IHDR", 4) != 0) {
    return Status::ok();
  }
  const uint32_t width = read_be32(bytes, pos + 8);
  const uint32_t height = read_be32(bytes, pos + 12);
  InflateCounter counter(cgbi, inflated_bound(width, height, bytes[pos + 16], bytes[pos + 17]));
  while (pos + 8 <= bytes.size()) {
    const uint32_t length = read_be32(bytes, pos);
    const size_t data = pos + 8;
    const bool idat = std::memcmp(bytes.data() + pos + 4, "IDAT", 4) == 0;
    if (length > bytes.size() - data) {
      // stb_image sizes its buffer for an IDAT chunk from the declared length before reading
      // it (up to 4 GB for a few bytes of file), then fails; refuse first.
      if (idat) {
        return error(ErrorCode::kCorruptFile,
                     "image: corrupt PNG (an IDAT chunk runs past the end of the file)");
      }
      break;  // truncated: stb_image reports it
    }
    if (idat && !counter.feed(bytes.subspan(data, length))) {
      return error(ErrorCode::kResourceExhausted,
                   "image: PNG data inflates to more than its " + std::to_string(width) + "x" +
                       std::to_string(height) + " size needs (a decompression bomb)");
    }
    if (std::memcmp(bytes.data() + pos + 4, "IEND", 4) == 0) break;
    pos = data + length + 4;  // data and CRC
  }
  return Status::ok();
}

}  // namespace hearth::media
