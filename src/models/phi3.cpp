// phi3: Phi-3, Phi-3.5 and Phi-4 (dense). The llama block with NeoX RoPE, a fused QKV
// (attn_qkv; separate q/k/v also load), a fused gate-up matrix (ffn_up [E, 2F]: SiLU of
// the first half times the second), q scaled by 1/sqrt(D) after RoPE, and LongRoPE's
// per-pair factors (rope_factors_long / _short, chosen by the context per sequence).
// The reference ignores Phi's sliding-window keys (its SWA is disabled); so does Hearth.
#include <cmath>

#include "models/architectures.h"
#include "models/llama_family.h"

namespace hearth::models {

Result<ModelPtr> load_phi3(std::shared_ptr<const gguf::Archive> archive, engine::ModelHparams hp,
                           const engine::LoadOptions& options) {
  FamilySpec spec;
  spec.rope = engine::ops::RopeKind::kNeox;
  spec.fused_qkv = true;
  spec.fused_gate_up = true;
  spec.q_scale = 1.0f / std::sqrt(static_cast<float>(hp.head_dim_v));
  return load_llama_family(std::move(archive), std::move(hp), spec, options);
}

}  // namespace hearth::models
