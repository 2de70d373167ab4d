// Random-weight encoders with the GGUF keys and tensor names llama.cpp's loaders expect:
// bert has absolute positions, separate Q/K/V with biases and a GELU FFN with biases;
// nomic-bert has a fused QKV, RoPE and a SwiGLU FFN without biases; jina-bert-v2 has no
// positions (ALiBi), optional q/k and second attention norms and a gated GELU FFN;
// modern-bert is pre-norm without biases, with a fused QKV and gate-up, a final norm and
// optional sliding-window keys. Optional classifier heads for rank pooling. LayerNorm
// weights sit near 1, biases near 0.
#include <fmt/format.h>

#include <cmath>

#include "tools/synth/synth_parts.h"

namespace hearth::synth::detail {
namespace {

void write_encoder_hparams(gguf::Writer& w, const SynthParams& p) {
  const std::string a = p.arch;
  write_shape_keys(w, p);
  w.set_f32(a + ".attention.layer_norm_epsilon", p.norm_eps);
  w.set_bool(a + ".attention.causal", false);
  if (p.pooling >= 0) w.set_u32(a + ".pooling_type", static_cast<uint32_t>(p.pooling));
  if (p.arch == "nomic-bert" || p.arch == "modern-bert")
    w.set_f32(a + ".rope.freq_base", p.rope_base);
  if (p.arch == "modern-bert") {
    w.set_string(a + ".rope.scaling.type", "none");
    if (p.n_swa > 0) {
      w.set_u32(a + ".attention.sliding_window", static_cast<uint32_t>(p.n_swa));
      w.set_u32(a + ".attention.sliding_window_pattern", static_cast<uint32_t>(p.swa_pattern));
      w.set_f32(a + ".rope.freq_base_swa", p.rope_base_swa);
    }
    if (!p.hidden_act.empty()) w.set_string(a + ".hidden_activation", p.hidden_act);
  }
  if (p.n_cls_out > 1) {  // the reference reads the classifier's width from its labels
    std::vector<std::string> labels;
    for (int32_t i = 0; i < p.n_cls_out; ++i) labels.push_back(fmt::format("label_{}", i));
    w.set_string_array(a + ".classifier.output_labels", labels);
  }
  w.set_u32("tokenizer.ggml.token_type_count", 2);
  w.set_u32("general.quantization_version", 2);
}

Status add_bias(gguf::Writer& w, const SynthParams& p, const std::string& name, int64_t n) {
  return add_random(w, p, name, {n}, TensorType::kF32, 0.02f, 0.0f);
}

// jina-bert-v2's FFN: GELU(gate) * up, the gate separate or fused into ffn_up's 2F rows.
Status add_jina_ffn(gguf::Writer& w, const SynthParams& p, const std::string& b) {
  const int64_t E = p.n_embd, F = p.n_ff;
  const float s_in = 1.0f / std::sqrt(static_cast<float>(E));
  const int64_t up_rows = p.separate_gate ? F : 2 * F;
  if (p.separate_gate)
    HEARTH_RETURN_IF_ERROR(add_random(w, p, b + "ffn_gate.weight", {E, F}, p.type, s_in, 0.0f));
  HEARTH_RETURN_IF_ERROR(add_random(w, p, b + "ffn_up.weight", {E, up_rows}, p.type, s_in, 0));
  return add_bias(w, p, b + "ffn_up.bias", up_rows);
}

Status add_encoder_block(gguf::Writer& w, const SynthParams& p, int32_t il) {
  const std::string b = fmt::format("blk.{}.", il);
  const int64_t E = p.n_embd, F = p.n_ff;
  const float s_in = 1.0f / std::sqrt(static_cast<float>(E));
  const float s_ff = 1.0f / std::sqrt(static_cast<float>(F));
  const bool nomic = p.arch == "nomic-bert";
  const bool jina = p.arch == "jina-bert-v2";
  if (nomic) {
    HEARTH_RETURN_IF_ERROR(add_random(w, p, b + "attn_qkv.weight", {E, 3 * E}, p.type, s_in, 0));
  } else {
    for (const char* m : {"attn_q", "attn_k", "attn_v"}) {
      HEARTH_RETURN_IF_ERROR(add_random(w, p, b + m + ".weight", {E, E}, p.type, s_in, 0.0f));
      HEARTH_RETURN_IF_ERROR(add_bias(w, p, b + m + ".bias", E));
    }
  }
  if (jina && p.qk_norm) {
    HEARTH_RETURN_IF_ERROR(add_norm(w, p, b + "attn_q_norm", E, true));
    HEARTH_RETURN_IF_ERROR(add_norm(w, p, b + "attn_k_norm", E, true));
  }
  HEARTH_RETURN_IF_ERROR(add_random(w, p, b + "attn_output.weight", {E, E}, p.type, s_in, 0.0f));
  if (!nomic) HEARTH_RETURN_IF_ERROR(add_bias(w, p, b + "attn_output.bias", E));
  HEARTH_RETURN_IF_ERROR(add_norm(w, p, b + "attn_output_norm", E, true));
  if (jina && p.attn_norm_2) HEARTH_RETURN_IF_ERROR(add_norm(w, p, b + "attn_norm_2", E, true));
  if (jina) {
    HEARTH_RETURN_IF_ERROR(add_jina_ffn(w, p, b));
  } else {
    HEARTH_RETURN_IF_ERROR(add_random(w, p, b + "ffn_up.weight", {E, F}, p.type, s_in, 0.0f));
  }
  if (nomic) {
    HEARTH_RETURN_IF_ERROR(add_random(w, p, b + "ffn_gate.weight", {E, F}, p.type, s_in, 0.0f));
  } else {
    if (!jina) HEARTH_RETURN_IF_ERROR(add_bias(w, p, b + "ffn_up.bias", F));
    HEARTH_RETURN_IF_ERROR(add_bias(w, p, b + "ffn_down.bias", E));
  }
  HEARTH_RETURN_IF_ERROR(add_random(w, p, b + "ffn_down.weight", {F, E}, p.type, s_ff, 0.0f));
  return add_norm(w, p, b + "layer_output_norm", E, true);
}

// modern-bert: pre-norm blocks without biases (layer 0 has no attention norm).
Status add_modern_bert_block(gguf::Writer& w, const SynthParams& p, int32_t il) {
  const std::string b = fmt::format("blk.{}.", il);
  const int64_t E = p.n_embd, F = p.n_ff;
  const float s_in = 1.0f / std::sqrt(static_cast<float>(E));
  const float s_ff = 1.0f / std::sqrt(static_cast<float>(F));
  if (il > 0)
    HEARTH_RETURN_IF_ERROR(
        add_random(w, p, b + "attn_norm.weight", {E}, TensorType::kF32, 0.05f, 1.0f));
  HEARTH_RETURN_IF_ERROR(add_random(w, p, b + "attn_qkv.weight", {E, 3 * E}, p.type, s_in, 0));
  HEARTH_RETURN_IF_ERROR(add_random(w, p, b + "attn_output.weight", {E, E}, p.type, s_in, 0.0f));
  HEARTH_RETURN_IF_ERROR(
      add_random(w, p, b + "ffn_norm.weight", {E}, TensorType::kF32, 0.05f, 1.0f));
  HEARTH_RETURN_IF_ERROR(add_random(w, p, b + "ffn_up.weight", {E, 2 * F}, p.type, s_in, 0.0f));
  return add_random(w, p, b + "ffn_down.weight", {F, E}, p.type, s_ff, 0.0f);
}

// The classifier of rank pooling: bert's dense + out projection, jina's single projection,
// modern-bert's dense + norm + out projection.
Status add_classifier(gguf::Writer& w, const SynthParams& p) {
  const int64_t E = p.n_embd;
  const float s_in = 1.0f / std::sqrt(static_cast<float>(E));
  if (p.arch == "jina-bert-v2") {
    HEARTH_RETURN_IF_ERROR(add_random(w, p, "cls.weight", {E, 1}, p.type, s_in, 0.0f));
    return add_bias(w, p, "cls.bias", 1);
  }
  HEARTH_RETURN_IF_ERROR(add_random(w, p, "cls.weight", {E, E}, p.type, s_in, 0.0f));
  if (p.arch == "modern-bert") {
    HEARTH_RETURN_IF_ERROR(add_random(w, p, "cls.norm.weight", {E}, TensorType::kF32, 0.05f, 1.0f));
  } else {
    HEARTH_RETURN_IF_ERROR(add_bias(w, p, "cls.bias", E));
  }
  HEARTH_RETURN_IF_ERROR(
      add_random(w, p, "cls.output.weight", {E, p.n_cls_out}, p.type, s_in, 0.0f));
  return add_bias(w, p, "cls.output.bias", p.n_cls_out);
}

// Token type rows, positions and the embedding norm of the post-norm encoders.
Status add_bert_inputs(gguf::Writer& w, const SynthParams& p) {
  const int64_t E = p.n_embd;
  // F32 as the converter writes it: the reference adds row 0 as it is stored.
  HEARTH_RETURN_IF_ERROR(
      add_random(w, p, "token_types.weight", {E, 2}, TensorType::kF32, 0.5f, 0.0f));
  if (p.arch == "bert") {
    HEARTH_RETURN_IF_ERROR(
        add_random(w, p, "position_embd.weight", {E, p.n_ctx}, p.type, 0.5f, 0.0f));
  }
  return add_norm(w, p, "token_embd_norm", E, true);
}

}  // namespace

Status synthesize_encoder(const SynthParams& p, const std::string& out_path) {
  gguf::Writer w;
  write_encoder_hparams(w, p);
  set_file_type(w, p.type);
  int32_t n_vocab = 0;
  HEARTH_RETURN_IF_ERROR(copy_tokenizer(w, p.vocab_path, n_vocab, p.add_tokens));
  const int64_t E = p.n_embd;
  HEARTH_RETURN_IF_ERROR(add_random(w, p, "token_embd.weight", {E, n_vocab}, p.type, 1.0f, 0.0f));
  const bool modern = p.arch == "modern-bert";
  if (modern) {
    HEARTH_RETURN_IF_ERROR(
        add_random(w, p, "token_embd_norm.weight", {E}, TensorType::kF32, 0.05f, 1.0f));
    HEARTH_RETURN_IF_ERROR(
        add_random(w, p, "output_norm.weight", {E}, TensorType::kF32, 0.05f, 1.0f));
  } else {
    HEARTH_RETURN_IF_ERROR(add_bert_inputs(w, p));
  }
  for (int32_t il = 0; il < p.n_layer; ++il)
    HEARTH_RETURN_IF_ERROR(modern ? add_modern_bert_block(w, p, il) : add_encoder_block(w, p, il));
  if (p.n_cls_out > 0) HEARTH_RETURN_IF_ERROR(add_classifier(w, p));
  return w.write(out_path);
}

}  // namespace hearth::synth::detail
