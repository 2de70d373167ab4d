// gemma: Gemma 1. The llama tensor set without biases, NeoX RoPE, input rows scaled by
// sqrt(E), q scaled by 1/sqrt(D) after RoPE, a GELU-gated FFN, and the output tied to the
// embeddings. (The converter stores Gemma's (1 + w) norm weights with the 1 added.)
#include <cmath>

#include "models/architectures.h"
#include "models/gemma_keys.h"
#include "models/llama_family.h"

namespace hearth::models {

Result<ModelPtr> load_gemma(std::shared_ptr<const gguf::Archive> archive, engine::ModelHparams hp,
                            const engine::LoadOptions& options) {
  FamilySpec spec = gemma::base_spec(hp, /*post_norms=*/false);
  spec.q_scale = 1.0f / std::sqrt(static_cast<float>(hp.head_dim_v));
  return load_llama_family(std::move(archive), std::move(hp), spec, options);
}

}  // namespace hearth::models
