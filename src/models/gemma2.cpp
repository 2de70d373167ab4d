// gemma2: Gemma 2. Gemma's blocks with post-attention and post-FFN RMSNorms, attention
// logits soft-capped (attn_logit_softcapping, default 50) and final logits soft-capped
// (final_logit_softcapping, default 30), and local layers with a sliding window
// (attention.sliding_window, default 4096) alternating with global ones
// (sliding_window_pattern, default 2: even layers local). Local layers use
// rope.freq_base_swa when present, else the model's rope. q is scaled by 1/sqrt(D), or by
// 1/sqrt(E / H) for the 27B shape (46 layers), as the reference does.
#include <cmath>

#include "models/architectures.h"
#include "models/gemma_keys.h"
#include "models/llama_family.h"

namespace hearth::models {

Result<ModelPtr> load_gemma2(std::shared_ptr<const gguf::Archive> archive, engine::ModelHparams hp,
                             const engine::LoadOptions& options) {
  const gguf::File& f = archive->primary();
  const std::string a = hp.arch;
  FamilySpec spec = gemma::base_spec(hp, /*post_norms=*/true);
  HEARTH_ASSIGN_OR_RETURN(spec.n_swa, read_window(f, a, 4096));
  spec.swa_period = read_swa_period(f, a, 2);
  HEARTH_ASSIGN_OR_RETURN(spec.attn_softcap,
                          engine::read_f32_key(f, a + ".attn_logit_softcapping", 50.0f));
  HEARTH_ASSIGN_OR_RETURN(hp.final_logit_softcap,
                          engine::read_f32_key(f, a + ".final_logit_softcapping", 30.0f));
  hp.rope_swa = hp.rope;
  HEARTH_ASSIGN_OR_RETURN(hp.rope_swa->freq_base,
                          engine::read_f32_key(f, a + ".rope.freq_base_swa", hp.rope.freq_base));
  spec.q_scale = gemma::attention_scale(hp, 46);
  return load_llama_family(std::move(archive), std::move(hp), spec, options);
}

}  // namespace hearth::models
