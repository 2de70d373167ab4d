// The Whisper encoder the audio projector families share (llama.cpp's
// tools/mtmd/models/whisper-enc.cpp): the log-mel [n_mel][n_frames] goes through two
// convolutions over time (kernel 3, padding 1; the second with stride 2), each with a bias and
// the exact GELU, then learned positions, the pre-norm blocks of vit.h (LayerNorm, attention
// with Q/V biases, a GELU-erf FFN), an optional average pooling of frame pairs and the post-LN.
// The convolutions run as products of the kernel [E][C*3] with an im2col of the input.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "base/status.h"
#include "base/thread_pool.h"
#include "engine/weights.h"
#include "media/clip_file.h"
#include "media/vit.h"

namespace hearth::media {

class WhisperEncoder {
 public:
  // Reads a.conv1d.{1,2}.{weight,bias}, a.position_embd.weight, a.blk.N.* and a.post_ln.*,
  // checking each shape against `hp` (kernels [3, C, E], biases [1, E] as converters write them
  // or [E], positions [E, n_pos]).
  static Result<WhisperEncoder> load(engine::TensorLoader& loader, const AudioHparams& hp);

  int32_t n_embd() const { return static_cast<int32_t>(conv2_.n_rows); }
  // Rows of the position table (1500 for Whisper): the longest input is twice as many frames.
  int32_t n_positions() const { return n_pos_; }
  int32_t max_frames() const { return 2 * n_pos_; }

  // mel: [n_mel][n_frames] (each bin's frames contiguous); n_frames even, at most max_frames().
  // Returns the encoder states [n_frames / 2][E], or with avg_pool (qwen2a, voxtral: the
  // reference's AvgPool1d(2, 2) before the post-LN) [n_frames / 4][E].
  std::vector<float> encode(const float* mel, int32_t n_frames, bool avg_pool,
                            ThreadPool& pool) const;

 private:
  AudioHparams hp_;
  engine::WeightMatrix conv1_, conv2_;    // [E][n_mel*3], [E][E*3]: rows ordered (channel, tap)
  std::vector<float> conv1_b_, conv2_b_;  // [E]
  std::vector<float> position_embd_;      // [n_pos][E]
  int32_t n_pos_ = 0;
  std::vector<float> pre_ln_w_, pre_ln_b_;  // optional a.pre_ln (Whisper has none)
  Vit blocks_;
};

// Groups of `stack_factor` consecutive rows of x [n_rows][E] as rows of E * stack_factor
// (the reference's StackAudioFrames): n_out rows, zeros past the last input row.
std::vector<float> stack_frames(const std::vector<float>& x, int64_t n_rows, int64_t E,
                                int32_t stack_factor, int64_t n_out);

// RMS norm (no mean) of each of n rows of width `width`, times w, in place.
void rms_norm_rows(float* x, const std::vector<float>& w, int64_t n, int64_t width, float eps,
                   ThreadPool& pool);

}  // namespace hearth::media
