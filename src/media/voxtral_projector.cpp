// Voxtral's projector (llama.cpp whisper-enc.cpp, PROJECTOR_TYPE_VOXTRAL): the Whisper
// encoder's states, average-pooled over frame pairs before the post-LN ([n_frames/4][E]), are
// stacked stack_factor (4) frames to a row [S = E*sf] and go through mm.a.mlp.1 [S -> H], the
// exact GELU and mm.a.mlp.2 [H -> T], without biases. The reference puts "[BEGIN_AUDIO]"
// before an audio input's embeddings and nothing after.
#include <fmt/format.h>

#include "kernels/matmul.h"
#include "media/audio_projector.h"

namespace hearth::media::detail {
namespace {

using engine::WeightMatrix;

class VoxtralProjector final : public AudioProjector {
 public:
  VoxtralProjector(std::unique_ptr<ClipFile> file, WhisperEncoder encoder, WeightMatrix mlp1,
                   WeightMatrix mlp2, std::vector<engine::OwnedBytes> owned)
      : AudioProjector(std::move(file), std::move(encoder)), mlp1_(mlp1), mlp2_(mlp2) {
    owned_ = std::move(owned);
  }

  std::string_view family() const override { return "voxtral"; }
  // The reference's count: frames aligned up to the stack factor, stacked, halved by conv2 and
  // by the pooling (3000 frames: 187; the last half row, silence, is dropped).
  int32_t n_output_tokens(int32_t n_frames) const override {
    const int32_t sf = hparams().stack_factor;
    return (n_frames + sf - 1) / sf / 2 / 2;
  }
  int32_t n_embd_out() const override { return static_cast<int32_t>(mlp2_.n_rows); }
  std::string_view audio_begin() const override { return "[BEGIN_AUDIO]"; }

  Status encode(const float* mel, int32_t n_mel, int32_t n_frames, ThreadPool& pool,
                float* out) const override {
    HEARTH_RETURN_IF_ERROR(check_mel(mel, n_mel, n_frames));
    const int64_t E = hparams().n_embd, n_tok = n_output_tokens(n_frames), H = mlp1_.n_rows;
    std::vector<float> h = encoder_.encode(mel, n_frames, true, pool);
    std::vector<float> x = stack_frames(h, n_frames / 4, E, hparams().stack_factor, n_tok);
    std::vector<float> mid(size_t(n_tok * H));
    kernels::matmul(mlp1_, x.data(), n_tok, mid.data(), pool);
    constexpr int64_t kChunk = 4096;
    const int64_t total = n_tok * H;
    pool.parallel_for((total + kChunk - 1) / kChunk, [&](int64_t begin, int64_t end, int) {
      const int64_t lo = begin * kChunk, hi = std::min(total, end * kChunk);
      gelu_erf(mid.data() + lo, hi - lo);
    });
    kernels::matmul(mlp2_, mid.data(), n_tok, out, pool);
    return Status::ok();
  }

 private:
  WeightMatrix mlp1_, mlp2_;  // [H][S], [T][H]
};

}  // namespace

Result<std::unique_ptr<AudioProjector>> load_voxtral(std::unique_ptr<ClipFile> file,
                                                     const engine::LoadOptions& options) {
  const AudioHparams& hp = file->audio;
  if (hp.stack_factor <= 0)
    return error(ErrorCode::kCorruptFile,
                 fmt::format("{}: projector key 'clip.audio.projector.stack_factor' is missing",
                             file->path));
  engine::TensorLoader loader(file->archive, options);
  HEARTH_ASSIGN_OR_RETURN(WhisperEncoder encoder, WhisperEncoder::load(loader, hp));
  const int64_t S = int64_t{hp.n_embd} * hp.stack_factor;
  HEARTH_ASSIGN_OR_RETURN(WeightMatrix mlp1, load_projection(loader, "mm.a.mlp.1.weight", S));
  HEARTH_ASSIGN_OR_RETURN(WeightMatrix mlp2,
                          load_projection(loader, "mm.a.mlp.2.weight", mlp1.n_rows));
  std::vector<engine::OwnedBytes> owned = loader.take_repacked();
  return std::unique_ptr<AudioProjector>(
      new VoxtralProjector(std::move(file), std::move(encoder), mlp1, mlp2, std::move(owned)));
}

}  // namespace hearth::media::detail
