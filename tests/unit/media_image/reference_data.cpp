#include "unit/media_image/reference_data.h"

#include <openssl/evp.h>

#include <cstdio>
#include <fstream>
#include <iterator>
#include <stdexcept>

namespace hearth::media::testing {

std::string media_path(const std::string& name) {
  return std::string(HEARTH_MEDIA_DATA_DIR) + "/" + name;
}

std::vector<uint8_t> read_bytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::runtime_error("cannot open " + path);
  return std::vector<uint8_t>(std::istreambuf_iterator<char>(in), {});
}

const nlohmann::json& reference() {
  static const nlohmann::json data = [] {
    const std::vector<uint8_t> bytes = read_bytes(media_path("reference_preprocess.json"));
    return nlohmann::json::parse(bytes.begin(), bytes.end());
  }();
  return data;
}

std::string sha256_hex(const void* data, size_t size) {
  unsigned char digest[EVP_MAX_MD_SIZE];
  unsigned int len = 0;
  EVP_Digest(data, size, digest, &len, EVP_sha256(), nullptr);
  std::string hex;
  char buf[3];
  for (unsigned int i = 0; i < len; ++i) {
    std::snprintf(buf, sizeof(buf), "%02x", digest[i]);
    hex += buf;
  }
  return hex;
}

}  // namespace hearth::media::testing
