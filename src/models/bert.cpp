// bert, nomic-bert and jina-bert-v2: the post-norm encoders of embedding and reranking
// models (BGE, all-MiniLM, e5, XLM-RoBERTa; nomic-embed-text; jina-embeddings-v2 and
// jina-reranker-v1), one graph as in the reference. Input rows are the token row plus token
// type 0's row (plus the absolute position row for bert), then a LayerNorm. Each block:
// non-causal self-attention (biases where present; NeoX RoPE for nomic-bert; ALiBi and
// optional q/k LayerNorms for jina-bert-v2) -> residual -> LayerNorm (jina: optionally the
// block input re-added and a second LayerNorm), then the FFN (bert: GELU with biases;
// nomic-bert: SwiGLU; jina: GELU, or GEGLU with a separate or fused gate) -> residual ->
// LayerNorm. The last block's output is the embedding: no output norm, no LM head. Rerankers
// carry a classifier (cls, cls.output) that rank pooling runs (engine/pooling.cpp).
#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "engine/forward.h"
#include "engine/model.h"
#include "kernels/quant.h"
#include "models/architectures.h"
#include "models/load_parts.h"

namespace hearth::models {

using engine::LayerWeights;
using engine::ModelHparams;
using engine::ModelWeights;
using engine::TensorLoader;
using engine::WeightMatrix;

namespace {

enum class EncoderKind { kBert, kNomicBert, kJinaBertV2 };

// jina-bert-v2's ALiBi maximum bias (the reference fixes it; the file has no key).
constexpr float kJinaMaxAlibiBias = 8.0f;

class EncoderModel final : public engine::Model {
 public:
  EncoderModel(std::shared_ptr<const gguf::Archive> archive, ModelHparams hparams,
               ModelWeights weights, EncoderKind kind)
      : Model(std::move(archive), std::move(hparams), std::move(weights)), kind_(kind) {}

  void forward_layer(int32_t il, engine::ForwardState& st) const override {
    const LayerWeights& w = weights().layers[static_cast<size_t>(il)];
    const int64_t E = hparams().n_embd;
    const int64_t n = st.n_tokens() * E;
    engine::AttentionOptions opt;
    opt.causal = false;
    opt.apply_rope = kind_ == EncoderKind::kNomicBert;
    opt.rope = engine::ops::RopeKind::kNeox;
    opt.qk_norm = engine::QkNorm::kRowLayerNorm;
    if (kind_ == EncoderKind::kJinaBertV2) opt.max_alibi_bias = kJinaMaxAlibiBias;
    std::copy_n(st.s.x.data(), n, st.s.cur.data());  // cur keeps the block input
    engine::self_attention(st, il, w, opt);
    engine::add_residual(st);
    engine::layer_norm_rows(st, st.s.x.data(), w.attn_out_norm, w.attn_out_norm_b, st.s.x.data(),
                            E);
    if (!w.attn_norm_2.empty()) {
      engine::ops::add_inplace(st.s.x.data(), st.s.cur.data(), n);
      engine::layer_norm_rows(st, st.s.x.data(), w.attn_norm_2, w.attn_norm_2_b, st.s.x.data(), E);
    }
    std::copy_n(st.s.x.data(), n, st.s.cur.data());
    feed_forward(st, w);
    engine::add_residual(st);
    engine::layer_norm_rows(st, st.s.x.data(), w.out_norm, w.out_norm_b, st.s.x.data(), E);
  }

  // Token row + token type 0 (+ position row), then the embedding LayerNorm.
  void embed_input(engine::ForwardState& st) const override {
    Model::embed_input(st);
    const ModelWeights& w = weights();
    const int64_t E = hparams().n_embd;
    std::vector<float> position(static_cast<size_t>(E));
    for (int64_t t = 0; t < st.n_tokens(); ++t) {
      float* x = st.s.x.data() + t * E;
      if (!w.token_type0.empty()) engine::ops::add_inplace(x, w.token_type0.data(), E);
      if (kind_ == EncoderKind::kBert) {
        const WeightMatrix& p = w.position_embd;
        const auto* row = static_cast<const uint8_t*>(p.data) +
                          static_cast<size_t>(st.tokens[static_cast<size_t>(t)].pos) * p.row_stride;
        kernels::dequantize_row(p.type, row, position.data(), E);
        engine::ops::add_inplace(x, position.data(), E);
      }
    }
    engine::layer_norm_rows(st, st.s.x.data(), w.embd_norm, w.embd_norm_b, st.s.x.data(), E);
  }

  void final_hidden(const float* x, float* out) const override {
    std::copy_n(x, hparams().n_embd, out);
  }

 private:
  void feed_forward(engine::ForwardState& st, const LayerWeights& w) const {
    if (kind_ == EncoderKind::kNomicBert) {
      engine::glu_ffn(st, w, engine::GluActivation::kSilu);
    } else if (engine::present(w.ffn_gate) || w.ffn_up.n_rows != w.ffn_down.n_cols) {
      engine::glu_ffn(st, w, engine::GluActivation::kGelu);  // jina: separate or fused gate
    } else {
      engine::gelu_ffn(st, w);
    }
  }

