#include "models/llama_family.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "engine/moe.h"
#include "models/load_parts.h"

namespace hearth::models {

using engine::LayerWeights;
using engine::ModelHparams;
using engine::ModelWeights;
using engine::TensorLoader;

int32_t LlamaFamilyModel::attention_window(int32_t il) const {
  return hparams().causal && spec_.is_local(il) ? spec_.n_swa : 0;
}

void LlamaFamilyModel::forward_layer(int32_t il, engine::ForwardState& st) const {
  const LayerWeights& w = weights().layers[static_cast<size_t>(il)];
  const int64_t E = hparams().n_embd;
  engine::AttentionOptions opt;
  opt.rope = spec_.rope;
  opt.causal = hparams().causal;  // <arch>.attention.causal (bidirectional embedding models)
  opt.apply_rope = spec_.nope_period <= 0 || (il + 1) % spec_.nope_period != 0;
  opt.kq_scale = spec_.kq_scale;
  opt.q_scale = spec_.q_scale;
  opt.softcap = spec_.attn_softcap;
  opt.temp_scale = spec_.attn_temp_scale;
  opt.temp_floor = spec_.attn_temp_floor;
  opt.qk_norm = spec_.qk_norm_rows ? engine::QkNorm::kRowRms : engine::QkNorm::kHeadRms;
  if (!w.attn_sinks.empty()) opt.sinks = w.attn_sinks.data();
  if (spec_.is_local(il)) {
    opt.window = attention_window(il);
    opt.swa_rope = hparams().rope_swa.has_value();
  }
  const auto block_input = [&](const std::vector<float>& norm) {
    if (spec_.pre_norms) {
      engine::norm_rows(st, st.s.x.data(), norm, st.s.cur.data(), E);
    } else {
      std::copy_n(st.s.x.data(), st.n_tokens() * E, st.s.cur.data());
    }
  };
  const auto block_output = [&](const std::vector<float>& post_norm) {
    if (spec_.post_norms) engine::norm_rows(st, st.s.out.data(), post_norm, st.s.out.data(), E);
    if (spec_.residual_scale != 0.0f) {
      float* out = st.s.out.data();
      const int64_t n = st.n_tokens() * E;
      for (int64_t i = 0; i < n; ++i) out[i] *= spec_.residual_scale;
    }
    engine::add_residual(st);
  };
  block_input(w.attn_norm);
  engine::self_attention(st, il, w, opt);
  block_output(w.attn_post_norm);
  block_input(w.ffn_norm);
  if (w.moe.present()) {
    engine::moe_ffn(
        st, w,
        {hparams().n_expert_used, spec_.moe_norm_weights, spec_.moe_gating, spec_.moe_activation});
  } else {  // separate gate, or phi3's fused gate-up (glu_ffn tells them apart)
    engine::glu_ffn(st, w,
                    spec_.gelu_ffn ? engine::GluActivation::kGelu : engine::GluActivation::kSilu);
  }
  block_output(w.ffn_post_norm);
  if (il < hparams().n_deepstack) engine::add_deepstack(st, il);
}

// Token rows, multiplied by embd_scale where the architecture scales them (an f32 scale, as
// the reference's graph applies it). Media rows (BatchToken::embd) are not scaled: the
// reference scales only a batch of tokens (gemma3: sqrt(E) when ubatch.token is set).
void LlamaFamilyModel::embed_input(engine::ForwardState& st) const {
  Model::embed_input(st);
  if (spec_.embd_scale == 0.0f) return;
  const int64_t E = hparams().n_embd;
  for (int64_t t = 0; t < st.n_tokens(); ++t) {
    if (st.tokens[static_cast<size_t>(t)].embd != nullptr) continue;
    float* x = st.s.x.data() + t * E;
    for (int64_t i = 0; i < E; ++i) x[i] *= spec_.embd_scale;
  }
}

namespace {

// A mixture-of-experts FFN: the router, the experts' 3-D tensors, and the shared expert.
Status load_experts(TensorLoader& ld, const ModelHparams& hp, const FamilySpec& spec,
                    const std::string& p, engine::MoeWeights& m) {
  const int64_t E = hp.n_embd, X = hp.n_expert;
  // The experts' width: expert_feed_forward_length, else F / k as the reference falls back.
  const int64_t Fe = hp.n_ff_exp > 0 ? hp.n_ff_exp : hp.n_ff / hp.n_expert_used;
  HEARTH_ASSIGN_OR_RETURN(m.router, ld.matrix(p + "ffn_gate_inp.weight", E, X));
  HEARTH_ASSIGN_OR_RETURN(m.gate, ld.matrices(p + "ffn_gate_exps.weight", E, Fe, X));
  HEARTH_ASSIGN_OR_RETURN(m.up, ld.matrices(p + "ffn_up_exps.weight", E, Fe, X));
  HEARTH_ASSIGN_OR_RETURN(m.down, ld.matrices(p + "ffn_down_exps.weight", Fe, E, X));
  if (spec.expert_biases) {
    HEARTH_ASSIGN_OR_RETURN(m.router_b, ld.vector(p + "ffn_gate_inp.bias", X));
    HEARTH_ASSIGN_OR_RETURN(m.gate_b, ld.vectors(p + "ffn_gate_exps.bias", Fe, X));
    HEARTH_ASSIGN_OR_RETURN(m.up_b, ld.vectors(p + "ffn_up_exps.bias", Fe, X));
    HEARTH_ASSIGN_OR_RETURN(m.down_b, ld.vectors(p + "ffn_down_exps.bias", E, X));
  }
  if (!spec.shared_expert) return Status::ok();
  const int64_t Fs = hp.n_ff_shexp > 0 ? hp.n_ff_shexp : hp.n_ff;
  HEARTH_ASSIGN_OR_RETURN(m.shared_router, ld.matrix(p + "ffn_gate_inp_shexp.weight", E, 1));
  HEARTH_ASSIGN_OR_RETURN(m.shared_gate, ld.matrix(p + "ffn_gate_shexp.weight", E, Fs));
  HEARTH_ASSIGN_OR_RETURN(m.shared_up, ld.matrix(p + "ffn_up_shexp.weight", E, Fs));
  HEARTH_ASSIGN_OR_RETURN(m.shared_down, ld.matrix(p + "ffn_down_shexp.weight", Fs, E));
  return Status::ok();
}

Status load_layer(TensorLoader& ld, const ModelHparams& hp, const FamilySpec& spec, int32_t il,
                  LayerWeights& w) {
  const std::string p = fmt::format("blk.{}.", il);
  const int64_t E = hp.n_embd, Eq = hp.n_embd_q(), Ek = hp.n_embd_k(), Ev = hp.n_embd_v(),
                F = hp.n_ff;
  const int64_t Eo = int64_t{hp.n_head} * hp.head_dim_v;
  if (spec.pre_norms) {
    HEARTH_ASSIGN_OR_RETURN(w.attn_norm, ld.vector(p + "attn_norm.weight", E));
  }
  if (spec.fused_qkv && ld.has(p + "attn_qkv.weight")) {
    HEARTH_RETURN_IF_ERROR(parts::load_qkv(ld, hp, p, w));
  } else {
    HEARTH_ASSIGN_OR_RETURN(w.wq, ld.matrix(p + "attn_q.weight", E, Eq));
    HEARTH_ASSIGN_OR_RETURN(w.wk, ld.matrix(p + "attn_k.weight", E, Ek));
    HEARTH_ASSIGN_OR_RETURN(w.wv, ld.matrix(p + "attn_v.weight", E, Ev));
  }
  HEARTH_ASSIGN_OR_RETURN(w.wo, ld.matrix(p + "attn_output.weight", Eo, E));
  const bool bias_optional = !spec.qkv_bias;
  if (spec.qkv_bias || spec.optional_qkv_bias || spec.optional_biases || spec.attn_out_bias) {
    HEARTH_ASSIGN_OR_RETURN(w.bq, ld.vector(p + "attn_q.bias", Eq, bias_optional));
    HEARTH_ASSIGN_OR_RETURN(w.bk, ld.vector(p + "attn_k.bias", Ek, bias_optional));
    HEARTH_ASSIGN_OR_RETURN(w.bv, ld.vector(p + "attn_v.bias", Ev, bias_optional));
  }
  if (spec.optional_biases) {
    HEARTH_ASSIGN_OR_RETURN(w.bo, ld.vector(p + "attn_output.bias", E, true));
    HEARTH_ASSIGN_OR_RETURN(w.ffn_gate_b, ld.vector(p + "ffn_gate.bias", F, true));
    HEARTH_ASSIGN_OR_RETURN(w.ffn_up_b, ld.vector(p + "ffn_up.bias", F, true));
    HEARTH_ASSIGN_OR_RETURN(w.ffn_down_b, ld.vector(p + "ffn_down.bias", E, true));
  }
  if (spec.attn_out_bias) {
    HEARTH_ASSIGN_OR_RETURN(w.bo, ld.vector(p + "attn_output.bias", E));
  }
  if (spec.attn_sinks) {
    HEARTH_ASSIGN_OR_RETURN(w.attn_sinks, ld.vector(p + "attn_sinks.weight", hp.n_head));
  }
  if (spec.qk_norm) {
    const int64_t q_width = spec.qk_norm_rows ? Eq : hp.head_dim;
    const int64_t k_width = spec.qk_norm_rows ? Ek : hp.head_dim;
    HEARTH_ASSIGN_OR_RETURN(w.q_norm, ld.vector(p + "attn_q_norm.weight", q_width));
    HEARTH_ASSIGN_OR_RETURN(w.k_norm, ld.vector(p + "attn_k_norm.weight", k_width));
  }
  if (spec.post_norms) {
    HEARTH_ASSIGN_OR_RETURN(w.attn_post_norm, ld.vector(p + "post_attention_norm.weight", E));
    HEARTH_ASSIGN_OR_RETURN(w.ffn_post_norm, ld.vector(p + "post_ffw_norm.weight", E));
  }
  if (spec.pre_norms) {
    HEARTH_ASSIGN_OR_RETURN(w.ffn_norm, ld.vector(p + spec.ffn_norm_name + ".weight", E));
  }
  if (hp.n_expert > 0) {
    HEARTH_RETURN_IF_ERROR(load_experts(ld, hp, spec, p, w.moe));
    return Status::ok();
  }
  if (spec.fused_gate_up) {
    HEARTH_ASSIGN_OR_RETURN(w.ffn_up, ld.matrix(p + "ffn_up.weight", E, 2 * F));
  } else {
    HEARTH_ASSIGN_OR_RETURN(w.ffn_gate, ld.matrix(p + "ffn_gate.weight", E, F));
    HEARTH_ASSIGN_OR_RETURN(w.ffn_up, ld.matrix(p + "ffn_up.weight", E, F));
  }
  HEARTH_ASSIGN_OR_RETURN(w.ffn_down, ld.matrix(p + "ffn_down.weight", F, E));
  return Status::ok();
}

}  // namespace

Status require_experts(const gguf::Archive& archive, const ModelHparams& hp) {
  if (hp.n_expert > 0) return Status::ok();
  return error(ErrorCode::kCorruptFile,
               fmt::format("{}: {} needs {}.expert_count and .expert_used_count",
                           archive.primary().name(), hp.arch, hp.arch));
}

uint32_t read_swa_period(const gguf::File& f, const std::string& arch, uint32_t fallback) {
  const gguf::Value* v = f.find(arch + ".attention.sliding_window_pattern");
  if (v == nullptr || v->type() != gguf::ValueType::kU32) return fallback;
  return static_cast<uint32_t>(*v->as_uint());
}

Result<int32_t> read_window(const gguf::File& f, const std::string& arch, int64_t fallback) {
  HEARTH_ASSIGN_OR_RETURN(int64_t n,
                          engine::read_u32_key(f, arch + ".attention.sliding_window", fallback));
  return static_cast<int32_t>(std::min<int64_t>(n, INT32_MAX));
}

Status read_multi_rope(const gguf::File& f, engine::MultiRope kind, ModelHparams& hp) {
  const std::string key = hp.arch + ".rope.dimension_sections";
  const gguf::Value* v = f.find(key);
  const auto corrupt = [&](const std::string& what) {
    return error(ErrorCode::kCorruptFile, fmt::format("{}: {} {}", f.name(), key, what));
  };
  if (v == nullptr) return corrupt("is missing (M-RoPE needs it)");
  // As the reference's get_key_or_arr: up to four integers, or one for every section.
  if (v->is_array()) {
    const auto et = v->element_type();
    if ((et != gguf::ValueType::kI32 && et != gguf::ValueType::kU32) || v->size() == 0 ||
        v->size() > 4)
      return corrupt("must hold 1 to 4 integers");
    for (uint64_t i = 0; i < v->size(); ++i) {
      const int64_t n = v->int_at(i);
      if (n < 0 || n > hp.n_rot) return corrupt(fmt::format("holds {}, outside [0, n_rot]", n));
      hp.rope_sections[i] = static_cast<int32_t>(n);
    }
  } else {
    HEARTH_ASSIGN_OR_RETURN(int64_t n, engine::read_u32_key(f, key, 0));
    if (n > hp.n_rot) return corrupt(fmt::format("is {}, past n_rot", n));
    hp.rope_sections.fill(static_cast<int32_t>(n));
  }
  const auto& s = hp.rope_sections;
  if (s[0] + s[1] + s[2] <= 0) return corrupt("gives no pairs to time, height or width");
  if (hp.n_rot != hp.head_dim)
    return corrupt(
        fmt::format("applies to whole heads: rope dimension count {} must be the head "
                    "size {}",
                    hp.n_rot, hp.head_dim));
  hp.mrope = kind;
  return Status::ok();
}

Status read_deepstack(const gguf::File& f, ModelHparams& hp) {
  HEARTH_ASSIGN_OR_RETURN(int64_t n, engine::read_u32_key(f, hp.arch + ".n_deepstack_layers", 0));
  // Each deepstack slice feeds one layer's output, so there are at most n_layer of them.
  if (n > hp.n_layer)
    return error(ErrorCode::kCorruptFile,
                 fmt::format("{}: {}.n_deepstack_layers {} exceeds the {} layers", f.name(),
                             hp.arch, n, hp.n_layer));
  hp.n_deepstack = static_cast<int32_t>(n);
  return Status::ok();
}

Result<ModelPtr> load_llama_family(std::shared_ptr<const gguf::Archive> archive, ModelHparams hp,
                                   const FamilySpec& spec, const engine::LoadOptions& options) {
  HEARTH_RETURN_IF_ERROR(parts::settle_vocab(*archive, hp));
  if (spec.fused_gate_up) hp.n_ff_up = 2 * hp.n_ff;
  TensorLoader ld(*archive, options);
  ModelWeights w;
  const int64_t E = hp.n_embd, V = hp.n_vocab;
  HEARTH_ASSIGN_OR_RETURN(w.token_embd, ld.row_matrix("token_embd.weight", E, V));
  HEARTH_ASSIGN_OR_RETURN(w.output_norm, ld.vector("output_norm.weight", E));
  HEARTH_ASSIGN_OR_RETURN(w.output, ld.matrix("output.weight", E, V, /*optional=*/true));
  if (!engine::present(w.output)) w.output = w.token_embd;  // tied embeddings
  if (spec.output_bias) {
    HEARTH_ASSIGN_OR_RETURN(w.output_bias, ld.vector("output.bias", V, true));
  }
  HEARTH_ASSIGN_OR_RETURN(w.rope_freqs, ld.vector("rope_freqs.weight", hp.n_rot / 2, true));
  // phi3's LongRoPE factors: the context picks long or short by its per-sequence size.
  HEARTH_ASSIGN_OR_RETURN(w.rope_long, ld.vector("rope_factors_long.weight", hp.n_rot / 2, true));
  HEARTH_ASSIGN_OR_RETURN(w.rope_short, ld.vector("rope_factors_short.weight", hp.n_rot / 2, true));
  if (spec.rank_head) {
    HEARTH_ASSIGN_OR_RETURN(w.cls_out, ld.row_matrix("cls.output.weight", E, hp.n_cls_out, true));
  }
  w.layers.resize(static_cast<size_t>(hp.n_layer));
  for (int32_t il = 0; il < hp.n_layer; ++il)
    HEARTH_RETURN_IF_ERROR(load_layer(ld, hp, spec, il, w.layers[static_cast<size_t>(il)]));
  HEARTH_RETURN_IF_ERROR(ld.check_all_used());
  w.repacked = ld.take_repacked();
  return ModelPtr(
      std::make_shared<LlamaFamilyModel>(std::move(archive), std::move(hp), std::move(w), spec));
}

}  // namespace hearth::models
