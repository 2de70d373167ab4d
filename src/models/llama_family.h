// The pre-norm transformer shared by the llama family (llama, mistral, qwen2, qwen3,
// smollm3, gemma, gemma2, gemma3): RMSNorm -> self-attention -> residual, RMSNorm -> SwiGLU
// (gemma: GELU-gated) FFN -> residual; gemma2/3 normalize each block's output again before
// its residual add. Each architecture file describes its variant with a FamilySpec.
#pragma once

#include <memory>

#include "engine/forward.h"
#include "engine/model.h"
#include "models/registry.h"

namespace hearth::models {

struct FamilySpec {
  engine::ops::RopeKind rope = engine::ops::RopeKind::kNorm;
  bool qkv_bias = false;         // q/k/v biases are required
  bool qk_norm = false;          // per-head attn_q_norm / attn_k_norm are required
  bool optional_biases = false;  // llama: attn_output / ffn biases may be present
  bool output_bias = false;      // an output.bias may be present
  int32_t nope_period = 0;       // > 0: layers with (il + 1) % nope_period == 0 skip RoPE
  bool rank_head = false;        // qwen3: an optional cls.output [E, n_cls_out] (rerankers)
  // gemma: input rows scaled by sqrt(E), a GELU-gated FFN, q multiplied by q_scale after
  // RoPE (the scores then unscaled); gemma2/3: post-attention and post-FFN RMSNorms.
  bool scale_embeddings = false;
  bool gelu_ffn = false;
  bool post_norms = false;
  float q_scale = 0.0f;
  float attn_softcap = 0.0f;  // gemma2: attention logit soft-capping
  // Sliding-window layers (gemma2/3): n_swa > 0 and layer il local when swa_period == 0 or
  // il % swa_period < swa_period - 1 (the last layer of each period is global).
  int32_t n_swa = 0;
  uint32_t swa_period = 0;
  bool is_local(int32_t il) const {
    return n_swa > 0 &&
           (swa_period == 0 || static_cast<uint32_t>(il) % swa_period < swa_period - 1);
  }
};

class LlamaFamilyModel : public engine::Model {
 public:
  LlamaFamilyModel(std::shared_ptr<const gguf::Archive> archive, engine::ModelHparams hparams,
                   engine::ModelWeights weights, FamilySpec spec)
      : Model(std::move(archive), std::move(hparams), std::move(weights)), spec_(spec) {}

  void forward_layer(int32_t il, engine::ForwardState& st) const override;
  void embed_input(engine::ForwardState& st) const override;

 private:
  FamilySpec spec_;
};

// Loads the tensors of a llama-family model with exact shape checks and builds it.
Result<ModelPtr> load_llama_family(std::shared_ptr<const gguf::Archive> archive,
                                   engine::ModelHparams hparams, const FamilySpec& spec,
                                   const engine::LoadOptions& options);

}  // namespace hearth::models
