// olmo2: OLMo 2 (and OLMo 3's sliding-window variant). NeoX RoPE; no norms before the
// attention and the FFN: q and k get RMSNorms over their whole rows instead, and each block's
// output an RMSNorm before its residual add. With attention.sliding_window, three local
// layers to one global (sliding_window_pattern, default 4); local layers use the model's
// rope base without its scaling (as the reference's graph does).
#include "models/architectures.h"
#include "models/llama_family.h"

namespace hearth::models {

Result<ModelPtr> load_olmo2(std::shared_ptr<const gguf::Archive> archive, engine::ModelHparams hp,
                            const engine::LoadOptions& options) {
  const gguf::File& f = archive->primary();
  FamilySpec spec;
  spec.rope = engine::ops::RopeKind::kNeox;
  spec.pre_norms = false;
  spec.post_norms = true;
  spec.qk_norm = true;
  spec.qk_norm_rows = true;
  HEARTH_ASSIGN_OR_RETURN(spec.n_swa, read_window(f, hp.arch, 0));
  if (spec.n_swa > 0) {
    spec.swa_period = read_swa_period(f, hp.arch, 4);
    hp.rope_swa = hp.rope;
    hp.rope_swa->scaling = engine::RopeScaling::kNone;
    hp.rope_swa->freq_scale = 1.0f;
    hp.rope_swa->yarn_ext_factor = 0.0f;
    hp.rope_swa->attn_factor = 1.0f;
  }
  return load_llama_family(std::move(archive), std::move(hp), spec, options);
}

}  // namespace hearth::models
