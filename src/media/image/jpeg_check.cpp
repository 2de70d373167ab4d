// check_jpeg_structure (header_checks.h): a walk over a JPEG's marker segments that reads the
// tables and headers as stb_image does, to refuse what Debian's stb_image 2.27 mishandles.
#include <algorithm>
#include <array>
#include <string>
#include <vector>

#include "media/image/header_checks.h"

namespace hearth::media {
namespace {

constexpr uint8_t kMarkerPrefix = 0xFF;
constexpr uint8_t kStartOfImage = 0xD8;
constexpr uint8_t kEndOfImage = 0xD9;
constexpr uint8_t kStartOfScan = 0xDA;
constexpr uint8_t kDefineHuffmanTable = 0xC4;
constexpr uint8_t kDefineQuantTable = 0xDB;

// Markers with no length field: stuffed zero, TEM, RST0..7, SOI.
bool standalone_marker(uint8_t m) {
  return m == 0x00 || m == 0x01 || (m >= 0xD0 && m <= kStartOfImage);
}
// The frame headers stb_image decodes: baseline, extended, progressive.
bool frame_marker(uint8_t m) {
  return m == 0xC0 || m == 0xC1 || m == 0xC2;
}

Status corrupt(const std::string& what) {
  return error(ErrorCode::kCorruptFile, "image: corrupt JPEG (" + what + ")");
}

class JpegWalker {
 public:
  explicit JpegWalker(std::span<const uint8_t> bytes) : bytes_(bytes) {}

  // Walks from just after SOI. "Stop" results (false) mean stb_image refuses the file at
  // that point itself, so nothing after it matters.
  Status walk(size_t pos) {
    const size_t n = bytes_.size();
    while (pos < n) {
      // Entropy-coded data (after a scan header) runs until the next real marker.
      if (bytes_[pos] != kMarkerPrefix) {
        ++pos;
        continue;
      }
      while (pos < n && bytes_[pos] == kMarkerPrefix) ++pos;  // fill bytes
      if (pos >= n) break;
      const uint8_t marker = bytes_[pos++];
      if (marker == kEndOfImage) break;
      if (standalone_marker(marker)) continue;
      if (pos + 2 > n) break;
      const size_t length = (size_t{bytes_[pos]} << 8) | bytes_[pos + 1];
      if (length < 2) break;
      HEARTH_ASSIGN_OR_RETURN(const bool go_on, segment(marker, pos + 2, length - 2));
      if (!go_on) break;
      pos = std::min(pos + length, n);
    }
    return Status::ok();
  }

 private:
  // stbi__get8: zero past the end.
  size_t at(size_t i) const { return i < bytes_.size() ? bytes_[i] : 0; }

  Result<bool> segment(uint8_t marker, size_t data, size_t length) {
    if (marker == kDefineHuffmanTable) return huffman_tables(data, static_cast<int64_t>(length));
    if (marker == kDefineQuantTable) return quant_tables(data, static_cast<int64_t>(length));
    if (frame_marker(marker)) return frame(marker, data, length);
    if (marker == kStartOfScan) return scan(data, length);
    return true;
  }

  // DHT: tables of a class/id byte, 16 code counts and the symbols while the length lasts,
  // reading past the segment (or zeros past the input) when a table overruns it, as stb_image.
  Result<bool> huffman_tables(size_t pos, int64_t remaining) {
    while (remaining > 0) {
      const size_t table_class = at(pos) >> 4;
      const size_t table_id = at(pos) & 15;
      if (table_class > 1 || table_id > 3) return false;
      ++pos;
      size_t codes = 0;
      for (size_t i = 0; i < 16; ++i) codes += at(pos + i);
      if (codes > 256) {
        return corrupt("a Huffman table declares " + std::to_string(codes) + " codes, over 256");
      }
      (table_class == 0 ? dc_defined_ : ac_defined_)[table_id] = true;
      pos += 16 + codes;
      remaining -= 17 + static_cast<int64_t>(codes);
    }
    return remaining == 0;
  }

  // DQT: tables of a precision/id byte and 64 one- or two-byte values.
  Result<bool> quant_tables(size_t pos, int64_t remaining) {
    while (remaining > 0) {
      const size_t precision = at(pos) >> 4;
      const size_t table_id = at(pos) & 15;
      if (precision > 1 || table_id > 3) return false;
      quant_defined_[table_id] = true;
      pos += precision == 0 ? 65 : 129;
      remaining -= precision == 0 ? 65 : 129;
    }
    return remaining == 0;
  }

  // SOF: each component's id and quantization table. Only the first frame counts.
  Result<bool> frame(uint8_t marker, size_t pos, size_t length) {
    if (seen_frame_) return false;  // stb_image refuses a second frame header
    seen_frame_ = true;
    progressive_ = marker == 0xC2;
    const size_t count = at(pos + 5);
    if (length != 6 + 3 * count) return false;
    for (size_t i = 0; i < count; ++i) {
      const size_t tq = at(pos + 6 + 3 * i + 2);
      if (tq > 3) return false;
      components_.push_back({static_cast<uint8_t>(at(pos + 6 + 3 * i)), static_cast<uint8_t>(tq)});
    }
    return true;
  }

  // SOS: each scanned component's tables must exist; also counts scans.
  Result<bool> scan(size_t pos, size_t length) {
    if (++scans_ > kMaxJpegScans) {
      return error(ErrorCode::kResourceExhausted,
                   "image: JPEG with more than " + std::to_string(kMaxJpegScans) + " scans");
    }
    const size_t count = at(pos);
    if (!seen_frame_ || count == 0 || count > 4 || length != 4 + 2 * count) return false;
    const size_t spectral_start = at(pos + 1 + 2 * count);
    const size_t approx_high = at(pos + 3 + 2 * count) >> 4;
    // Baseline scans use both tables; progressive DC-first scans the DC table, AC scans the AC.
    const bool uses_dc = !progressive_ || (spectral_start == 0 && approx_high == 0);
    const bool uses_ac = !progressive_ || spectral_start != 0;
    for (size_t i = 0; i < count; ++i) {
      const size_t id = at(pos + 1 + 2 * i);
      const size_t dc = at(pos + 2 + 2 * i) >> 4;
      const size_t ac = at(pos + 2 + 2 * i) & 15;
      const auto component = std::find_if(components_.begin(), components_.end(),
                                          [&](const Component& c) { return c.id == id; });
      if (component == components_.end() || dc > 3 || ac > 3) return false;
      if ((uses_dc && !dc_defined_[dc]) || (uses_ac && !ac_defined_[ac])) {
        return corrupt("a scan uses an undefined Huffman table");
      }
      if (!quant_defined_[component->quant_table]) {
        return corrupt("a component uses an undefined quantization table");
      }
    }
    return true;
  }

  struct Component {
    uint8_t id;
    uint8_t quant_table;
  };
  std::span<const uint8_t> bytes_;
  std::array<bool, 4> dc_defined_{};
  std::array<bool, 4> ac_defined_{};
  std::array<bool, 4> quant_defined_{};
  std::vector<Component> components_;
  bool seen_frame_ = false;
  bool progressive_ = false;
  int scans_ = 0;
};

}  // namespace

Status check_jpeg_structure(std::span<const uint8_t> bytes) {
  // stb_image takes any run of 0xFF before the start-of-image marker.
  size_t pos = 0;
  while (pos < bytes.size() && bytes[pos] == kMarkerPrefix) ++pos;
  if (pos == 0 || pos >= bytes.size() || bytes[pos] != kStartOfImage) return Status::ok();
  return JpegWalker(bytes).walk(pos + 1);
}

}  // namespace hearth::media
