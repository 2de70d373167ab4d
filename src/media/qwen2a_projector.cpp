// Qwen2-Audio's projector (llama.cpp whisper-enc.cpp, PROJECTOR_TYPE_QWEN2A, also the legacy
// "qwen2.5o" files' audio side): the Whisper encoder's states, average-pooled over frame pairs
// before the post-LN ([n_frames/4][E]), projected by mm.a.fc [E -> T] plus its bias. The
// reference puts "<|audio_bos|>" and "<|audio_eos|>" around an audio input's embeddings.
#include <fmt/format.h>

#include "kernels/matmul.h"
#include "media/audio_projector.h"

namespace hearth::media::detail {
namespace {

using engine::WeightMatrix;

class Qwen2aProjector final : public AudioProjector {
 public:
  Qwen2aProjector(std::unique_ptr<ClipFile> file, WhisperEncoder encoder, WeightMatrix fc,
                  std::vector<float> fc_b, std::vector<engine::OwnedBytes> owned)
      : AudioProjector(std::move(file), std::move(encoder)), fc_(fc), fc_b_(std::move(fc_b)) {
    owned_ = std::move(owned);
  }

  std::string_view family() const override { return "qwen2a"; }
  int32_t n_output_tokens(int32_t n_frames) const override { return n_frames / 2 / 2; }
  int32_t n_embd_out() const override { return static_cast<int32_t>(fc_.n_rows); }
  std::string_view audio_begin() const override { return "<|audio_bos|>"; }
  std::string_view audio_end() const override { return "<|audio_eos|>"; }

  Status encode(const float* mel, int32_t n_mel, int32_t n_frames, ThreadPool& pool,
                float* out) const override {
    HEARTH_RETURN_IF_ERROR(check_mel(mel, n_mel, n_frames));
    const int64_t n_tok = n_output_tokens(n_frames);
    std::vector<float> h = encoder_.encode(mel, n_frames, true, pool);
    kernels::matmul(fc_, h.data(), n_tok, out, pool);
    add_bias_rows(out, fc_b_, n_tok);
    return Status::ok();
  }

 private:
  WeightMatrix fc_;          // [T][E]
  std::vector<float> fc_b_;  // [T]
};

}  // namespace

Result<std::unique_ptr<AudioProjector>> load_qwen2a(std::unique_ptr<ClipFile> file,
                                                    const engine::LoadOptions& options) {
  const AudioHparams& hp = file->audio;
  engine::TensorLoader loader(file->archive, options);
  HEARTH_ASSIGN_OR_RETURN(WhisperEncoder encoder, WhisperEncoder::load(loader, hp));
  HEARTH_ASSIGN_OR_RETURN(WeightMatrix fc, load_projection(loader, "mm.a.fc.weight", hp.n_embd));
  HEARTH_ASSIGN_OR_RETURN(std::vector<float> fc_b, loader.vector("mm.a.fc.bias", fc.n_rows));
  std::vector<engine::OwnedBytes> owned = loader.take_repacked();
  return std::unique_ptr<AudioProjector>(new Qwen2aProjector(
      std::move(file), std::move(encoder), fc, std::move(fc_b), std::move(owned)));
}

}  // namespace hearth::media::detail
