// decode_image against the reference's decoded pixels, and on bad input.
#include <gtest/gtest.h>
#include <zlib.h>

#include <cstring>
#include <filesystem>
#include <string>
#include <vector>

#include "media/image/image_decode.h"
#include "unit/media_image/reference_data.h"

namespace hearth::media {
namespace {

using testing::media_path;
using testing::read_bytes;
using testing::reference;
using testing::sha256_hex;

// Debian's stb_image (2.27) decodes every test image to the same pixels as the reference's
// vendored copy (2.30): PNG, BMP, GIF, grey, palette, 16-bit, alpha, JPEG 4:2:0 / 4:4:4 /
// progressive.
TEST(MediaImageDecode, PixelsMatchReference) {
  int checked = 0;
  for (const auto& entry : reference().at("images")) {
    const std::string file = entry.at("file");
    SCOPED_TRACE(file);
    ASSERT_FALSE(entry.contains("error"));
    const std::vector<uint8_t> bytes = read_bytes(media_path(file));
    Result<ImageRgb8> image = decode_image(bytes);
    ASSERT_TRUE(image.is_ok()) << image.status().message();
    EXPECT_EQ(image->nx, entry.at("nx").get<int>());
    EXPECT_EQ(image->ny, entry.at("ny").get<int>());
    ASSERT_EQ(image->rgb.size(), static_cast<size_t>(image->nx) * image->ny * 3);
    EXPECT_EQ(sha256_hex(image->rgb.data(), image->rgb.size()),
              entry.at("rgb_sha256").get<std::string>());
    ++checked;
  }
  EXPECT_GE(checked, 15);
}

void expect_error(const Result<ImageRgb8>& r, const std::string& fragment) {
  ASSERT_FALSE(r.is_ok());
  EXPECT_EQ(r.status().message().rfind("image: ", 0), 0u) << r.status().message();
  EXPECT_NE(r.status().message().find(fragment), std::string::npos) << r.status().message();
}

void put_be32(std::vector<uint8_t>& out, uint32_t v) {
  for (int shift = 24; shift >= 0; shift -= 8) out.push_back(static_cast<uint8_t>(v >> shift));
}

void put_chunk(std::vector<uint8_t>& png, const char* type, const std::vector<uint8_t>& data) {
  put_be32(png, static_cast<uint32_t>(data.size()));
  const size_t start = png.size();
  png.insert(png.end(), type, type + 4);
  png.insert(png.end(), data.begin(), data.end());
  put_be32(png, static_cast<uint32_t>(
                    crc32(0, png.data() + start, static_cast<uInt>(png.size() - start))));
}

// An 8-bit greyscale PNG of `w` x `h` whose IDAT holds `idat` (zlib data).
std::vector<uint8_t> make_png(uint32_t w, uint32_t h, const std::vector<uint8_t>& idat) {
  std::vector<uint8_t> png = {0x89, 'P', 'N', 'G', '\r', '\n', 0x1a, '\n'};
  std::vector<uint8_t> ihdr;
  put_be32(ihdr, w);
  put_be32(ihdr, h);
  ihdr.insert(ihdr.end(), {8, 0, 0, 0, 0});  // depth 8, greyscale, deflate, filter 0, no interlace
  put_chunk(png, "IHDR", ihdr);
  put_chunk(png, "IDAT", idat);
  put_chunk(png, "IEND", {});
  return png;
}

std::vector<uint8_t> compress_zeros(size_t raw_size) {
  std::vector<uint8_t> raw(raw_size, 0);
  uLongf size = compressBound(static_cast<uLong>(raw.size()));
  std::vector<uint8_t> out(size);
  EXPECT_EQ(compress2(out.data(), &size, raw.data(), static_cast<uLong>(raw.size()), 9), Z_OK);
  out.resize(size);
  return out;
}

TEST(MediaImageDecode, ValidHandMadePngDecodes) {
  // The helpers above make a real PNG: 3x2 grey zeros decode to 18 zero bytes.
  Result<ImageRgb8> r = decode_image(make_png(3, 2, compress_zeros(2 * (1 + 3))));
  ASSERT_TRUE(r.is_ok()) << r.status().message();
  EXPECT_EQ(r->nx, 3);
  EXPECT_EQ(r->ny, 2);
  EXPECT_EQ(r->rgb, std::vector<uint8_t>(18, 0));
}

TEST(MediaImageDecode, EmptyInput) {
  expect_error(decode_image({}), "empty input");
}

TEST(MediaImageDecode, WebpRefusedByName) {
  static const char kRiff[] = "RIFF\x1a\x00\x00\x00WEBPVP8 \x0e\x00\x00\x00";
  const std::vector<uint8_t> bytes(kRiff, kRiff + sizeof(kRiff) - 1);
  Result<ImageRgb8> r = decode_image(bytes);
  expect_error(r, "WebP images are not supported");
  EXPECT_EQ(r.status().code(), ErrorCode::kUnsupported);
}

// Radiance HDR: Debian's stb_image 2.27 never ends on a zero run length.
TEST(MediaImageDecode, HdrRefusedByName) {
  // The header of a 16 x 1 image; its pixel data is never read.
  const std::string hdr = "#?RADIANCE\nFORMAT=32-bit_rle_rgbe\n\n-Y 1 +X 16\n";
  Result<ImageRgb8> r = decode_image(std::vector<uint8_t>(hdr.begin(), hdr.end()));
  expect_error(r, "Radiance HDR images are not supported");
  EXPECT_EQ(r.status().code(), ErrorCode::kUnsupported);
}

TEST(MediaImageDecode, Garbage) {
  const std::string text = "hello, this is not an image at all; just some words";
  const std::vector<uint8_t> bytes(text.begin(), text.end());
  expect_error(decode_image(bytes), "unrecognised or corrupt");
}

TEST(MediaImageDecode, ZeroSizePng) {
  expect_error(decode_image(make_png(0, 5, compress_zeros(5))), "corrupt");
  expect_error(decode_image(make_png(5, 0, compress_zeros(5))), "corrupt");
}

TEST(MediaImageDecode, HugeHeaderRefusedBeforeDecoding) {
  // 30000 x 30000 claimed by a 60-byte file: refused from the header (a decode would need
  // 2.7 GB).
  const std::vector<uint8_t> png = make_png(30000, 30000, compress_zeros(16));
  ASSERT_LT(png.size(), 100u);
  expect_error(decode_image(png), "over the 16384-pixel limit");
}

TEST(MediaImageDecode, DecompressionBombRefused) {
  // A real 8200 x 8200 PNG (all zeros: 67 MB of pixels in ~70 KB) is over the 64 Mpx default.
  const std::vector<uint8_t> png = make_png(8200, 8200, compress_zeros(size_t{8201} * 8200));
  ASSERT_LT(png.size(), 400u * 1024);
  expect_error(decode_image(png), "over the 64000000-pixel limit");
  ImageLimits small;
  small.max_pixels = 800;  // 37 x 23 = 851
  expect_error(decode_image(read_bytes(media_path("grad_37x23.png")), small),
               "over the 800-pixel limit");
}

// A PNG declaring 1 x 1 whose data inflates to 64 MB (in ~64 KB): its header passes the
// limits, but stb_image would inflate it all into memory. The reference accepts it.
TEST(MediaImageDecode, InflateBombRefused) {
  const std::vector<uint8_t> png = make_png(1, 1, compress_zeros(size_t{64} << 20));
  ASSERT_LT(png.size(), 100u * 1024);
  Result<ImageRgb8> r = decode_image(png);
  expect_error(r, "decompression bomb");
  EXPECT_EQ(r.status().code(), ErrorCode::kResourceExhausted);
  // Extra bytes within twice the needed size still decode, as with stb_image alone.
  Result<ImageRgb8> ok = decode_image(make_png(4, 4, compress_zeros(5 * 4 + 10)));
  ASSERT_TRUE(ok.is_ok()) << ok.status().message();
  EXPECT_EQ(ok->nx, 4);
}

TEST(MediaImageDecode, ByteLimit) {
  ImageLimits limits;
  limits.max_bytes = 100;
  expect_error(decode_image(read_bytes(media_path("big_641x479.jpg")), limits),
               "over the 100-byte limit");
}

TEST(MediaImageDecode, TruncatedPng) {
  const std::vector<uint8_t> full = read_bytes(media_path("noise_300x17.png"));
  for (size_t keep : {size_t{8}, size_t{20}, size_t{40}, full.size() / 2, full.size() - 20}) {
    SCOPED_TRACE(keep);
    const std::vector<uint8_t> cut(full.begin(), full.begin() + static_cast<std::ptrdiff_t>(keep));
    expect_error(decode_image(cut), "");
  }
}

TEST(MediaImageDecode, TruncatedJpeg) {
  const std::vector<uint8_t> full = read_bytes(media_path("big_641x479.jpg"));
  // Cut inside the headers: no frame to decode.
  for (size_t keep : {size_t{2}, size_t{10}, size_t{100}}) {
    SCOPED_TRACE(keep);
    const std::vector<uint8_t> cut(full.begin(), full.begin() + static_cast<std::ptrdiff_t>(keep));
    expect_error(decode_image(cut), "");
  }
  // Cut inside the scan: refused. (The reference's stb_image 2.30 returns a partly grey image
  // here; Debian's 2.27 stops at the missing end marker, a deliberate difference.)
  const std::vector<uint8_t> half(full.begin(),
                                  full.begin() + static_cast<std::ptrdiff_t>(full.size() / 2));
  expect_error(decode_image(half), "expected marker");
}

// A progressive file's scans repeated past the limit: refused before decoding.
TEST(MediaImageDecode, TooManyJpegScans) {
  const std::vector<uint8_t> full = read_bytes(media_path("big_641x479_prog.jpg"));
  // Find the last scan header (FF DA) and repeat that scan's bytes up to the end marker.
  size_t last_sos = 0;
  for (size_t i = 0; i + 1 < full.size(); ++i) {
    if (full[i] == 0xFF && full[i + 1] == 0xDA) last_sos = i;
  }
  ASSERT_GT(last_sos, 0u);
  std::vector<uint8_t> many(full.begin(), full.begin() + static_cast<std::ptrdiff_t>(last_sos));
  for (int i = 0; i < 1001; ++i) {
    many.insert(many.end(), full.begin() + static_cast<std::ptrdiff_t>(last_sos), full.end() - 2);
  }
  many.insert(many.end(), {0xFF, 0xD9});
  expect_error(decode_image(many), "more than 1000 scans");
  EXPECT_TRUE(decode_image(full).is_ok());
}

// Inputs image_fuzz found to make Debian's stb_image 2.27 misbehave (tests/fuzz/corpus/image/
// regression-*) are refused by the checks before it. (The reference's 2.30 refuses the
// overrun segment and the PNM; it stops at the bad table or marker of the others after their
// first scan and returns a partial image.)
TEST(MediaImageDecode, FuzzRegressionsRefused) {
  const std::string dir = std::string(HEARTH_IMAGE_CORPUS_DIR) + "/";
  expect_error(decode_image(read_bytes(dir + "regression-huffman-257-codes.jpg")),
               "Huffman table declares");
  expect_error(decode_image(read_bytes(dir + "regression-huffman-overrun-segment.jpg")),
               "Huffman table declares");
  expect_error(decode_image(read_bytes(dir + "regression-huffman-after-fill.jpg")),
               "Huffman table declares");
  // Its scans use an AC Huffman table and a quantization table no segment defines.
  expect_error(decode_image(read_bytes(dir + "regression-undefined-huffman-table.jpg")),
               "undefined quantization table");
  expect_error(decode_image(read_bytes(dir + "regression-idat-length-2gb.png")),
               "IDAT chunk runs past the end");
  expect_error(decode_image(read_bytes(dir + "regression-pgm-16bit.pgm")),
               "16-bit greyscale PNM is not supported");
  expect_error(decode_image(read_bytes(dir + "regression-pnm-int-overflow.ppm")),
               "header number overflows");
}

// The fuzz seeds (every format stb_image reads that the corpus covers) decode.
TEST(MediaImageDecode, FuzzSeedsDecode) {
  int decoded = 0;
  for (const auto& entry : std::filesystem::directory_iterator(HEARTH_IMAGE_CORPUS_DIR)) {
    if (entry.path().filename().string().rfind("seed-", 0) != 0) continue;
    SCOPED_TRACE(entry.path().string());
    Result<ImageRgb8> r = decode_image(read_bytes(entry.path().string()));
    ASSERT_TRUE(r.is_ok()) << r.status().message();
    EXPECT_EQ(r->rgb.size(), static_cast<size_t>(r->nx) * r->ny * 3);
    ++decoded;
  }
  EXPECT_GE(decoded, 12);
}

// A PNM with an ordinary header still decodes after its header check.
TEST(MediaImageDecode, PnmDecodes) {
  const std::string header = "P6\n# comment\n2 1\n255\n";
  std::vector<uint8_t> ppm(header.begin(), header.end());
  ppm.insert(ppm.end(), {1, 2, 3, 4, 5, 6});
  Result<ImageRgb8> r = decode_image(ppm);
  ASSERT_TRUE(r.is_ok()) << r.status().message();
  EXPECT_EQ(r->rgb, (std::vector<uint8_t>{1, 2, 3, 4, 5, 6}));
  // One sample byte short: refused rather than filled from uninitialised memory.
  ppm.pop_back();
  expect_error(decode_image(ppm), "truncated pixel data");
}

}  // namespace
}  // namespace hearth::media
