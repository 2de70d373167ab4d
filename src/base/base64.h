// Standard base64 (RFC 4648 alphabet, '=' padding), as OpenAI's embeddings API sends
// little-endian float32 vectors when encoding_format is "base64".
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace hearth {

std::string base64_encode(std::span<const unsigned char> bytes);

// Decodes as llama-server decodes media: characters are read up to the first '=' or the
// first one outside the alphabet, whatever follows is ignored, and a trailing group of 2 or
// 3 characters gives 1 or 2 bytes. Never fails; garbage gives fewer (or no) bytes.
std::vector<uint8_t> base64_decode_prefix(std::string_view text);

}  // namespace hearth
