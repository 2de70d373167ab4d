// qwen3vl: the dense text models of Qwen3-VL. qwen3's block (per-head q/k RMSNorms before
// the rotation, no biases) with interleaved M-RoPE (the reference's IMROPE: pair i takes the
// time, height and width positions in turn while each section has pairs left) and deepstack:
// an image row carries n_embd * (1 + <arch>.n_deepstack_layers) values, the main embedding
// then one slice per deepstack layer, and slice k + 1 is added to the row's hidden state after
// layer k (engine::add_deepstack). Text rows add nothing. The reference's qwen3vlmoe is the
// same with qwen3moe's routed FFN.
#include "models/architectures.h"
#include "models/llama_family.h"

namespace hearth::models {

namespace {

Result<ModelPtr> load_qwen3vl_spec(std::shared_ptr<const gguf::Archive> archive,
                                   engine::ModelHparams hp, const engine::LoadOptions& options,
                                   FamilySpec spec) {
  HEARTH_RETURN_IF_ERROR(read_multi_rope(archive->primary(), engine::MultiRope::kInterleaved, hp));
  HEARTH_RETURN_IF_ERROR(read_deepstack(archive->primary(), hp));
  spec.rope = engine::ops::RopeKind::kNeox;
  spec.qk_norm = true;
  spec.optional_qkv_bias = true;
  return load_llama_family(std::move(archive), std::move(hp), spec, options);
}

}  // namespace

Result<ModelPtr> load_qwen3vl(std::shared_ptr<const gguf::Archive> archive, engine::ModelHparams hp,
                              const engine::LoadOptions& options) {
  FamilySpec spec;
  spec.rank_head = true;  // the reference loads an optional cls.output here too
  return load_qwen3vl_spec(std::move(archive), std::move(hp), options, spec);
}

Result<ModelPtr> load_qwen3vlmoe(std::shared_ptr<const gguf::Archive> archive,
                                 engine::ModelHparams hp, const engine::LoadOptions& options) {
  HEARTH_RETURN_IF_ERROR(require_experts(*archive, hp));
  FamilySpec spec;
  spec.moe_norm_weights = true;
  return load_qwen3vl_spec(std::move(archive), std::move(hp), options, spec);
}

}  // namespace hearth::models
