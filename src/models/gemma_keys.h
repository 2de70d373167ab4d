// What the gemma architectures share: their FamilySpec base and the keys gemma2 and gemma3
// read alike.
#pragma once

#include <algorithm>
#include <cmath>
#include <string>

#include "engine/hparams.h"
#include "gguf/file.h"
#include "models/llama_family.h"

namespace hearth::models::gemma {

// NeoX RoPE, input rows scaled by sqrt(E), a GELU-gated FFN; gemma2/3 add the post norms.
inline FamilySpec base_spec(bool post_norms) {
  FamilySpec spec;
  spec.rope = engine::ops::RopeKind::kNeox;
  spec.scale_embeddings = true;
  spec.gelu_ffn = true;
  spec.post_norms = post_norms;
  return spec;
}

// <arch>.attention.sliding_window, or `fallback` when absent.
inline Result<int32_t> window(const gguf::File& f, const std::string& arch, int64_t fallback) {
  HEARTH_ASSIGN_OR_RETURN(int64_t n,
                          engine::read_u32_key(f, arch + ".attention.sliding_window", fallback));
  return static_cast<int32_t>(std::min<int64_t>(n, INT32_MAX));
}

// <arch>.attention.sliding_window_pattern as a scalar; the reference reads an array (or a
// missing key) as the default.
inline uint32_t swa_period(const gguf::File& f, const std::string& arch, uint32_t fallback) {
  const gguf::Value* v = f.find(arch + ".attention.sliding_window_pattern");
  if (v == nullptr || v->type() != gguf::ValueType::kU32) return fallback;
  return static_cast<uint32_t>(*v->as_uint());
}

// The q scale: 1/sqrt(head size), except for the 27B models (recognized, as the reference
// does, by their layer count), which use 1/sqrt(E / H).
inline float attention_scale(const engine::ModelHparams& hp, int32_t layers_of_27b) {
  if (hp.n_layer == layers_of_27b && hp.n_head > 0)
    return 1.0f / std::sqrt(static_cast<float>(hp.n_embd / hp.n_head));
  return 1.0f / std::sqrt(static_cast<float>(hp.head_dim));
}

}  // namespace hearth::models::gemma
