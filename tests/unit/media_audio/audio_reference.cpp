#include "unit/media_audio/audio_reference.h"

#include <openssl/evp.h>

#include <cstdio>
#include <fstream>
#include <iterator>
#include <stdexcept>

namespace hearth::media::testing {

std::vector<uint8_t> audio_bytes(const std::string& name) {
  const std::string path = std::string(HEARTH_AUDIO_DATA_DIR) + "/" + name;
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::runtime_error("cannot open " + path);
  return std::vector<uint8_t>(std::istreambuf_iterator<char>(in), {});
}

const nlohmann::json& audio_reference() {
  static const nlohmann::json data = [] {
    const std::vector<uint8_t> bytes = audio_bytes("reference_audio.json");
    return nlohmann::json::parse(bytes.begin(), bytes.end()).at("files");
  }();
  return data;
}

std::string sha256_of_floats(const std::vector<float>& values) {
  unsigned char digest[EVP_MAX_MD_SIZE];
  unsigned int len = 0;
  EVP_Digest(values.data(), values.size() * sizeof(float), digest, &len, EVP_sha256(), nullptr);
  std::string hex;
  char buf[3];
  for (unsigned int i = 0; i < len; ++i) {
    std::snprintf(buf, sizeof(buf), "%02x", digest[i]);
    hex += buf;
  }
  return hex;
}

namespace {
void put32(std::vector<uint8_t>& out, uint32_t v) {
  for (int i = 0; i < 4; ++i) out.push_back(static_cast<uint8_t>(v >> (8 * i)));
}
void put16(std::vector<uint8_t>& out, uint16_t v) {
  out.push_back(static_cast<uint8_t>(v));
  out.push_back(static_cast<uint8_t>(v >> 8));
}
}  // namespace

std::vector<uint8_t> long_u8_clip() {
  const uint32_t n = 8000 * 31;
  std::vector<uint8_t> out = {'R', 'I', 'F', 'F'};
  put32(out, 4 + 24 + 8 + n);
  for (char c : std::string("WAVEfmt ")) out.push_back(static_cast<uint8_t>(c));
  put32(out, 16);
  put16(out, 1);     // PCM
  put16(out, 1);     // mono
  put32(out, 8000);  // rate
  put32(out, 8000);  // bytes per second
  put16(out, 1);     // block align
  put16(out, 8);     // bits
  for (char c : std::string("data")) out.push_back(static_cast<uint8_t>(c));
  put32(out, n);
  for (uint64_t i = 0; i < n; ++i)
    out.push_back(static_cast<uint8_t>(((i * i * 7 + i * 13) >> 3) & 0xFF));
  return out;
}

}  // namespace hearth::media::testing
