// A projector file loaded for encoding audio: the Whisper encoder and the projector that maps
// its states into the text model's embedding space. One family per file under src/media
// (ultravox_projector.cpp, voxtral_projector.cpp, qwen2a_projector.cpp) behind the registry in
// audio_projector_registry.cpp, keyed by the file's audio projector type.
//
// The input is the whisper log-mel of 16 kHz audio (n_mel() bins, 10 ms frames), cut into
// windows of kChunkFrames frames as the reference does (mtmd-audio.cpp: the mel of the audio
// plus 30 s of silence, then every whole 3000-frame window; the incomplete tail is dropped):
// one encode per window, the windows' embeddings placed one after the other between
// audio_begin() and audio_end().
//
//   auto proj = AudioProjector::load("mmproj.gguf", model_n_embd);
//   std::vector<float> out(size_t(proj->n_output_tokens(3000)) * proj->n_embd_out());
//   proj->encode(mel_window, proj->n_mel(), 3000, pool, out.data());
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"
#include "base/thread_pool.h"
#include "engine/weights.h"
#include "media/clip_file.h"
#include "media/whisper_encoder.h"

namespace hearth::media {

class AudioProjector {
 public:
  virtual ~AudioProjector() = default;

  // Mel frames per encode: 30 s of 10 ms frames (the reference's whisper window).
  static constexpr int32_t kChunkFrames = 3000;

  // Opens and loads `path`, which must have an audio encoder. n_embd_text > 0 is the text
  // model's width, which the output must equal (a mismatch is refused naming both widths).
  // Unknown or unsupported types are refused naming the type and the supported ones.
  static Result<std::unique_ptr<AudioProjector>> load(const std::string& path, int32_t n_embd_text,
                                                      engine::LoadOptions options = {});

  // The audio families Hearth runs ("ultravox, voxtral, qwen2a").
  static std::string supported_types();

  virtual std::string_view family() const = 0;
  const std::string& projector_type() const { return file_->audio_projector_type; }
  const AudioHparams& hparams() const { return file_->audio; }
  const std::string& path() const { return file_->path; }
  // Mel bins the encoder reads (80 or 128 for Whisper models).
  int32_t n_mel() const { return file_->audio.n_mel; }
  // The longest window encode() takes (twice the position table: 3000 for Whisper).
  int32_t max_frames() const { return encoder_.max_frames(); }

  // The embeddings one window of n_frames mel frames gives (the reference's count, e.g.
  // ultravox with stack factor 8: 187 for 3000 frames).
  virtual int32_t n_output_tokens(int32_t n_frames) const = 0;
  // Width of each output embedding (the text model's n_embd).
  virtual int32_t n_embd_out() const = 0;
  // Audio embeddings are decoded with the causal mask by every Whisper-based family.
  bool non_causal_decode() const { return false; }
  // The text the reference puts before and after one audio input's embeddings (empty: none).
  virtual std::string_view audio_begin() const { return {}; }
  virtual std::string_view audio_end() const { return {}; }

  // Encodes one window. mel: [n_mel][n_frames] floats, each mel bin's frames contiguous (the
  // reference's mtmd_audio_mel.data, its clip_image_f32 with nx = n_frames, ny = n_mel);
  // n_mel must be n_mel(), n_frames even, at most max_frames() and enough for one embedding
  // (the reference always passes kChunkFrames). out: [n_output_tokens(n_frames)][n_embd_out()].
  // Const and without state: one loaded projector may encode from several threads.
  virtual Status encode(const float* mel, int32_t n_mel, int32_t n_frames, ThreadPool& pool,
                        float* out) const = 0;

 protected:
  AudioProjector(std::unique_ptr<ClipFile> file, WhisperEncoder encoder)
      : file_(std::move(file)), encoder_(std::move(encoder)) {}
  // kInvalidArgument unless mel is present, n_mel matches and n_frames fits and gives at least
  // one embedding.
  Status check_mel(const float* mel, int32_t n_mel, int32_t n_frames) const;

  std::unique_ptr<ClipFile> file_;  // the mapped tensors the weights point into
  WhisperEncoder encoder_;
  std::vector<engine::OwnedBytes> owned_;  // repacked matrices
};

namespace detail {

// Each audio family's loader (audio_projector_registry.cpp picks one by type).
Result<std::unique_ptr<AudioProjector>> load_ultravox(std::unique_ptr<ClipFile> file,
                                                      const engine::LoadOptions& options);
Result<std::unique_ptr<AudioProjector>> load_voxtral(std::unique_ptr<ClipFile> file,
                                                     const engine::LoadOptions& options);
Result<std::unique_ptr<AudioProjector>> load_qwen2a(std::unique_ptr<ClipFile> file,
                                                    const engine::LoadOptions& options);

// A 2-D projector matrix `name` [n_cols, *] of any row count; its rows (the output width)
// come from the file. Refuses a missing tensor or another input width, naming it.
Result<engine::WeightMatrix> load_projection(engine::TensorLoader& loader, const std::string& name,
                                             int64_t n_cols);

}  // namespace detail
}  // namespace hearth::media
