// The steps of decode_audio, exposed for the tests: container parsing into mono samples at the
// source rate, and miniaudio's frame-count formula and linear resampler.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "base/status.h"
#include "media/audio/audio_decode.h"

namespace hearth::media::audio_detail {

// Mono f32 samples at the file's own rate: channels already averaged as miniaudio's mono
// output path does (sum in channel order in float, then divide by the channel count).
struct SourcePcm {
  int32_t sample_rate = 0;
  std::vector<float> mono;
  // The length the container states, which the reference sizes its output by (FLAC's
  // STREAMINFO total can exceed what the stream holds); 0: mono.size().
  uint64_t declared_frames = 0;
};

// WAV in a RIFF container ("RIFF" .... "WAVE"), read as dr_wav reads it with f32 output.
Result<SourcePcm> decode_wav(std::span<const uint8_t> bytes, const AudioLimits& limits);

// MP3 (with or without ID3v2 tags) through libmpg123, f32 output.
Result<SourcePcm> decode_mp3(std::span<const uint8_t> bytes, const AudioLimits& limits);

// FLAC ("fLaC" stream) through libFLAC, f32 output as dr_flac converts.
Result<SourcePcm> decode_flac(std::span<const uint8_t> bytes, const AudioLimits& limits);

// miniaudio's ma_calculate_frame_count_after_resampling: how many frames the reference sizes
// its output buffer to (sample rates not reduced; one more than the floor when the formula says
// the input covers it).
uint64_t frame_count_after_resampling(uint32_t rate_out, uint32_t rate_in, uint64_t frames_in);

// miniaudio's linear resampler (ma_linear_resampler, f32, one channel) with the default
// low-pass (order 4: two biquads, Butterworth Q per section), applied to every input sample
// when downsampling and to every output sample when upsampling. Produces at most out_frames
// samples; the rest of the returned out_frames-long vector stays zero when the input runs out
// first (as the reference's pre-sized buffer does).
std::vector<float> resample_linear(std::span<const float> in, uint32_t rate_in, uint32_t rate_out,
                                   uint64_t out_frames);

}  // namespace hearth::media::audio_detail
