#include "media/image/header_checks.h"

#include <climits>

#include <algorithm>
#include <string>

namespace hearth::media {
namespace {

constexpr uint8_t kMarkerPrefix = 0xFF;
constexpr uint8_t kDefineHuffmanTable = 0xC4;
constexpr uint8_t kEndOfImage = 0xD9;
constexpr uint8_t kStartOfScan = 0xDA;

// Markers with no length field: stuffed zero, TEM, RST0..7, SOI.
bool standalone_marker(uint8_t m) {
  return m == 0x00 || m == 0x01 || (m >= 0xD0 && m <= 0xD8);
}

// One DHT segment at `pos` (after its length field), read as stb_image reads it: tables of a
// class/id byte, 16 code counts and the symbols, while the declared length lasts, taking
// bytes past the segment (or zeros past the end of the input) when a table overruns it.
// Returns false when stb_image would stop on the segment.
Result<bool> check_dht(std::span<const uint8_t> bytes, size_t pos, int64_t remaining) {
  auto byte_at = [&](size_t i) -> size_t { return i < bytes.size() ? bytes[i] : 0; };
  while (remaining > 0) {
    ++pos;  // table class and id; stb_image checks them itself
    size_t codes = 0;
    for (size_t i = 0; i < 16; ++i) codes += byte_at(pos + i);
    if (codes > 256) {
      return error(ErrorCode::kCorruptFile, "image: corrupt JPEG (a Huffman table declares " +
                                                std::to_string(codes) + " codes, over 256)");
    }
    pos += 16 + codes;
    remaining -= 17 + static_cast<int64_t>(codes);
  }
  return remaining == 0;
}

}  // namespace

Status check_jpeg_huffman_tables(std::span<const uint8_t> bytes) {
  const size_t n = bytes.size();
  // stb_image takes any run of 0xFF before the start-of-image marker.
  size_t pos = 0;
  while (pos < n && bytes[pos] == kMarkerPrefix) ++pos;
  if (pos == 0 || pos >= n || bytes[pos] != 0xD8) return Status::ok();
  ++pos;
  int scans = 0;
  while (pos < n) {
    // Entropy-coded data (after a scan header) runs until the next real marker.
    if (bytes[pos] != kMarkerPrefix) {
      ++pos;
      continue;
    }
    while (pos < n && bytes[pos] == kMarkerPrefix) ++pos;  // fill bytes
    if (pos >= n) break;
    const uint8_t marker = bytes[pos++];
    if (marker == kEndOfImage) break;
    if (standalone_marker(marker)) continue;
    if (pos + 2 > n) break;
    const size_t length = (size_t{bytes[pos]} << 8) | bytes[pos + 1];
    if (length < 2) break;
    const size_t end = std::min(pos + length, n);
    if (marker == kStartOfScan && ++scans > kMaxJpegScans) {
      return error(ErrorCode::kResourceExhausted,
                   "image: JPEG with more than " + std::to_string(kMaxJpegScans) + " scans");
    }
    if (marker == kDefineHuffmanTable) {
      HEARTH_ASSIGN_OR_RETURN(const bool well_formed,
                              check_dht(bytes, pos + 2, static_cast<int64_t>(length) - 2));
      if (!well_formed) break;  // stb_image refuses the file here
    }
    pos = end;
  }
  return Status::ok();
}

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
