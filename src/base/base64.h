// Standard base64 (RFC 4648 alphabet, '=' padding), as OpenAI's embeddings API sends
// little-endian float32 vectors when encoding_format is "base64".
#pragma once

#include <span>
#include <string>

namespace hearth {

std::string base64_encode(std::span<const unsigned char> bytes);

}  // namespace hearth
