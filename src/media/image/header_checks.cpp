#include "media/image/header_checks.h"

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
  // False when the number does not fit an int.
  bool read_integer(char& c) {
    int64_t value = 0;
    while (!at_end() && c >= '0' && c <= '9') {
      value = value * 10 + (c - '0');
      if (value > INT_MAX) return false;
      c = next();
    }
    return true;
  }

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
  for (int field = 0; field < 3; ++field) {  // width, height, maximum value
    header.skip_whitespace(c);
    if (!header.read_integer(c)) {
      return error(ErrorCode::kCorruptFile, "image: corrupt PNM (a header number overflows)");
    }
  }
  return Status::ok();
}

}  // namespace hearth::media
