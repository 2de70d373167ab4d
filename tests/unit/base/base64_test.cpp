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

std::string decode(std::string_view text) {
  std::vector<uint8_t> bytes = base64_decode_prefix(text);
  return std::string(bytes.begin(), bytes.end());
}

TEST(Base64, DecodeRoundTripsTheRfcVectors) {
  for (std::string_view plain : {"", "f", "fo", "foo", "foob", "fooba", "foobar"}) {
    const std::string encoded = encode(std::string(plain));
    EXPECT_EQ(decode(encoded), plain) << encoded;
  }
  const std::vector<unsigned char> high{0xfb, 0xff, 0xbf};
  EXPECT_EQ(base64_decode_prefix("+/+/"), std::vector<uint8_t>(high.begin(), high.end()));
}

// As llama-server reads media: up to the first '=' or foreign character, the rest ignored.
TEST(Base64, DecodeStopsAtTheFirstForeignCharacter) {
  EXPECT_EQ(decode("Zm9v YmFy"), "foo");
  EXPECT_EQ(decode("Zm9vYg==Zm9v"), "foob");
  EXPECT_EQ(decode("Zm9vY"), "foo");  // a lone trailing character carries no whole byte
  EXPECT_EQ(decode("not base64!"), std::string("\x9e\x8b", 2));  // "not": 18 bits, 2 bytes
  EXPECT_EQ(decode("!!!"), "");
}

}  // namespace
}  // namespace hearth
