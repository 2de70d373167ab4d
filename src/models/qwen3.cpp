// qwen3: Qwen3 dense. NeoX RoPE, no biases, per-head RMSNorm of Q and K (weights [D])
// applied before RoPE. H*D may differ from n_embd (Qwen3-0.6B: E=1024, H*D=2048). Rerankers
// carry cls.output [E, n_cls_out], which rank pooling applies to the last row, then a softmax.
#include "models/architectures.h"
#include "models/llama_family.h"

namespace hearth::models {

Result<ModelPtr> load_qwen3(std::shared_ptr<const gguf::Archive> archive, engine::ModelHparams hp,
                            const engine::LoadOptions& options) {
  FamilySpec spec;
  spec.rope = engine::ops::RopeKind::kNeox;
  spec.qk_norm = true;
  spec.rank_head = true;  // Qwen3-Reranker: the yes/no rows of the LM head as a classifier
  return load_llama_family(std::move(archive), std::move(hp), spec, options);
}

}  // namespace hearth::models
