// olmoe: OLMoE. Pre-norm blocks with NeoX RoPE, q/k RMSNorms over whole rows, and a routed
// FFN: softmax router, top-k experts with their probabilities as weights (not renormalized).
#include "models/architectures.h"
#include "models/llama_family.h"

namespace hearth::models {

Result<ModelPtr> load_olmoe(std::shared_ptr<const gguf::Archive> archive, engine::ModelHparams hp,
                            const engine::LoadOptions& options) {
  HEARTH_RETURN_IF_ERROR(require_experts(*archive, hp));
  hp.n_ff_exp = hp.n_ff;  // the reference sizes the experts by feed_forward_length
  FamilySpec spec;
  spec.rope = engine::ops::RopeKind::kNeox;
  spec.qk_norm = true;
  spec.qk_norm_rows = true;
  return load_llama_family(std::move(archive), std::move(hp), spec, options);
}

}  // namespace hearth::models
