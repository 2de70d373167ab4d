// base64_encode against RFC 4648's test vectors, and a float32 vector as /v1/embeddings
// sends it.
#include <gtest/gtest.h>

#include <cstring>
#include <string>
#include <vector>

#include "base/base64.h"

namespace hearth {
namespace {

std::string encode(const std::string& text) {
  return base64_encode(std::span<const unsigned char>(
      reinterpret_cast<const unsigned char*>(text.data()), text.size()));
}

TEST(Base64, Rfc4648Vectors) {
  EXPECT_EQ(encode(""), "");
  EXPECT_EQ(encode("f"), "Zg==");
  EXPECT_EQ(encode("fo"), "Zm8=");
  EXPECT_EQ(encode("foo"), "Zm9v");
  EXPECT_EQ(encode("foob"), "Zm9vYg==");
  EXPECT_EQ(encode("fooba"), "Zm9vYmE=");
  EXPECT_EQ(encode("foobar"), "Zm9vYmFy");
}

TEST(Base64, HighBytesUseTheLastSymbols) {
  const std::vector<unsigned char> bytes{0xfb, 0xff, 0xbf};
  EXPECT_EQ(base64_encode(bytes), "+/+/");
}

TEST(Base64, Float32LittleEndian) {
  const float values[2] = {1.0f, -2.0f};  // 0x3f800000, 0xc0000000
  std::vector<unsigned char> bytes(sizeof(values));
  std::memcpy(bytes.data(), values, sizeof(values));
  EXPECT_EQ(base64_encode(bytes), "AACAPwAAAMA=");
}

}  // namespace
}  // namespace hearth