  EncoderKind kind_;
};

// jina-bert-v2's optional parts: q/k LayerNorms, the second attention norm, and the FFN's
// gate (separate, or fused into ffn_up's 2F rows).
Status load_jina_parts(TensorLoader& ld, ModelHparams& hp, const std::string& p, LayerWeights& w) {
  const int64_t E = hp.n_embd, F = hp.n_ff;
  HEARTH_ASSIGN_OR_RETURN(w.q_norm, ld.vector(p + "attn_q_norm.weight", hp.n_embd_q(), true));
  HEARTH_ASSIGN_OR_RETURN(w.q_norm_b, ld.vector(p + "attn_q_norm.bias", hp.n_embd_q(), true));
  HEARTH_ASSIGN_OR_RETURN(w.k_norm, ld.vector(p + "attn_k_norm.weight", hp.n_embd_k(), true));
  HEARTH_ASSIGN_OR_RETURN(w.k_norm_b, ld.vector(p + "attn_k_norm.bias", hp.n_embd_k(), true));
  HEARTH_ASSIGN_OR_RETURN(w.attn_norm_2, ld.vector(p + "attn_norm_2.weight", E, true));
  HEARTH_ASSIGN_OR_RETURN(w.attn_norm_2_b, ld.vector(p + "attn_norm_2.bias", E, true));
  HEARTH_ASSIGN_OR_RETURN(w.ffn_gate, ld.matrix(p + "ffn_gate.weight", E, F, true));
  // ffn_up holds F rows, or 2F (gate half, up half) when there is no separate gate.
  int64_t up_rows = F;
  if (const gguf::TensorInfo* up = ld.find_info(p + "ffn_up.weight"); up && up->n_dims >= 2)
    up_rows = up->ne[1];
  if (up_rows != F && (up_rows != 2 * F || engine::present(w.ffn_gate)))
    return error(ErrorCode::kCorruptFile,
                 fmt::format("tensor '{}ffn_up.weight' has {} rows; expected {} or {} (with the "
                             "gate fused in)",
                             p, up_rows, F, 2 * F));
  if (up_rows == 2 * F) hp.n_ff_up = static_cast<int32_t>(2 * F);
  HEARTH_ASSIGN_OR_RETURN(w.ffn_up, ld.matrix(p + "ffn_up.weight", E, up_rows));
  HEARTH_ASSIGN_OR_RETURN(w.ffn_up_b, ld.vector(p + "ffn_up.bias", up_rows, true));
  HEARTH_ASSIGN_OR_RETURN(w.ffn_down_b, ld.vector(p + "ffn_down.bias", E));
  return Status::ok();
}

Status load_block(TensorLoader& ld, ModelHparams& hp, EncoderKind kind, int32_t il,
                  LayerWeights& w) {
  const std::string p = fmt::format("blk.{}.", il);
  const int64_t E = hp.n_embd, F = hp.n_ff;
  const bool jina = kind == EncoderKind::kJinaBertV2;
  HEARTH_RETURN_IF_ERROR(parts::load_qkv(ld, hp, p, w));
  HEARTH_ASSIGN_OR_RETURN(w.wo, ld.matrix(p + "attn_output.weight", hp.n_embd_v(), E));
  HEARTH_ASSIGN_OR_RETURN(w.bo, ld.vector(p + "attn_output.bias", E, !jina));
  HEARTH_ASSIGN_OR_RETURN(w.attn_out_norm, ld.vector(p + "attn_output_norm.weight", E));
  HEARTH_ASSIGN_OR_RETURN(w.attn_out_norm_b, ld.vector(p + "attn_output_norm.bias", E));
  if (jina) {
    HEARTH_RETURN_IF_ERROR(load_jina_parts(ld, hp, p, w));
  } else {
    HEARTH_ASSIGN_OR_RETURN(w.ffn_up, ld.matrix(p + "ffn_up.weight", E, F));
    // nomic-bert's graph uses no FFN biases even when the file has them.
    std::vector<float> up_b, down_b;
    HEARTH_ASSIGN_OR_RETURN(up_b, ld.vector(p + "ffn_up.bias", F, true));
    HEARTH_ASSIGN_OR_RETURN(down_b, ld.vector(p + "ffn_down.bias", E, true));
    if (kind == EncoderKind::kNomicBert) {
      HEARTH_ASSIGN_OR_RETURN(w.ffn_gate, ld.matrix(p + "ffn_gate.weight", E, F));
    } else {
      w.ffn_up_b = std::move(up_b);
      w.ffn_down_b = std::move(down_b);
    }
  }
  HEARTH_ASSIGN_OR_RETURN(w.ffn_down, ld.matrix(p + "ffn_down.weight", F, E));
  HEARTH_ASSIGN_OR_RETURN(w.out_norm, ld.vector(p + "layer_output_norm.weight", E));
  HEARTH_ASSIGN_OR_RETURN(w.out_norm_b, ld.vector(p + "layer_output_norm.bias", E));
  return Status::ok();
}

// The rank head: bert's classifier (cls [E, E] + tanh, cls.output [E, n_cls_out]), or
// jina's single projection (cls [E, 1] + tanh, no cls.output).
Status load_rank_head(TensorLoader& ld, const ModelHparams& hp, EncoderKind kind, ModelWeights& w) {
  const int64_t E = hp.n_embd;
  if (kind == EncoderKind::kJinaBertV2) {
    HEARTH_ASSIGN_OR_RETURN(w.cls, ld.row_matrix("cls.weight", E, 1, true));
    HEARTH_ASSIGN_OR_RETURN(w.cls_b, ld.vector("cls.bias", 1, true));
    return Status::ok();
  }
  if (kind != EncoderKind::kBert) return Status::ok();  // nomic-bert has no classifier
  HEARTH_ASSIGN_OR_RETURN(w.cls, ld.row_matrix("cls.weight", E, E, true));
  HEARTH_ASSIGN_OR_RETURN(w.cls_b, ld.vector("cls.bias", E, true));
  HEARTH_ASSIGN_OR_RETURN(w.cls_out, ld.row_matrix("cls.output.weight", E, hp.n_cls_out, true));
  HEARTH_ASSIGN_OR_RETURN(w.cls_out_b, ld.vector("cls.output.bias", hp.n_cls_out, true));
  return Status::ok();
}

// Token rows, token type 0, positions, the embedding norm and the rank head.
Status load_embeddings(TensorLoader& ld, const gguf::Archive& archive, const ModelHparams& hp,
                       EncoderKind kind, ModelWeights& w) {
  const int64_t E = hp.n_embd;
  HEARTH_ASSIGN_OR_RETURN(w.token_embd, ld.row_matrix("token_embd.weight", E, hp.n_vocab));
  if (const gguf::TensorInfo* types = archive.find_tensor("token_types.weight")) {
    if (types->ne[1] < 1)
      return error(ErrorCode::kCorruptFile,
                   archive.primary().name() + ": tensor 'token_types.weight' has no rows");
    HEARTH_ASSIGN_OR_RETURN(WeightMatrix m, ld.row_matrix("token_types.weight", E, types->ne[1]));
    w.token_type0.resize(static_cast<size_t>(E));
    kernels::dequantize_row(m.type, m.data, w.token_type0.data(), E);
  } else if (kind == EncoderKind::kJinaBertV2) {
    return error(ErrorCode::kCorruptFile,
                 archive.primary().name() + ": required tensor 'token_types.weight' is missing");
  }
  if (kind == EncoderKind::kBert) {
    HEARTH_ASSIGN_OR_RETURN(w.position_embd,
                            ld.row_matrix("position_embd.weight", E, hp.n_ctx_train));
  }
  HEARTH_ASSIGN_OR_RETURN(w.embd_norm, ld.vector("token_embd_norm.weight", E));
  HEARTH_ASSIGN_OR_RETURN(w.embd_norm_b, ld.vector("token_embd_norm.bias", E));
  return load_rank_head(ld, hp, kind, w);
}

Result<ModelPtr> load_encoder(std::shared_ptr<const gguf::Archive> archive, ModelHparams hp,
                              EncoderKind kind, const engine::LoadOptions& options) {
  HEARTH_RETURN_IF_ERROR(parts::prepare_encoder_hparams(*archive, hp));
  if (kind == EncoderKind::kBert && hp.n_ctx_train < 1)
    return error(ErrorCode::kCorruptFile,
                 fmt::format("{}: '{}.context_length' must be positive (it sizes the position "
                             "embeddings)",
                             archive->primary().name(), hp.arch));
  TensorLoader ld(*archive, options);
  ModelWeights w;
  HEARTH_RETURN_IF_ERROR(load_embeddings(ld, *archive, hp, kind, w));
  w.layers.resize(static_cast<size_t>(hp.n_layer));
  for (int32_t il = 0; il < hp.n_layer; ++il)
    HEARTH_RETURN_IF_ERROR(load_block(ld, hp, kind, il, w.layers[static_cast<size_t>(il)]));
  HEARTH_RETURN_IF_ERROR(ld.check_all_used());
  w.repacked = ld.take_repacked();
  return ModelPtr(
      std::make_shared<EncoderModel>(std::move(archive), std::move(hp), std::move(w), kind));
}

}  // namespace

Result<ModelPtr> load_bert(std::shared_ptr<const gguf::Archive> archive, ModelHparams hp,
                           const engine::LoadOptions& options) {
  return load_encoder(std::move(archive), std::move(hp), EncoderKind::kBert, options);
}

Result<ModelPtr> load_nomic_bert(std::shared_ptr<const gguf::Archive> archive, ModelHparams hp,
                                 const engine::LoadOptions& options) {
  return load_encoder(std::move(archive), std::move(hp), EncoderKind::kNomicBert, options);
}

Result<ModelPtr> load_jina_bert_v2(std::shared_ptr<const gguf::Archive> archive, ModelHparams hp,
                                   const engine::LoadOptions& options) {
  return load_encoder(std::move(archive), std::move(hp), EncoderKind::kJinaBertV2, options);
}

}  // namespace hearth::models
