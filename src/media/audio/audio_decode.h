// Decoding an uploaded audio file into mono f32 samples at the projector's sample rate, as the
// reference does (llama.cpp decodes with miniaudio asked for f32, one channel, the target rate:
// channels averaged, then miniaudio's default linear resampler with its 4th-order low-pass).
// WAV is parsed here; MP3 goes through Debian's libmpg123 and FLAC through Debian's libFLAC.
// Limits are checked on the header (WAV, FLAC) or on the scanned stream length (MP3) before the
// sample buffer is allocated.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "base/status.h"

namespace hearth::media {

// Bounds on what decode_audio accepts. The reference has none (it allocates what the header
// says); these keep one request from taking the server's memory.
struct AudioLimits {
  // Encoded bytes.
  int64_t max_bytes = int64_t{64} << 20;
  // Duration of the decoded audio. 30 minutes is 60 of the encoder's 30 s windows and, at
  // 16 kHz, 115 MB of f32 samples plus about as much again of 128-bin mel features.
  double max_seconds = 30.0 * 60.0;
};

// Mono samples at sample_rate, nominally in [-1, 1] (float WAV data is passed through as is).
struct AudioPcm {
  int32_t sample_rate = 0;
  std::vector<float> samples;
};

// The reference's sniff (mtmd-helper's is_audio_file): "RIFF"...."WAVE", an ID3 tag, an MPEG
// frame sync (0xFF then three high bits set) or "fLaC". Only buffers that pass it are decoded
// as audio; anything else is treated as an image.
bool looks_like_audio(std::span<const uint8_t> bytes);

// Decodes WAV (PCM 8/16/24/32-bit integer, IEEE float 32/64-bit, plain or
// WAVE_FORMAT_EXTENSIBLE), MP3 and FLAC into mono f32 at target_rate (the projector's rate,
// 16000 for whisper-style encoders). The output length is miniaudio's: the source frame count
// (FLAC: STREAMINFO's total) scaled by its frame-count formula, with any frames the resampler
// cannot produce from the input left at zero (the reference sizes its buffer before reading).
// Errors start with "audio: " and name the problem: empty or unrecognised input, a malformed
// header or chunk, an encoding Hearth does not read (A-law, mu-law and ADPCM WAV, which the
// reference reads, are refused by name), a size or duration over the limits.
Result<AudioPcm> decode_audio(std::span<const uint8_t> bytes, int32_t target_rate,
                              const AudioLimits& limits = {});

}  // namespace hearth::media
