// granite: IBM Granite (dense). The llama block with optional biases and four multipliers:
// input rows by embedding_scale, each block output by residual_scale before its residual
// add, scores by attention.scale (in place of 1/sqrt(D)), and logits divided by the
// (required) logit_scale. rope.scaling.finetuned = false turns RoPE off in every layer.
#include <fmt/format.h>

#include "models/architectures.h"
#include "models/llama_family.h"

namespace hearth::models {

Result<ModelPtr> load_granite(std::shared_ptr<const gguf::Archive> archive, engine::ModelHparams hp,
                              const engine::LoadOptions& options) {
  const gguf::File& f = archive->primary();
  const std::string a = hp.arch;
  FamilySpec spec;
  spec.rope = engine::ops::RopeKind::kNorm;
  spec.optional_biases = true;
  if (f.find(a + ".logit_scale") == nullptr)
    return error(ErrorCode::kCorruptFile,
                 fmt::format("{}: required key '{}.logit_scale' is missing", f.name(), a));
  HEARTH_ASSIGN_OR_RETURN(hp.logit_scale, engine::read_f32_key(f, a + ".logit_scale", 0.0f));
  HEARTH_ASSIGN_OR_RETURN(spec.residual_scale, engine::read_f32_key(f, a + ".residual_scale", 0));
  HEARTH_ASSIGN_OR_RETURN(spec.embd_scale, engine::read_f32_key(f, a + ".embedding_scale", 0));
  HEARTH_ASSIGN_OR_RETURN(spec.kq_scale, engine::read_f32_key(f, a + ".attention.scale", 0));
  if (const gguf::Value* tuned = f.find(a + ".rope.scaling.finetuned")) {
    if (tuned->type() != gguf::ValueType::kBool)
      return error(ErrorCode::kCorruptFile,
                   fmt::format("{}: {}.rope.scaling.finetuned must be a bool", f.name(), a));
    HEARTH_ASSIGN_OR_RETURN(bool on, f.get_bool(a + ".rope.scaling.finetuned"));
    if (!on) spec.nope_period = 1;  // every layer without RoPE
  }
  return load_llama_family(std::move(archive), std::move(hp), spec, options);
}

}  // namespace hearth::models
