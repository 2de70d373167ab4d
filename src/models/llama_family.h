// The pre-norm transformer shared by the llama family (llama, mistral, qwen2, qwen3,
// smollm3, gemma, gemma2, gemma3, granite, phi3, olmo2, mistral3, gpt-oss and the MoE variants):
// RMSNorm -> self-attention -> residual, RMSNorm -> SwiGLU (gemma: GELU-gated) FFN -> residual;
// gemma2/3 and olmo2 normalize each block's output again before its residual add (olmo2 without the
// norms before). Each architecture file describes its variant with a FamilySpec.
#pragma once

#include <memory>

#include "engine/forward.h"
#include "engine/model.h"
#include "engine/moe.h"
#include "models/registry.h"

namespace hearth::models {

struct FamilySpec {
  engine::ops::RopeKind rope = engine::ops::RopeKind::kNorm;
  bool qkv_bias = false;           // q/k/v biases are required
  bool optional_qkv_bias = false;  // q/k/v biases may be present (qwen2vl, qwen3vl)
  bool qk_norm = false;            // per-head attn_q_norm / attn_k_norm are required
  bool optional_biases = false;    // llama: attn_output / ffn biases may be present
  bool output_bias = false;        // an output.bias may be present
  int32_t nope_period = 0;         // > 0: layers with (il + 1) % nope_period == 0 skip RoPE
  bool rank_head = false;          // qwen3: an optional cls.output [E, n_cls_out] (rerankers)
  // Input rows multiplied by embd_scale (0: not; gemma: sqrt(E), granite: its key);
  // block outputs by residual_scale before each residual add (granite); scores by kq_scale
  // (0: 1/sqrt(D); granite's attention.scale), or q by q_scale after RoPE with the scores
  // then unscaled (gemma, phi3).
  float embd_scale = 0.0f;
  float residual_scale = 0.0f;
  float kq_scale = 0.0f;
  float q_scale = 0.0f;
  bool gelu_ffn = false;       // gemma: a GELU-gated FFN
  bool post_norms = false;     // gemma2/3, olmo2: post-attention and post-FFN RMSNorms
  bool pre_norms = true;       // olmo2: false, blocks read the residual stream unnormalized
  bool qk_norm_rows = false;   // olmo2: q/k RMSNorms over whole rows ([H*D], [Hkv*D])
  bool fused_qkv = false;      // phi3: attn_qkv [E, H*D + 2 Hkv*D] in place of q/k/v
  bool fused_gate_up = false;  // phi3: ffn_up [E, 2F], gate half then up half, no ffn_gate
  float attn_softcap = 0.0f;   // gemma2: attention logit soft-capping
  // mistral3: attention temperature tuning (0: off) and its position floor (n_ctx_orig).
  float attn_temp_scale = 0.0f;
  int32_t attn_temp_floor = 0;
  // Mixture of experts (when the file has <arch>.expert_count): whether the top-k routing
  // weights are renormalized (qwen3moe, mixtral), and whether a shared expert is required
  // (qwen2moe).
  bool moe_norm_weights = false;
  bool shared_expert = false;
  // gpt-oss: top-k logits then their softmax, the clamped SwiGLU, a router bias and
  // per-expert biases ([Fe, n_expert], [E, n_expert]).
  engine::MoeGating moe_gating = engine::MoeGating::kSoftmaxThenTopK;
  engine::MoeActivation moe_activation = engine::MoeActivation::kSilu;
  bool expert_biases = false;
  // gpt-oss: the attention output's bias is required (q/k/v biases optional), each layer has
  // attention sinks [H], and the FFN's norm is named post_attention_norm.
  bool attn_out_bias = false;
  bool attn_sinks = false;
  const char* ffn_norm_name = "ffn_norm";
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
  int32_t attention_window(int32_t il) const override;

 private:
  FamilySpec spec_;
};

// kCorruptFile unless the model has experts (<arch>.expert_count, .expert_used_count).
Status require_experts(const gguf::Archive& archive, const engine::ModelHparams& hp);

// <arch>.attention.sliding_window_pattern as a scalar; the reference reads an array (or a
// missing key) as `fallback`.
uint32_t read_swa_period(const gguf::File& f, const std::string& arch, uint32_t fallback);
// <arch>.attention.sliding_window, or `fallback` when absent.
Result<int32_t> read_window(const gguf::File& f, const std::string& arch, int64_t fallback);

// M-RoPE models: <arch>.rope.dimension_sections (required) into hp.rope_sections, and
// hp.mrope = kind.
Status read_multi_rope(const gguf::File& f, engine::MultiRope kind, engine::ModelHparams& hp);
// qwen3vl: <arch>.n_deepstack_layers (0 when absent) into hp.n_deepstack.
Status read_deepstack(const gguf::File& f, engine::ModelHparams& hp);

// Loads the tensors of a llama-family model with exact shape checks and builds it.
Result<ModelPtr> load_llama_family(std::shared_ptr<const gguf::Archive> archive,
                                   engine::ModelHparams hparams, const FamilySpec& spec,
                                   const engine::LoadOptions& options);

}  // namespace hearth::models
