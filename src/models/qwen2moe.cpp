// qwen2moe: Qwen1.5-MoE and Qwen2-57B-A14B. Qwen2's attention (NeoX RoPE, q/k/v biases) and
// a routed FFN: softmax router, top-k experts with their probabilities as weights (not
// renormalized), plus a shared expert scaled per token by the sigmoid of its own router.
#include "models/architectures.h"
#include "models/llama_family.h"

namespace hearth::models {

Result<ModelPtr> load_qwen2moe(std::shared_ptr<const gguf::Archive> archive,
                               engine::ModelHparams hp, const engine::LoadOptions& options) {
  HEARTH_RETURN_IF_ERROR(require_experts(*archive, hp));
  FamilySpec spec;
  spec.rope = engine::ops::RopeKind::kNeox;
  spec.optional_biases = true;
  spec.shared_expert = true;
  return load_llama_family(std::move(archive), std::move(hp), spec, options);
}

}  // namespace hearth::models
