// The reference's decode and preprocessing results for the images in tests/data/media
// (reference_preprocess.json: SHA-256 of the RGB8 pixels and of every f32 tensor, written by a
// dumper built from llama.cpp b10573's stb_image and tools/mtmd/mtmd-image.cpp).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace hearth::media::testing {

std::string media_path(const std::string& name);
std::vector<uint8_t> read_bytes(const std::string& path);
// The parsed reference file (read once).
const nlohmann::json& reference();
std::string sha256_hex(const void* data, size_t size);

}  // namespace hearth::media::testing
