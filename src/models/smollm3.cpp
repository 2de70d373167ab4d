// smollm3: SmolLM3. The llama tensor set and interleaved RoPE, except that every fourth
// layer (il = 3, 7, 11, ...) uses no positional encoding at all (NoPE).
#include "models/architectures.h"
#include "models/llama_family.h"

namespace hearth::models {

Result<ModelPtr> load_smollm3(std::shared_ptr<const gguf::Archive> archive, engine::ModelHparams hp,
                              const engine::LoadOptions& options) {
  FamilySpec spec;
  spec.rope = engine::ops::RopeKind::kNorm;
  spec.optional_biases = true;
  spec.nope_period = 4;
  return load_llama_family(std::move(archive), std::move(hp), spec, options);
}

}  // namespace hearth::models
