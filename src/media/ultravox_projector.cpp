// Ultravox's projector (llama.cpp whisper-enc.cpp, PROJECTOR_TYPE_ULTRAVOX): the Whisper
// encoder's states [n_frames/2][E] are stacked stack_factor frames to a row [S = E*sf], then
// RMS-normed (eps 1e-6) times mm.a.norm_pre [S], projected by mm.a.mlp.1 [S -> 2H], passed
// through SwiGLU with the second half as the gate (silu(b) * a, Ultravox's order), RMS-normed
// times mm.a.norm_mid [H] and projected by mm.a.mlp.2 [H -> T]. No biases, no markers.
#include <fmt/format.h>

#include "engine/ops.h"
#include "kernels/matmul.h"
#include "media/audio_projector.h"

namespace hearth::media::detail {
namespace {

using engine::WeightMatrix;

constexpr float kNormEps = 1e-6f;  // the reference's fixed epsilon for both RMS norms

class UltravoxProjector final : public AudioProjector {
 public:
  UltravoxProjector(std::unique_ptr<ClipFile> file, WhisperEncoder encoder, WeightMatrix mlp1,
                    WeightMatrix mlp2, std::vector<float> norm_pre, std::vector<float> norm_mid,
                    std::vector<engine::OwnedBytes> owned)
      : AudioProjector(std::move(file), std::move(encoder)),
        mlp1_(mlp1),
        mlp2_(mlp2),
        norm_pre_(std::move(norm_pre)),
        norm_mid_(std::move(norm_mid)) {
    owned_ = std::move(owned);
  }

  std::string_view family() const override { return "ultravox"; }
  // The reference's count: frames aligned up to the stack factor, stacked, halved by conv2.
  // For 3000 frames and sf = 8 that is 187: the encoder's 1500 states make 187.5 rows and the
  // half row of padding (silence) is dropped.
  int32_t n_output_tokens(int32_t n_frames) const override {
    const int32_t sf = hparams().stack_factor;
    return (n_frames + sf - 1) / sf / 2;
  }
  int32_t n_embd_out() const override { return static_cast<int32_t>(mlp2_.n_rows); }

  Status encode(const float* mel, int32_t n_mel, int32_t n_frames, ThreadPool& pool,
                float* out) const override {
    HEARTH_RETURN_IF_ERROR(check_mel(mel, n_mel, n_frames));
    const int64_t E = hparams().n_embd, sf = hparams().stack_factor, S = E * sf;
    const int64_t n_tok = n_output_tokens(n_frames), H = norm_mid_.size();
    std::vector<float> h = encoder_.encode(mel, n_frames, false, pool);
    std::vector<float> x = stack_frames(h, n_frames / 2, E, hparams().stack_factor, n_tok);
    rms_norm_rows(x.data(), norm_pre_, n_tok, S, kNormEps, pool);
    std::vector<float> up(size_t(n_tok * 2 * H)), mid(size_t(n_tok * H));
    kernels::matmul(mlp1_, x.data(), n_tok, up.data(), pool);
    for (int64_t t = 0; t < n_tok; ++t) {
      const float* row = up.data() + t * 2 * H;
      engine::ops::swiglu(row + H, row, mid.data() + t * H, H);
    }
    rms_norm_rows(mid.data(), norm_mid_, n_tok, H, kNormEps, pool);
    kernels::matmul(mlp2_, mid.data(), n_tok, out, pool);
    return Status::ok();
  }

 private:
  WeightMatrix mlp1_, mlp2_;     // [2H][S], [T][H]
  std::vector<float> norm_pre_;  // [S]
  std::vector<float> norm_mid_;  // [H]
};

}  // namespace

Result<std::unique_ptr<AudioProjector>> load_ultravox(std::unique_ptr<ClipFile> file,
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
  if (mlp1.n_rows % 2 != 0)
    return error(ErrorCode::kCorruptFile,
                 fmt::format("{}: 'mm.a.mlp.1.weight' has {} outputs, not an even SwiGLU pair",
                             file->path, mlp1.n_rows));
  const int64_t H = mlp1.n_rows / 2;
  HEARTH_ASSIGN_OR_RETURN(WeightMatrix mlp2, load_projection(loader, "mm.a.mlp.2.weight", H));
  HEARTH_ASSIGN_OR_RETURN(std::vector<float> norm_pre, loader.vector("mm.a.norm_pre.weight", S));
  HEARTH_ASSIGN_OR_RETURN(std::vector<float> norm_mid, loader.vector("mm.a.norm_mid.weight", H));
  std::vector<engine::OwnedBytes> owned = loader.take_repacked();
  return std::unique_ptr<AudioProjector>(
      new UltravoxProjector(std::move(file), std::move(encoder), mlp1, mlp2, std::move(norm_pre),
                            std::move(norm_mid), std::move(owned)));
}

}  // namespace hearth::media::detail
