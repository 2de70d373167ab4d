#include "media/image/header_checks.h"

#include <algorithm>
#include <climits>
#include <string>

namespace hearth::media {

namespace {

// stb_image's PNM header reader: whitespace and '#' comments between fields, then digits.
class PnmHeader {
 public:
  explicit PnmHeader(std::span<const uint8_t> bytes) : bytes_(bytes) {}
  // Reads one character as stbi__get8 does (0 past the end).
  char next() { return pos_ < bytes_.size() ? static_cast<char>(bytes_[pos_++]) : 0; }
  bool at_end() const { return pos_ >= bytes_.size(); }
  void skip_whitespace(char& c) {
    for (;;) {
      while (!at_end() && is_space(c)) c = next();
      if (at_end() || c != '#') break;
      while (!at_end() && c != '\n' && c != '\r') c = next();
    }
  }
  // The number, or -1 when it does not fit an int.
  int64_t read_integer(char& c) {
    int64_t value = 0;
    while (!at_end() && c >= '0' && c <= '9') {
      value = value * 10 + (c - '0');
      if (value > INT_MAX) return -1;
      c = next();
    }
    return value;
  }
  // Bytes after the last one read: where stb_image starts reading the samples.
  size_t remaining() const { return bytes_.size() - std::min(pos_, bytes_.size()); }

 private:
  static bool is_space(char c) {
    return c == ' ' || c == '\t' || c == '\n' || c == '\v' || c == '\f' || c == '\r';
  }
  std::span<const uint8_t> bytes_;
  size_t pos_ = 0;
};

}  // namespace

Status check_pnm_header(std::span<const uint8_t> bytes) {
  if (bytes.size() < 2 || bytes[0] != 'P' || (bytes[1] != '5' && bytes[1] != '6')) {
    return Status::ok();
  }
  PnmHeader header(bytes.subspan(2));
  char c = header.next();
  int64_t fields[3] = {0, 0, 0};  // width, height, maximum value
  for (int64_t& field : fields) {
    header.skip_whitespace(c);
    field = header.read_integer(c);
    if (field < 0) {
      return error(ErrorCode::kCorruptFile, "image: corrupt PNM (a header number overflows)");
    }
  }
  const bool grey = bytes[1] == '5';
  const bool sixteen_bit = fields[2] > 255;
  if (grey && sixteen_bit) {
    return error(ErrorCode::kUnsupported, "image: 16-bit greyscale PNM is not supported");
  }
  // Sizes stb_image will refuse are left to it; the product below stays in range.
  if (fields[0] <= 0 || fields[1] <= 0 || fields[0] > (1 << 24) || fields[1] > (1 << 24)) {
    return Status::ok();
  }
  const uint64_t needed =
      uint64_t(fields[0]) * uint64_t(fields[1]) * (grey ? 1 : 3) * (sixteen_bit ? 2 : 1);
  if (header.remaining() < needed) {
    return error(ErrorCode::kCorruptFile, "image: corrupt PNM (truncated pixel data)");
  }
  return Status::ok();
}

}  // namespace hearth::media
