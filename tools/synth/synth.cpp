#include "tools/synth/synth.h"

#include <fmt/format.h>

#include <cmath>
#include <cstring>
#include <string_view>
#include <vector>

#include "gguf/file.h"
#include "kernels/quant.h"
#include "tools/synth/synth_parts.h"

namespace hearth::synth {
namespace detail {

// splitmix64: a small, fast, well-distributed generator; one stream per tensor.
struct Rng {
  uint64_t state;
  uint64_t next() {
    uint64_t z = (state += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
  }
  float uniform() { return static_cast<float>(next() >> 40) * (1.0f / 16777216.0f); }  // [0, 1)
  // Approximately normal: the sum of four uniforms, scaled to unit variance.
  float normal() { return (uniform() + uniform() + uniform() + uniform() - 2.0f) * 1.7320508f; }
};

uint64_t hash_name(std::string_view name, uint64_t seed) {
  uint64_t h = 1469598103934665603ull ^ seed;
  for (char c : name) h = (h ^ static_cast<unsigned char>(c)) * 1099511628211ull;
  return h;
}

std::vector<uint8_t> encode(TensorType type, const std::vector<float>& values, int64_t n_cols) {
  const auto& t = traits_of(type);
  const int64_t n_rows = static_cast<int64_t>(values.size()) / n_cols;
  const uint64_t rb = row_bytes(t, static_cast<uint64_t>(n_cols));
  std::vector<uint8_t> out(rb * static_cast<uint64_t>(n_rows));
  for (int64_t r = 0; r < n_rows; ++r)
    kernels::quantize_row(type, values.data() + r * n_cols,
                          out.data() + static_cast<uint64_t>(r) * rb, n_cols);
  return out;
}

// The type a row of n_cols can be stored in: `wanted`, or F16 when blocks do not fit.
TensorType fitting_type(TensorType wanted, int64_t n_cols) {
  return n_cols % traits_of(wanted).block_size == 0 ? wanted : TensorType::kF16;
}

Status add_random(gguf::Writer& w, const SynthParams& p, const std::string& name,
                  std::vector<int64_t> ne, TensorType type, float scale, float offset) {
  Rng rng{hash_name(name, p.seed)};
  int64_t n = 1;
  for (int64_t d : ne) n *= d;
  std::vector<float> values(static_cast<size_t>(n));
  for (float& v : values) v = offset + scale * rng.normal();
  const TensorType t = ne.size() == 1 ? TensorType::kF32 : fitting_type(type, ne[0]);
  return w.add_tensor(name, t, ne, encode(t, values, ne[0]));
}

Status add_norm(gguf::Writer& w, const SynthParams& p, const std::string& name, int64_t n,
                bool bias) {
  HEARTH_RETURN_IF_ERROR(add_random(w, p, name + ".weight", {n}, TensorType::kF32, 0.05f, 1.0f));
  if (!bias) return Status::ok();
  return add_random(w, p, name + ".bias", {n}, TensorType::kF32, 0.02f, 0.0f);
}

Status add_matrix(gguf::Writer& w, const SynthParams& p, const std::string& name, int64_t n_in,
                  int64_t n_out, bool bias) {
  const float scale = 1.0f / std::sqrt(static_cast<float>(n_in));
  HEARTH_RETURN_IF_ERROR(
      add_random(w, p, name + ".weight", {n_in, n_out}, fitting_type(p.type, n_in), scale, 0.0f));
  if (!bias) return Status::ok();
  return add_random(w, p, name + ".bias", {n_out}, TensorType::kF32, 0.02f, 0.0f);
}

Status copy_tokenizer(gguf::Writer& w, const std::string& vocab_path, int32_t& n_vocab,
                      const std::vector<std::string>& add_tokens) {
  HEARTH_ASSIGN_OR_RETURN(gguf::File vocab, gguf::File::open(vocab_path));
  for (const auto& kv : vocab.metadata()) {
    if (kv.key.starts_with("tokenizer.")) w.set_value(kv.key, kv.value);
  }
  HEARTH_ASSIGN_OR_RETURN(const gguf::Value* tokens,
                          vocab.get_array("tokenizer.ggml.tokens", gguf::ValueType::kString));
  n_vocab = static_cast<int32_t>(tokens->size());
  if (add_tokens.empty()) return Status::ok();
  // The added tokens go after the borrowed ones, as CONTROL (type 3) with score 0; the
  // arrays are rewritten whole.
  std::vector<std::string> texts(tokens->strings().begin(), tokens->strings().end());
  std::vector<float> scores;
  std::vector<int32_t> types;
  const gguf::Value* s = vocab.find("tokenizer.ggml.scores");
  const gguf::Value* t = vocab.find("tokenizer.ggml.token_type");
  for (size_t i = 0; i < texts.size(); ++i) {
    if (s != nullptr) scores.push_back(static_cast<float>(s->float_at(i)));
    if (t != nullptr) types.push_back(static_cast<int32_t>(t->int_at(i)));
  }
  for (const std::string& added : add_tokens) {
    if (added.empty()) return error(ErrorCode::kInvalidArgument, "--add-tokens: an empty token");
    texts.push_back(added);
    if (s != nullptr) scores.push_back(0.0f);
    if (t != nullptr) types.push_back(3);
  }
  w.set_string_array("tokenizer.ggml.tokens", texts);
  if (s != nullptr) w.set_f32_array("tokenizer.ggml.scores", scores);
  if (t != nullptr) w.set_i32_array("tokenizer.ggml.token_type", types);
  n_vocab = static_cast<int32_t>(texts.size());
  return Status::ok();
}

void write_shape_keys(gguf::Writer& w, const SynthParams& p) {
  const std::string a = p.arch;
  w.set_string("general.architecture", a);
  w.set_string("general.name", fmt::format("hearth-synth {} {}x{}", a, p.n_layer, p.n_embd));
  w.set_u32(a + ".context_length", static_cast<uint32_t>(p.n_ctx));
  w.set_u32(a + ".embedding_length", static_cast<uint32_t>(p.n_embd));
  w.set_u32(a + ".block_count", static_cast<uint32_t>(p.n_layer));
  w.set_u32(a + ".feed_forward_length", static_cast<uint32_t>(p.n_ff));
  w.set_u32(a + ".attention.head_count", static_cast<uint32_t>(p.n_head));
}

}  // namespace detail

namespace {

using detail::add_random;
using detail::copy_tokenizer;
using detail::encode;
using detail::fitting_type;
using detail::set_file_type;

// M-RoPE (qwen2vl, qwen3vl, qwen3vlmoe): the rope's sections, by default about the real
// models' proportions of the head's pairs (qwen2vl [16, 24, 24, 0] of 64, qwen3vl [24, 20,
// 20, 0]); qwen3vl's deepstack layers.
void write_mrope_keys(gguf::Writer& w, const SynthParams& p, int32_t head_dim) {
  std::vector<int32_t> sections = p.rope_sections;
  if (sections.empty()) {
    const int32_t pairs = head_dim / 2;
    const int32_t side = p.arch == "qwen2vl" ? pairs * 3 / 8 : pairs * 5 / 16;
    sections = {pairs - 2 * side, side, side, 0};
  }
  sections.resize(4, 0);
  w.set_i32_array(p.arch + ".rope.dimension_sections", sections);
  if (p.arch != "qwen2vl")
    w.set_u32(p.arch + ".n_deepstack_layers", static_cast<uint32_t>(p.n_deepstack));
}

void write_hparams(gguf::Writer& w, const SynthParams& p, int32_t head_dim) {
  const std::string a = p.arch;
  detail::write_shape_keys(w, p);
  w.set_u32(a + ".attention.head_count_kv", static_cast<uint32_t>(p.n_head_kv));
  w.set_u32(a + ".attention.key_length", static_cast<uint32_t>(head_dim));
  w.set_u32(a + ".attention.value_length", static_cast<uint32_t>(head_dim));
  w.set_u32(a + ".rope.dimension_count", static_cast<uint32_t>(head_dim));
  w.set_f32(a + ".rope.freq_base", p.rope_base);
  w.set_f32(a + ".attention.layer_norm_rms_epsilon", p.rms_eps);
  if (p.pooling >= 0) w.set_u32(a + ".pooling_type", static_cast<uint32_t>(p.pooling));
  if ((is_gemma(a) || a == "olmo2") &&
      p.n_swa > 0) {  // local layers: window, pattern, their rope base
    w.set_u32(a + ".attention.sliding_window", static_cast<uint32_t>(p.n_swa));
    w.set_u32(a + ".attention.sliding_window_pattern", static_cast<uint32_t>(p.swa_pattern));
    w.set_f32(a + ".rope.freq_base_swa", p.rope_base_swa);
  }
  if (a == "gpt-oss") w.set_u32(a + ".attention.sliding_window", static_cast<uint32_t>(p.n_swa));
  if (p.yarn_factor > 0.0f) {
    w.set_string(a + ".rope.scaling.type", "yarn");
    w.set_f32(a + ".rope.scaling.factor", p.yarn_factor);
    w.set_u32(a + ".rope.scaling.original_context_length",
              static_cast<uint32_t>(static_cast<float>(p.n_ctx) / p.yarn_factor));
  }
  if (p.attn_softcap > 0.0f) w.set_f32(a + ".attn_logit_softcapping", p.attn_softcap);
  if (p.n_expert > 0) {
    w.set_u32(a + ".expert_count", static_cast<uint32_t>(p.n_expert));
    w.set_u32(a + ".expert_used_count", static_cast<uint32_t>(p.n_expert_used));
    if (p.n_ff_exp > 0)
      w.set_u32(a + ".expert_feed_forward_length", static_cast<uint32_t>(p.n_ff_exp));
    if (p.n_ff_shexp > 0)
      w.set_u32(a + ".expert_shared_feed_forward_length", static_cast<uint32_t>(p.n_ff_shexp));
  }
  if (p.attn_temp_scale != 0.0f) {  // mistral3: the floor is the original context length
    w.set_f32(a + ".attention.temperature_scale", p.attn_temp_scale);
    w.set_u32(a + ".rope.scaling.original_context_length", static_cast<uint32_t>(p.n_ctx_orig));
  }
  if (a == "granite") {  // Granite's multipliers (logit_scale is required)
    w.set_f32(a + ".logit_scale", p.logit_scale > 0.0f ? p.logit_scale : 1.0f);
    if (p.residual_scale != 0.0f) w.set_f32(a + ".residual_scale", p.residual_scale);
    if (p.embedding_scale != 0.0f) w.set_f32(a + ".embedding_scale", p.embedding_scale);
    if (p.attention_scale != 0.0f) w.set_f32(a + ".attention.scale", p.attention_scale);
  }
  if (p.final_softcap > 0.0f) w.set_f32(a + ".final_logit_softcapping", p.final_softcap);
  if (is_mrope(a)) write_mrope_keys(w, p, head_dim);
  w.set_u32("general.quantization_version", 2);
}

Status add_norm_weight(gguf::Writer& w, const SynthParams& p, const std::string& name, int64_t n) {
  return add_random(w, p, name, {n}, TensorType::kF32, 0.05f, 1.0f);
}

Status add_bias(gguf::Writer& w, const SynthParams& p, const std::string& name, int64_t n) {
  return add_random(w, p, name, {n}, TensorType::kF32, 0.02f, 0.0f);
}

// Q, K, V (fused into attn_qkv for phi3), their biases (qwen2) and norms (per head: qwen3,
// gemma3; whole rows: olmo2), and the output projection.
Status add_attention(gguf::Writer& w, const SynthParams& p, const std::string& b,
                     int32_t head_dim) {
  const int64_t E = p.n_embd, Eq = int64_t{p.n_head} * head_dim,
                Ekv = int64_t{p.n_head_kv} * head_dim;
  const float s_in = 1.0f / std::sqrt(static_cast<float>(E));
  if (p.arch == "phi3") {
    HEARTH_RETURN_IF_ERROR(
        add_random(w, p, b + "attn_qkv.weight", {E, Eq + 2 * Ekv}, p.type, s_in, 0.0f));
  } else {
    HEARTH_RETURN_IF_ERROR(add_random(w, p, b + "attn_q.weight", {E, Eq}, p.type, s_in, 0.0f));
    HEARTH_RETURN_IF_ERROR(add_random(w, p, b + "attn_k.weight", {E, Ekv}, p.type, s_in, 0.0f));
    HEARTH_RETURN_IF_ERROR(add_random(w, p, b + "attn_v.weight", {E, Ekv}, p.type, s_in, 0.0f));
  }
  if (p.arch == "qwen2" || p.arch == "qwen2moe" || p.arch == "gpt-oss" || p.arch == "qwen2vl") {
    HEARTH_RETURN_IF_ERROR(add_bias(w, p, b + "attn_q.bias", Eq));
    HEARTH_RETURN_IF_ERROR(add_bias(w, p, b + "attn_k.bias", Ekv));
    HEARTH_RETURN_IF_ERROR(add_bias(w, p, b + "attn_v.bias", Ekv));
  }
  if (p.arch == "qwen3" || p.arch == "gemma3" || p.arch == "olmo2" || p.arch == "qwen3moe" ||
      p.arch == "olmoe" || p.arch == "qwen3vl" || p.arch == "qwen3vlmoe") {
    const bool rows = p.arch == "olmo2" || p.arch == "olmoe";
    HEARTH_RETURN_IF_ERROR(add_norm_weight(w, p, b + "attn_q_norm.weight", rows ? Eq : head_dim));
    HEARTH_RETURN_IF_ERROR(add_norm_weight(w, p, b + "attn_k_norm.weight", rows ? Ekv : head_dim));
  }
  if (p.arch == "gpt-oss") {  // the output's bias and each head's sink logit (spread ~2)
    HEARTH_RETURN_IF_ERROR(add_bias(w, p, b + "attn_output.bias", E));
    HEARTH_RETURN_IF_ERROR(
        add_random(w, p, b + "attn_sinks.weight", {p.n_head}, TensorType::kF32, 2.0f, 0.0f));
  }
  return add_random(w, p, b + "attn_output.weight", {Eq, E}, p.type, s_in, 0.0f);
}

// A routed FFN: the router [E, X], the experts' 3-D tensors, and qwen2moe's shared expert.
Status add_experts(gguf::Writer& w, const SynthParams& p, const std::string& b, TensorType te) {
  const int64_t E = p.n_embd, X = p.n_expert;
  const int64_t Fe = p.n_ff_exp > 0 ? p.n_ff_exp : p.n_ff;
  const float s_in = 1.0f / std::sqrt(static_cast<float>(E));
  const float s_ff = 1.0f / std::sqrt(static_cast<float>(Fe));
  // Router logits of spread ~4: distinct choices, so the engines' rounding rarely reorders
  // the k-th and (k+1)-th expert of a token.
  HEARTH_RETURN_IF_ERROR(
      add_random(w, p, b + "ffn_gate_inp.weight", {E, X}, p.type, 4.0f * s_in, 0.0f));
  // gpt-oss: gate and up of spread ~2, so its SwiGLU's clamps at +-7 are reached at times.
  const bool oss = p.arch == "gpt-oss";
  const float s_gate = oss ? 2.0f * s_in : s_in;
  HEARTH_RETURN_IF_ERROR(
      add_random(w, p, b + "ffn_gate_exps.weight", {E, Fe, X}, te, s_gate, 0.0f));
  HEARTH_RETURN_IF_ERROR(add_random(w, p, b + "ffn_up_exps.weight", {E, Fe, X}, te, s_gate, 0));
  HEARTH_RETURN_IF_ERROR(add_random(w, p, b + "ffn_down_exps.weight", {Fe, E, X}, te, s_ff, 0.0f));
  if (oss) {  // the router's bias and each expert's biases, 2-D [width, X]
    HEARTH_RETURN_IF_ERROR(add_bias(w, p, b + "ffn_gate_inp.bias", X));
    HEARTH_RETURN_IF_ERROR(
        add_random(w, p, b + "ffn_gate_exps.bias", {Fe, X}, TensorType::kF32, 0.1f, 0.0f));
    HEARTH_RETURN_IF_ERROR(
        add_random(w, p, b + "ffn_up_exps.bias", {Fe, X}, TensorType::kF32, 0.1f, 0.0f));
    return add_random(w, p, b + "ffn_down_exps.bias", {E, X}, TensorType::kF32, 0.1f, 0.0f);
  }
  if (p.arch != "qwen2moe") return Status::ok();
  const int64_t Fs = p.n_ff_shexp > 0 ? p.n_ff_shexp : p.n_ff;
  HEARTH_RETURN_IF_ERROR(add_random(w, p, b + "ffn_gate_inp_shexp.weight", {E}, p.type, s_in, 0));
  HEARTH_RETURN_IF_ERROR(add_random(w, p, b + "ffn_gate_shexp.weight", {E, Fs}, p.type, s_in, 0));
  HEARTH_RETURN_IF_ERROR(add_random(w, p, b + "ffn_up_shexp.weight", {E, Fs}, p.type, s_in, 0));
  return add_random(w, p, b + "ffn_down_shexp.weight", {Fs, E}, p.type,
                    1.0f / std::sqrt(static_cast<float>(Fs)), 0.0f);
}

// `te`: the experts' weight type (MXFP4 models: the rest of the layer is in p.type, Q8_0).
Status add_layer(gguf::Writer& w, const SynthParams& p, int32_t il, int32_t head_dim,
                 TensorType te) {
  const std::string b = fmt::format("blk.{}.", il);
  const int64_t E = p.n_embd, F = p.n_ff;
  // Scales keep activations of a deep random network in a sane range.
  const float s_in = 1.0f / std::sqrt(static_cast<float>(E));
  const float s_ff = 1.0f / std::sqrt(static_cast<float>(F));
  const bool pre_norms = p.arch != "olmo2";
  if (pre_norms) HEARTH_RETURN_IF_ERROR(add_norm_weight(w, p, b + "attn_norm.weight", E));
  HEARTH_RETURN_IF_ERROR(add_attention(w, p, b, head_dim));
  if (p.arch == "gemma2" || p.arch == "gemma3" || p.arch == "olmo2") {
    for (const char* n : {"post_attention_norm", "post_ffw_norm"})
      HEARTH_RETURN_IF_ERROR(add_norm_weight(w, p, b + n + ".weight", E));
  }
  // gpt-oss names its FFN norm post_attention_norm.
  const char* ffn_norm = p.arch == "gpt-oss" ? "post_attention_norm.weight" : "ffn_norm.weight";
  if (pre_norms) HEARTH_RETURN_IF_ERROR(add_norm_weight(w, p, b + ffn_norm, E));
  if (p.n_expert > 0) return add_experts(w, p, b, te);
  if (p.arch == "phi3") {  // gate and up fused: [E, 2F]
    HEARTH_RETURN_IF_ERROR(add_random(w, p, b + "ffn_up.weight", {E, 2 * F}, p.type, s_in, 0));
  } else {
    HEARTH_RETURN_IF_ERROR(add_random(w, p, b + "ffn_gate.weight", {E, F}, p.type, s_in, 0.0f));
    HEARTH_RETURN_IF_ERROR(add_random(w, p, b + "ffn_up.weight", {E, F}, p.type, s_in, 0.0f));
  }
  return add_random(w, p, b + "ffn_down.weight", {F, E}, p.type, s_ff, 0.0f);
}

// phi3's LongRoPE: the scaling keys and per-pair factors, long and short ([R/2], near 1-4).
Status add_long_rope(gguf::Writer& w, const SynthParams& p, int32_t head_dim) {
  const std::string a = p.arch;
  w.set_string(a + ".rope.scaling.type", "longrope");
  w.set_u32(a + ".rope.scaling.original_context_length", static_cast<uint32_t>(p.n_ctx_orig));
  w.set_f32(a + ".rope.scaling.attn_factor", 1.19f);
  const int64_t half = head_dim / 2;
  HEARTH_RETURN_IF_ERROR(
      add_random(w, p, "rope_factors_long.weight", {half}, TensorType::kF32, 0.5f, 2.5f));
  return add_random(w, p, "rope_factors_short.weight", {half}, TensorType::kF32, 0.1f, 1.1f);
}

}  // namespace

// general.file_type ("mostly X"), informative only.
void detail::set_file_type(gguf::Writer& w, TensorType type) {
  struct Entry {
    TensorType type;
    uint32_t file_type;
  };
  constexpr Entry kFileTypes[] = {
      {TensorType::kF32, 0},     {TensorType::kF16, 1},   {TensorType::kQ4_0, 2},
      {TensorType::kQ4_1, 3},    {TensorType::kQ8_0, 7},  {TensorType::kQ5_0, 8},
      {TensorType::kQ5_1, 9},    {TensorType::kQ2_K, 10}, {TensorType::kQ3_K, 12},
      {TensorType::kQ4_K, 15},   {TensorType::kQ5_K, 17}, {TensorType::kQ6_K, 18},
      {TensorType::kIQ4_NL, 25}, {TensorType::kBF16, 32}, {TensorType::kMXFP4, 38},
  };
  for (const auto& e : kFileTypes) {
    if (e.type == type) w.set_u32("general.file_type", e.file_type);
  }
}

namespace {

Status check_params(const SynthParams& p) {
  if (p.arch != "llama" && p.arch != "qwen2" && p.arch != "qwen3" && p.arch != "smollm3" &&
      !is_gemma(p.arch) && p.arch != "granite" && p.arch != "phi3" && p.arch != "olmo2" &&
      p.arch != "qwen2moe" && p.arch != "qwen3moe" && p.arch != "olmoe" && p.arch != "mistral3" &&
      p.arch != "gpt-oss" && p.arch != "lfm2" && p.arch != "lfm2moe" && !is_mrope(p.arch) &&
      !is_encoder(p.arch))
    return error(
        ErrorCode::kInvalidArgument,
        fmt::format(
            "unknown architecture '{}' (llama, qwen2, qwen3, smollm3, bert, "
            "nomic-bert, jina-bert-v2, modern-bert, gemma, gemma2, gemma3, granite, phi3, olmo2, "
            "qwen2moe, qwen3moe, olmoe, mistral3, gpt-oss, qwen2vl, qwen3vl, qwen3vlmoe, lfm2, "
            "lfm2moe)",
            p.arch));
  if (p.n_embd <= 0 || p.n_layer <= 0 || p.n_head <= 0 || p.n_head_kv <= 0 || p.n_ff <= 0 ||
      p.n_ctx <= 0)
    return error(ErrorCode::kInvalidArgument, "every size must be positive");
  if (p.n_head % p.n_head_kv != 0)
    return error(ErrorCode::kInvalidArgument, "n_head must be a multiple of n_head_kv");
  if (p.head_dim == 0 && p.n_embd % p.n_head != 0)
    return error(ErrorCode::kInvalidArgument,
                 "n_embd must be a multiple of n_head (or give head_dim)");
  if (!kernels::can_quantize(p.type))
    return error(ErrorCode::kInvalidArgument,
                 fmt::format("cannot write weights of type {}", tensor_type_name(p.type)));
  if (p.n_cls_out > 0 && p.arch == "nomic-bert")
    return error(ErrorCode::kInvalidArgument, "nomic-bert has no classifier head (--cls-out)");
  if (p.n_cls_out > 1 && p.arch == "jina-bert-v2")
    return error(ErrorCode::kInvalidArgument,
                 "jina-bert-v2's classifier has one output (--cls-out 1)");
  if (p.arch == "gpt-oss" && (p.n_expert <= 0 || p.n_swa <= 0))
    return error(ErrorCode::kInvalidArgument, "gpt-oss needs --n-expert and --swa");
  if (p.type == TensorType::kMXFP4 && p.n_expert <= 0)
    return error(ErrorCode::kInvalidArgument, "mxfp4 weights are written for experts only");
  if (!p.rope_sections.empty() && (!is_mrope(p.arch) || p.rope_sections.size() > 4))
    return error(ErrorCode::kInvalidArgument,
                 "--rope-sections takes up to 4 values, for qwen2vl, qwen3vl and qwen3vlmoe");
  if (p.n_deepstack < 0 || p.n_deepstack > p.n_layer ||
      (p.n_deepstack > 0 && p.arch != "qwen3vl" && p.arch != "qwen3vlmoe"))
    return error(ErrorCode::kInvalidArgument,
                 "--n-deepstack is for qwen3vl and qwen3vlmoe, at most --n-layer");
  if (p.vocab_path.empty())
    return error(ErrorCode::kInvalidArgument, "a vocabulary GGUF is required");
  return Status::ok();
}

}  // namespace

Status synthesize(const SynthParams& params, const std::string& out_path) {
  if (!params.projector.empty()) return synthesize_projector(params, out_path);
  HEARTH_RETURN_IF_ERROR(check_params(params));
  // MXFP4 models (llama-quantize's MXFP4_MOE): experts in MXFP4, the other weights Q8_0.
  SynthParams p = params;
  if (p.type == TensorType::kMXFP4) p.type = TensorType::kQ8_0;
  if (is_encoder(p.arch)) return detail::synthesize_encoder(p, out_path);
  if (p.arch == "lfm2" || p.arch == "lfm2moe") return detail::synthesize_lfm2(p, out_path);
  const int32_t head_dim = p.head_dim > 0 ? p.head_dim : p.n_embd / p.n_head;
  gguf::Writer w;
  write_hparams(w, p, head_dim);
  set_file_type(w, params.type);
  int32_t n_vocab = 0;
  HEARTH_RETURN_IF_ERROR(copy_tokenizer(w, p.vocab_path, n_vocab, p.add_tokens));
  const int64_t E = p.n_embd;
  // Gemma scales its input rows by sqrt(E): rows of scale 1/sqrt(E) keep them near unit size
  // (and the tied output's logits in a sane range).
  float embd_scale = is_gemma(p.arch) ? 1.0f / std::sqrt(static_cast<float>(E)) : 1.0f;
  if (p.arch == "granite" && p.embedding_scale > 0.0f) embd_scale = 1.0f / p.embedding_scale;
  HEARTH_RETURN_IF_ERROR(
      add_random(w, p, "token_embd.weight", {E, n_vocab}, p.type, embd_scale, 0.0f));
  HEARTH_RETURN_IF_ERROR(
      add_random(w, p, "output_norm.weight", {E}, TensorType::kF32, 0.05f, 1.0f));
  // gemma and gemma2 always tie the output to the embeddings (an output.weight is refused).
  if (!p.tied_output && p.arch != "gemma" && p.arch != "gemma2") {
    const TensorType out_type = p.output_type.value_or(p.type);
    HEARTH_RETURN_IF_ERROR(add_random(w, p, "output.weight", {E, n_vocab}, out_type,
                                      1.0f / std::sqrt(static_cast<float>(E)), 0.0f));
  }
  for (int32_t il = 0; il < p.n_layer; ++il)
    HEARTH_RETURN_IF_ERROR(add_layer(w, p, il, head_dim, params.type));
  if (p.arch == "phi3" && p.n_ctx_orig > 0) HEARTH_RETURN_IF_ERROR(add_long_rope(w, p, head_dim));
  if (p.n_cls_out > 0) {  // a Qwen3-Reranker-style classifier
    if (p.n_cls_out > 1) {
      std::vector<std::string> labels;
      for (int32_t i = 0; i < p.n_cls_out; ++i) labels.push_back(fmt::format("label_{}", i));
      w.set_string_array(p.arch + ".classifier.output_labels", labels);
    }
    HEARTH_RETURN_IF_ERROR(add_random(w, p, "cls.output.weight", {E, p.n_cls_out}, p.type,
                                      1.0f / std::sqrt(static_cast<float>(E)), 0.0f));
  }
  return w.write(out_path);
}

Status convert(const std::string& in_path, TensorType type, const std::string& out_path) {
  if (!kernels::can_quantize(type))
    return error(ErrorCode::kInvalidArgument,
                 fmt::format("cannot write weights of type {}", tensor_type_name(type)));
  HEARTH_ASSIGN_OR_RETURN(gguf::File in, gguf::File::open(in_path));
  gguf::Writer w;
  for (const auto& kv : in.metadata()) w.set_value(kv.key, kv.value);
  for (const auto& t : in.tensors()) {
    if (!kernels::can_dequantize(t.type))
      return error(ErrorCode::kUnsupported,
                   fmt::format("tensor '{}' has type {} which cannot be converted", t.name,
                               tensor_type_name(t.type)));
    std::vector<float> values(static_cast<size_t>(t.n_elements()));
    const uint64_t rb = row_bytes(traits_of(t.type), static_cast<uint64_t>(t.ne[0]));
    for (int64_t r = 0; r < t.n_rows(); ++r)
      kernels::dequantize_row(t.type, t.data + static_cast<uint64_t>(r) * rb,
                              values.data() + r * t.ne[0], t.ne[0]);
    const TensorType out = t.n_dims >= 2 ? fitting_type(type, t.ne[0]) : TensorType::kF32;
    std::vector<int64_t> ne(t.ne.begin(), t.ne.begin() + std::max<uint32_t>(1, t.n_dims));
    HEARTH_RETURN_IF_ERROR(w.add_tensor(t.name, out, ne, encode(out, values, t.ne[0])));
  }
  set_file_type(w, type);
  return w.write(out_path);
}

}  // namespace hearth::synth
