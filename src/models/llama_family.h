// The pre-norm transformer shared by the llama family (llama, mistral, qwen2, qwen3,
// smollm3): RMSNorm -> self-attention -> residual, RMSNorm -> SwiGLU FFN -> residual.
// Each architecture file describes its variant with a FamilySpec.
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
};

class LlamaFamilyModel : public engine::Model {
 public:
  LlamaFamilyModel(std::shared_ptr<const gguf::Archive> archive, engine::ModelHparams hparams,
                   engine::ModelWeights weights, FamilySpec spec)
      : Model(std::move(archive), std::move(hparams), std::move(weights)), spec_(spec) {}

  void forward_layer(int32_t il, engine::ForwardState& st) const override;

 private:
  FamilySpec spec_;
};

// Loads the tensors of a llama-family model with exact shape checks and builds it.
Result<ModelPtr> load_llama_family(std::shared_ptr<const gguf::Archive> archive,
                                   engine::ModelHparams hparams, const FamilySpec& spec,
                                   const engine::LoadOptions& options);

}  // namespace hearth::models
