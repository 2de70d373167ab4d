// llama: Llama 1/2/3.x, Mistral 7B / Nemo / Small stored as llama, SmolLM v1-v2,
// TinyLlama, llama2.c conversions, and Mixtral (llama with experts: top-k of a softmax
// router, weights renormalized). Interleaved ("normal") RoPE on Q/K rows the converter
// permuted for it; optional llama3 rope_freqs divisors; optional projection biases.
#include <fmt/format.h>

#include "models/architectures.h"
#include "models/llama_family.h"

namespace hearth::models {

Result<ModelPtr> load_llama(std::shared_ptr<const gguf::Archive> archive, engine::ModelHparams hp,
                            const engine::LoadOptions& options) {
  if (hp.n_rot != hp.head_dim)
    return error(
        ErrorCode::kCorruptFile,
        fmt::format("{}: llama needs rope.dimension_count ({}) equal to the head size ({})",
                    archive->primary().name(), hp.n_rot, hp.head_dim));
  hp.n_ff_exp = hp.n_ff;  // the reference sizes the experts by feed_forward_length
  FamilySpec spec;
  spec.rope = engine::ops::RopeKind::kNorm;
  spec.optional_biases = true;
  spec.moe_norm_weights = true;  // Mixtral
  return load_llama_family(std::move(archive), std::move(hp), spec, options);
}

}  // namespace hearth::models
