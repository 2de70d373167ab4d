// The whisper log-mel spectrogram the reference computes for its whisper-style audio encoders
// (tools/mtmd/mtmd-audio.cpp, mtmd_audio_preprocessor_whisper), bit-identical with it: a
// periodic Hann window of 400 samples, a 400-point FFT every 160 samples over the audio
// reflect-padded by 200 at the start and zero-padded by 30 s + 200 at the end, power spectrum,
// a Slaney-scale mel filter bank with Slaney area normalisation (librosa's default), log10 with
// a floor, then clamping to (max - 8) and (x + 4) / 4, split into 30 s chunks of 3000 frames.
#pragma once

#include <cstdint>
#include <span>
#include <string_view>
#include <vector>

#include "base/status.h"

namespace hearth::media {

// What the projector file decides. The whisper families (ultravox, qwen2a, qwen25o, voxtral,
// musicflamingo, glma, meralion) read only n_mel from the file (clip.audio.num_mel_bins, 80 or
// 128) and fix the rest; the filters are computed, never read from the file.
struct MelParams {
  int32_t n_mel = 80;
  int32_t n_fft = 400;
  int32_t window_length = 400;
  int32_t hop_length = 160;
  int32_t sample_rate = 16000;
  // n_mel x (n_fft / 2 + 1), row-major; empty: the Slaney filter bank mel_filter_bank computes.
  // (Only projectors outside the whisper families, e.g. parakeet, ship filters in the file.)
  std::vector<float> filters;
};

// One encoder window: n_mel rows of n_frames values, row-major (mel bin major, frames
// contiguous), as the reference's mtmd_audio_mel. A whisper encoder reads it as a 1-D signal of
// n_mel channels and n_frames (3000) steps: the first conv1d's input [n_mel][3000].
struct MelChunk {
  int32_t n_mel = 0;
  int32_t n_frames = 0;
  std::vector<float> data;
};

// Whether the reference runs this projector type's audio through the whisper log-mel
// (mtmd.cpp's choice of mtmd_audio_preprocessor_whisper).
bool uses_whisper_log_mel(std::string_view projector_type);

// The Slaney mel filter bank: n_mel triangles over n_fft / 2 + 1 bins from 0 Hz to the Nyquist
// frequency, each scaled to unit area (2 / width in Hz), as the reference computes it in double
// and stores it in float.
std::vector<float> mel_filter_bank(int32_t n_mel, int32_t n_fft, int32_t sample_rate);

// The log-mel features of mono samples at params.sample_rate, one MelChunk per full 30 s
// window (the trailing partial window, which holds only padding, is dropped as the reference
// does: any audio up to 30 s gives one chunk, 30 to 60 s two, ...). Errors name the problem:
// no samples, or parameters the computation cannot use.
Result<std::vector<MelChunk>> whisper_log_mel(std::span<const float> samples,
                                              const MelParams& params);

}  // namespace hearth::media
