// gemma3: Gemma 3 (text). Gemma 2's blocks with per-head q/k RMSNorms and no attention
// soft-capping; final logits soft-capped only when final_logit_softcapping is given. With
// attention.sliding_window, five local layers to one global (sliding_window_pattern,
// default 6); local layers use rope.freq_base_swa (default 10000) without the model's rope
// scaling. q is scaled by 1/sqrt(D), or by 1/sqrt(E / H) for the 27B shape (62 layers).
#include <cmath>

#include "models/architectures.h"
#include "models/gemma_keys.h"
#include "models/llama_family.h"

namespace hearth::models {

Result<ModelPtr> load_gemma3(std::shared_ptr<const gguf::Archive> archive, engine::ModelHparams hp,
                             const engine::LoadOptions& options) {
  const gguf::File& f = archive->primary();
  const std::string a = hp.arch;
  FamilySpec spec = gemma::base_spec(hp, /*post_norms=*/true);
  spec.qk_norm = true;
  HEARTH_ASSIGN_OR_RETURN(spec.n_swa, read_window(f, a, 0));
  if (spec.n_swa > 0) {
    spec.swa_period = read_swa_period(f, a, 6);
    hp.rope_swa = hp.rope;
    hp.rope_swa->scaling = engine::RopeScaling::kNone;
    hp.rope_swa->freq_scale = 1.0f;
    HEARTH_ASSIGN_OR_RETURN(hp.rope_swa->freq_base,
                            engine::read_f32_key(f, a + ".rope.freq_base_swa", 10000.0f));
  }
  HEARTH_ASSIGN_OR_RETURN(hp.final_logit_softcap,
                          engine::read_f32_key(f, a + ".final_logit_softcapping", 0.0f));
  spec.q_scale = gemma::attention_scale(hp, 62);
  return load_llama_family(std::move(archive), std::move(hp), spec, options);
}

}  // namespace hearth::models
