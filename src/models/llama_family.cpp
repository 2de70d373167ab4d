#include "models/llama_family.h"

#include <fmt/format.h>

#include <cmath>

namespace hearth::models {

using engine::LayerWeights;
using engine::ModelHparams;
using engine::ModelWeights;
using engine::TensorLoader;

void LlamaFamilyModel::forward_layer(int32_t il, engine::ForwardState& st) const {
  const LayerWeights& w = weights().layers[static_cast<size_t>(il)];
  const int64_t E = hparams().n_embd;
  engine::AttentionOptions opt;
  opt.rope = spec_.rope;
  opt.causal = hparams().causal;  // <arch>.attention.causal (bidirectional embedding models)
  opt.apply_rope = spec_.nope_period <= 0 || (il + 1) % spec_.nope_period != 0;
  opt.q_scale = spec_.q_scale;
  opt.softcap = spec_.attn_softcap;
  if (spec_.is_local(il)) {
    opt.window = spec_.n_swa;
    opt.swa_rope = hparams().has_rope_swa;
  }
  engine::norm_rows(st, st.s.x.data(), w.attn_norm, st.s.cur.data(), E);
  engine::self_attention(st, il, w, opt);
  if (spec_.post_norms)
    engine::norm_rows(st, st.s.out.data(), w.attn_post_norm, st.s.out.data(), E);
  engine::add_residual(st);
  engine::norm_rows(st, st.s.x.data(), w.ffn_norm, st.s.cur.data(), E);
  if (spec_.gelu_ffn) {
    engine::glu_ffn(st, w, engine::GluActivation::kGelu);
  } else {
    engine::swiglu_ffn(st, w);
  }
  if (spec_.post_norms) engine::norm_rows(st, st.s.out.data(), w.ffn_post_norm, st.s.out.data(), E);
  engine::add_residual(st);
}

// Token rows, scaled by sqrt(E) for gemma (the reference's f32 scale of its input rows).
void LlamaFamilyModel::embed_input(engine::ForwardState& st) const {
  Model::embed_input(st);
  if (!spec_.scale_embeddings) return;
  const float scale = std::sqrt(static_cast<float>(hparams().n_embd));
  float* x = st.s.x.data();
  const int64_t n = st.n_tokens() * hparams().n_embd;
  for (int64_t i = 0; i < n; ++i) x[i] *= scale;
}

namespace {

Status load_layer(TensorLoader& ld, const ModelHparams& hp, const FamilySpec& spec, int32_t il,
                  LayerWeights& w) {
  const std::string p = fmt::format("blk.{}.", il);
  const int64_t E = hp.n_embd, Eq = hp.n_embd_q(), Ek = hp.n_embd_k(), Ev = hp.n_embd_v(),
                F = hp.n_ff;
  const int64_t Eo = int64_t{hp.n_head} * hp.head_dim_v;
  HEARTH_ASSIGN_OR_RETURN(w.attn_norm, ld.vector(p + "attn_norm.weight", E));
  HEARTH_ASSIGN_OR_RETURN(w.wq, ld.matrix(p + "attn_q.weight", E, Eq));
  HEARTH_ASSIGN_OR_RETURN(w.wk, ld.matrix(p + "attn_k.weight", E, Ek));
  HEARTH_ASSIGN_OR_RETURN(w.wv, ld.matrix(p + "attn_v.weight", E, Ev));
  HEARTH_ASSIGN_OR_RETURN(w.wo, ld.matrix(p + "attn_output.weight", Eo, E));
  const bool bias_optional = !spec.qkv_bias;
  if (spec.qkv_bias || spec.optional_biases) {
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
  if (spec.qk_norm) {
    HEARTH_ASSIGN_OR_RETURN(w.q_norm, ld.vector(p + "attn_q_norm.weight", hp.head_dim));
    HEARTH_ASSIGN_OR_RETURN(w.k_norm, ld.vector(p + "attn_k_norm.weight", hp.head_dim));
  }
  if (spec.post_norms) {
    HEARTH_ASSIGN_OR_RETURN(w.attn_post_norm, ld.vector(p + "post_attention_norm.weight", E));
    HEARTH_ASSIGN_OR_RETURN(w.ffn_post_norm, ld.vector(p + "post_ffw_norm.weight", E));
  }
  HEARTH_ASSIGN_OR_RETURN(w.ffn_norm, ld.vector(p + "ffn_norm.weight", E));
  HEARTH_ASSIGN_OR_RETURN(w.ffn_gate, ld.matrix(p + "ffn_gate.weight", E, F));
  HEARTH_ASSIGN_OR_RETURN(w.ffn_up, ld.matrix(p + "ffn_up.weight", E, F));
  HEARTH_ASSIGN_OR_RETURN(w.ffn_down, ld.matrix(p + "ffn_down.weight", F, E));
  return Status::ok();
}

// The vocabulary size is the embedding matrix's row count when the metadata has none.
Status settle_vocab(const gguf::Archive& archive, ModelHparams& hp) {
  const gguf::TensorInfo* emb = archive.find_tensor("token_embd.weight");
  if (emb == nullptr)
    return error(ErrorCode::kCorruptFile,
                 fmt::format("{}: required tensor 'token_embd.weight' is missing",
                             archive.primary().name()));
  if (hp.n_vocab == 0) hp.n_vocab = static_cast<int32_t>(std::min<int64_t>(emb->ne[1], INT32_MAX));
  if (hp.n_vocab <= 0)
    return error(ErrorCode::kCorruptFile, archive.primary().name() + ": empty vocabulary");
  return Status::ok();
}

}  // namespace

Result<ModelPtr> load_llama_family(std::shared_ptr<const gguf::Archive> archive, ModelHparams hp,
                                   const FamilySpec& spec, const engine::LoadOptions& options) {
  HEARTH_RETURN_IF_ERROR(settle_vocab(*archive, hp));
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
