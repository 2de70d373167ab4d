// qwen2vl: the text models of Qwen2-VL and Qwen2.5-VL. qwen2's block (NeoX-style rotation
// of halves, q/k/v biases, which the reference loads when present) with M-RoPE: the head's
// rotated pairs split into contiguous sections (<arch>.rope.dimension_sections, e.g.
// [16, 24, 24, 0] of 64 pairs) rotated by a row's time, height and width positions. A text
// row has one position in all three, which is qwen2's rope; an image row takes its 2-D grid
// position (engine::BatchToken::rope).
#include "models/architectures.h"
#include "models/llama_family.h"

namespace hearth::models {

Result<ModelPtr> load_qwen2vl(std::shared_ptr<const gguf::Archive> archive, engine::ModelHparams hp,
                              const engine::LoadOptions& options) {
  HEARTH_RETURN_IF_ERROR(read_multi_rope(archive->primary(), engine::MultiRope::kSections, hp));
  FamilySpec spec;
  spec.rope = engine::ops::RopeKind::kNeox;
  spec.optional_qkv_bias = true;
  return load_llama_family(std::move(archive), std::move(hp), spec, options);
}

}  // namespace hearth::models
