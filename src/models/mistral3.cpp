// mistral3: Mistral Small 3.x / Ministral 3 text models as the reference distinguishes them.
// The llama block (interleaved RoPE, optional biases and rope_freqs, optional experts with
// renormalized weights), plus, when attention.temperature_scale is given, Llama-4-style
// attention temperature tuning: q of a token at position p multiplied by
// 1 + temperature_scale * ln(floor(p / n_ctx_orig) + 1).
#include <fmt/format.h>

#include "models/architectures.h"
#include "models/llama_family.h"

namespace hearth::models {

Result<ModelPtr> load_mistral3(std::shared_ptr<const gguf::Archive> archive,
                               engine::ModelHparams hp, const engine::LoadOptions& options) {
  const gguf::File& f = archive->primary();
  FamilySpec spec;
  spec.rope = engine::ops::RopeKind::kNorm;
  spec.optional_biases = true;
  spec.moe_norm_weights = true;
  HEARTH_ASSIGN_OR_RETURN(spec.attn_temp_scale,
                          engine::read_f32_key(f, hp.arch + ".attention.temperature_scale", 0.0f));
  if (spec.attn_temp_scale != 0.0f) {
    spec.attn_temp_floor = hp.rope.n_ctx_orig;
    if (spec.attn_temp_floor <= 0)
      return error(ErrorCode::kCorruptFile,
                   fmt::format("{}: attention temperature scaling needs a positive original "
                               "context length",
                               f.name()));
  }
  return load_llama_family(std::move(archive), std::move(hp), spec, options);
}

}  // namespace hearth::models
