// What the gemma architectures share: their FamilySpec base and q scale.
#pragma once

#include <algorithm>
#include <cmath>
#include <string>

#include "engine/hparams.h"
#include "gguf/file.h"
#include "models/llama_family.h"

namespace hearth::models::gemma {

// NeoX RoPE, input rows scaled by sqrt(E), a GELU-gated FFN; gemma2/3 add the post norms.
inline FamilySpec base_spec(const engine::ModelHparams& hp, bool post_norms) {
  FamilySpec spec;
  spec.rope = engine::ops::RopeKind::kNeox;
  spec.embd_scale = std::sqrt(static_cast<float>(hp.n_embd));
  spec.gelu_ffn = true;
  spec.post_norms = post_norms;
  return spec;
}

// The q scale: 1/sqrt(head size), except for the 27B models (recognized, as the reference
// does, by their layer count), which use 1/sqrt(E / H).
inline float attention_scale(const engine::ModelHparams& hp, int32_t layers_of_27b) {
  if (hp.n_layer == layers_of_27b && hp.n_head > 0)
    return 1.0f / std::sqrt(static_cast<float>(hp.n_embd / hp.n_head));
  return 1.0f / std::sqrt(static_cast<float>(hp.head_dim));
}

}  // namespace hearth::models::gemma
