// qwen2: Qwen1.5, Qwen2, Qwen2.5, DeepSeek-R1-Distill-Qwen. NeoX RoPE, q/k/v biases,
// optional output bias, tied embeddings in the small models.
#include "models/architectures.h"
#include "models/llama_family.h"

namespace hearth::models {

Result<ModelPtr> load_qwen2(std::shared_ptr<const gguf::Archive> archive, engine::ModelHparams hp,
                            const engine::LoadOptions& options) {
  FamilySpec spec;
  spec.rope = engine::ops::RopeKind::kNeox;
  spec.qkv_bias = true;
  spec.output_bias = true;
  return load_llama_family(std::move(archive), std::move(hp), spec, options);
}

}  // namespace hearth::models
