// qwen3moe: Qwen3 mixture of experts (Qwen3-30B-A3B, 235B-A22B). Qwen3's attention (NeoX
// RoPE, per-head q/k RMSNorms) and a routed FFN: softmax router, top-k experts, their
// weights renormalized to sum 1, no shared expert.
#include "models/architectures.h"
#include "models/llama_family.h"

namespace hearth::models {

Result<ModelPtr> load_qwen3moe(std::shared_ptr<const gguf::Archive> archive,
                               engine::ModelHparams hp, const engine::LoadOptions& options) {
  HEARTH_RETURN_IF_ERROR(require_experts(*archive, hp));
  FamilySpec spec;
  spec.rope = engine::ops::RopeKind::kNeox;
  spec.qk_norm = true;
  spec.moe_norm_weights = true;
  return load_llama_family(std::move(archive), std::move(hp), spec, options);
}

}  // namespace hearth::models
