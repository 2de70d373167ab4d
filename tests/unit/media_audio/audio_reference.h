// Test helpers: the audio test clips, the reference's values for them, digests.
#pragma once

#include <nlohmann/json.hpp>

#include <cstdint>
#include <string>
#include <vector>

namespace hearth::media::testing {

std::vector<uint8_t> audio_bytes(const std::string& name);
// tests/data/media/audio/reference_audio.json's "files" object.
const nlohmann::json& audio_reference();
std::string sha256_of_floats(const std::vector<float>& values);
// The 31 s, 8 kHz, 8-bit clip make_clips.py describes, rebuilt in memory (too big to commit).
std::vector<uint8_t> long_u8_clip();

}  // namespace hearth::media::testing
