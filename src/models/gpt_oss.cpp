// gpt-oss: OpenAI's open-weight mixture of experts (gpt-oss-20b, -120b). Pre-norm blocks
// with NeoX RoPE (usually YaRN-scaled), q/k/v and output biases, a per-head attention sink
// in every softmax, and sliding-window layers alternating with global ones (pattern 2: even
// layers local). The FFN, normed by post_attention_norm, routes each token to the experts of
// its k largest router logits (plus the router's bias), weighs them by a softmax over those
// k, and runs each expert's clamped SwiGLU with its own biases.
#include <fmt/format.h>

#include "models/architectures.h"
#include "models/llama_family.h"

namespace hearth::models {

Result<ModelPtr> load_gpt_oss(std::shared_ptr<const gguf::Archive> archive, engine::ModelHparams hp,
                              const engine::LoadOptions& options) {
  HEARTH_RETURN_IF_ERROR(require_experts(*archive, hp));
  const gguf::File& f = archive->primary();
  const std::string a = hp.arch;
  // The reference requires the experts' width and the window.
  for (const char* key : {".expert_feed_forward_length", ".attention.sliding_window"}) {
    if (f.find(a + key) == nullptr)
      return error(ErrorCode::kCorruptFile, fmt::format("{}: {} needs {}{}", f.name(), a, a, key));
  }
  FamilySpec spec;
  spec.rope = engine::ops::RopeKind::kNeox;
  spec.attn_out_bias = true;
  spec.attn_sinks = true;
  spec.ffn_norm_name = "post_attention_norm";
  spec.moe_gating = engine::MoeGating::kTopKThenSoftmax;
  spec.moe_activation = engine::MoeActivation::kClampedSwiglu;
  spec.expert_biases = true;
  HEARTH_ASSIGN_OR_RETURN(spec.n_swa, read_window(f, a, 0));
  spec.swa_period = read_swa_period(f, a, 2);
  // Local layers keep the model's rope (its scaling included) with their own base if given.
  if (f.find(a + ".rope.freq_base_swa") != nullptr) {
    hp.rope_swa = hp.rope;
    HEARTH_ASSIGN_OR_RETURN(hp.rope_swa->freq_base,
                            engine::read_f32_key(f, a + ".rope.freq_base_swa", 0.0f));
  }
  return load_llama_family(std::move(archive), std::move(hp), spec, options);
}

}  // namespace hearth::models
