// lfm2 files: the hybrid of short-convolution and attention layers (per-layer
// head_count_kv, 0 on the convolution layers), as the reference's converter writes them;
// lfm2moe: the same with experts (sigmoid gating, a selection bias) after the leading dense
// layers.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "tools/synth/synth_parts.h"

namespace hearth::synth::detail {

namespace {

bool attends(const SynthParams& p, int32_t il) {
  return std::find(p.attention_layers.begin(), p.attention_layers.end(), il) !=
         p.attention_layers.end();
}

void write_lfm2_keys(gguf::Writer& w, const SynthParams& p) {
  const std::string a = p.arch;
  write_shape_keys(w, p);
  std::vector<int32_t> head_count_kv;
  for (int32_t il = 0; il < p.n_layer; ++il)
    head_count_kv.push_back(attends(p, il) ? p.n_head_kv : 0);
  w.set_i32_array(a + ".attention.head_count_kv", head_count_kv);
  w.set_f32(a + ".rope.freq_base", p.rope_base);
  w.set_f32(a + ".attention.layer_norm_rms_epsilon", p.rms_eps);
  w.set_u32(a + ".shortconv.l_cache", static_cast<uint32_t>(p.l_cache));
  if (p.n_swa > 0) w.set_u32(a + ".attention.sliding_window", static_cast<uint32_t>(p.n_swa));
  if (a == "lfm2moe") {
    w.set_u32(a + ".expert_count", static_cast<uint32_t>(p.n_expert));
    w.set_u32(a + ".expert_used_count", static_cast<uint32_t>(p.n_expert_used));
    w.set_u32(a + ".expert_feed_forward_length",
              static_cast<uint32_t>(p.n_ff_exp > 0 ? p.n_ff_exp : p.n_ff));
    w.set_u32(a + ".expert_gating_func", 2);  // sigmoid
    w.set_u32(a + ".leading_dense_block_count", static_cast<uint32_t>(p.n_dense_lead));
  }
  w.set_u32("general.quantization_version", 2);
}

// Router logits of spread ~4 (distinct choices), a selection bias of spread ~0.1.
Status add_lfm2_experts(gguf::Writer& w, const SynthParams& p, const std::string& b) {
  const int64_t E = p.n_embd, X = p.n_expert, Fe = p.n_ff_exp > 0 ? p.n_ff_exp : p.n_ff;
  const float s_in = 1.0f / std::sqrt(static_cast<float>(E));
  HEARTH_RETURN_IF_ERROR(
      add_random(w, p, b + "ffn_gate_inp.weight", {E, X}, p.type, 4.0f * s_in, 0.0f));
  HEARTH_RETURN_IF_ERROR(add_random(w, p, b + "ffn_gate_exps.weight", {E, Fe, X}, p.type, s_in, 0));
  HEARTH_RETURN_IF_ERROR(add_random(w, p, b + "ffn_up_exps.weight", {E, Fe, X}, p.type, s_in, 0));
  HEARTH_RETURN_IF_ERROR(add_random(w, p, b + "ffn_down_exps.weight", {Fe, E, X}, p.type,
                                    1.0f / std::sqrt(static_cast<float>(Fe)), 0.0f));
  return add_random(w, p, b + "exp_probs_b.bias", {X}, TensorType::kF32, 0.1f, 0.0f);
}

Status add_lfm2_layer(gguf::Writer& w, const SynthParams& p, int32_t il) {
  const std::string b = fmt::format("blk.{}.", il);
  const int64_t E = p.n_embd, F = p.n_ff, D = E / p.n_head;
  const float s_in = 1.0f / std::sqrt(static_cast<float>(E));
  HEARTH_RETURN_IF_ERROR(add_random(w, p, b + "attn_norm.weight", {E}, TensorType::kF32, 0.05f, 1));
  if (attends(p, il)) {
    const int64_t Ekv = int64_t{p.n_head_kv} * D;
    HEARTH_RETURN_IF_ERROR(add_random(w, p, b + "attn_q.weight", {E, E}, p.type, s_in, 0.0f));
    HEARTH_RETURN_IF_ERROR(add_random(w, p, b + "attn_k.weight", {E, Ekv}, p.type, s_in, 0.0f));
    HEARTH_RETURN_IF_ERROR(add_random(w, p, b + "attn_v.weight", {E, Ekv}, p.type, s_in, 0.0f));
    HEARTH_RETURN_IF_ERROR(add_random(w, p, b + "attn_output.weight", {E, E}, p.type, s_in, 0.0f));
    for (const char* n : {"attn_q_norm.weight", "attn_k_norm.weight"})
      HEARTH_RETURN_IF_ERROR(add_random(w, p, b + n, {D}, TensorType::kF32, 0.05f, 1.0f));
  } else {
    // The reference's ssm_conv reads an f32 kernel [L, E]; taps of spread ~0.5.
    HEARTH_RETURN_IF_ERROR(add_random(w, p, b + "shortconv.conv.weight", {p.l_cache, E},
                                      TensorType::kF32, 0.5f, 0.0f));
    HEARTH_RETURN_IF_ERROR(
        add_random(w, p, b + "shortconv.in_proj.weight", {E, 3 * E}, p.type, s_in, 0.0f));
    HEARTH_RETURN_IF_ERROR(
        add_random(w, p, b + "shortconv.out_proj.weight", {E, E}, p.type, s_in, 0.0f));
  }
  HEARTH_RETURN_IF_ERROR(add_random(w, p, b + "ffn_norm.weight", {E}, TensorType::kF32, 0.05f, 1));
  if (p.arch == "lfm2moe" && il >= p.n_dense_lead) return add_lfm2_experts(w, p, b);
  HEARTH_RETURN_IF_ERROR(add_random(w, p, b + "ffn_gate.weight", {E, F}, p.type, s_in, 0.0f));
  HEARTH_RETURN_IF_ERROR(add_random(w, p, b + "ffn_up.weight", {E, F}, p.type, s_in, 0.0f));
  return add_random(w, p, b + "ffn_down.weight", {F, E}, p.type,
                    1.0f / std::sqrt(static_cast<float>(F)), 0.0f);
}

}  // namespace

Status synthesize_lfm2(const SynthParams& p, const std::string& out_path) {
  if (p.l_cache < 2)
    return error(ErrorCode::kInvalidArgument, "lfm2: --l-cache must be at least 2");
  if (p.arch == "lfm2moe" && (p.n_expert <= 0 || p.n_expert_used <= 0 ||
                              p.n_expert_used > p.n_expert || p.n_dense_lead < 0))
    return error(ErrorCode::kInvalidArgument,
                 "lfm2moe needs --n-expert and --n-expert-used (at most --n-expert)");
  for (int32_t il : p.attention_layers) {
    if (il < 0 || il >= p.n_layer)
      return error(ErrorCode::kInvalidArgument,
                   fmt::format("lfm2: attention layer {} is outside [0, {})", il, p.n_layer));
  }
  gguf::Writer w;
  write_lfm2_keys(w, p);
  set_file_type(w, p.type);
  int32_t n_vocab = 0;
  HEARTH_RETURN_IF_ERROR(copy_tokenizer(w, p.vocab_path, n_vocab, p.add_tokens));
  const int64_t E = p.n_embd;
  HEARTH_RETURN_IF_ERROR(add_random(w, p, "token_embd.weight", {E, n_vocab}, p.type, 1.0f, 0.0f));
  // lfm2's output norm is named token_embd_norm (the reference keeps the converter's name).
  HEARTH_RETURN_IF_ERROR(
      add_random(w, p, "token_embd_norm.weight", {E}, TensorType::kF32, 0.05f, 1.0f));
  if (!p.tied_output) {
    HEARTH_RETURN_IF_ERROR(add_random(w, p, "output.weight", {E, n_vocab},
                                      p.output_type.value_or(p.type),
                                      1.0f / std::sqrt(static_cast<float>(E)), 0.0f));
  }
  for (int32_t il = 0; il < p.n_layer; ++il) HEARTH_RETURN_IF_ERROR(add_lfm2_layer(w, p, il));
  return w.write(out_path);
}

}  // namespace hearth::synth::detail
