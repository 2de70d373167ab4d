// bert and nomic-bert: the encoders of embedding and reranking models (BGE, all-MiniLM, e5,
// XLM-RoBERTa; nomic-embed-text). Input rows are the token row plus token type 0's row
// (plus the absolute position row for bert), then a LayerNorm. Each block is post-norm:
// non-causal self-attention (biases where present; NeoX RoPE for nomic-bert) -> residual ->
// LayerNorm, then the FFN (bert: GELU with biases; nomic-bert: SwiGLU) -> residual ->
// LayerNorm. The last block's output is the embedding: no output norm, no LM head. Rerankers
// carry a classifier (cls, cls.output) that rank pooling runs (engine/pooling.cpp).
#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "engine/forward.h"
#include "engine/model.h"
#include "kernels/quant.h"
#include "models/architectures.h"

namespace hearth::models {

using engine::LayerWeights;
using engine::ModelHparams;
using engine::ModelWeights;
using engine::TensorLoader;
using engine::WeightMatrix;

namespace {

struct EncoderSpec {
  bool positions = true;  // bert: absolute position embeddings; nomic-bert: RoPE
  bool swiglu = false;    // nomic-bert's gated FFN
};

class EncoderModel final : public engine::Model {
 public:
  EncoderModel(std::shared_ptr<const gguf::Archive> archive, ModelHparams hparams,
               ModelWeights weights, EncoderSpec spec)
      : Model(std::move(archive), std::move(hparams), std::move(weights)), spec_(spec) {}

  void forward_layer(int32_t il, engine::ForwardState& st) const override {
    const LayerWeights& w = weights().layers[static_cast<size_t>(il)];
    const int64_t E = hparams().n_embd;
    const int64_t n = st.n_tokens() * E;
    engine::AttentionOptions opt;
    opt.causal = false;
    opt.apply_rope = !spec_.positions;
    opt.rope = engine::ops::RopeKind::kNeox;
    std::copy_n(st.s.x.data(), n, st.s.cur.data());
    engine::self_attention(st, il, w, opt);
    engine::add_residual(st);
    engine::layer_norm_rows(st, st.s.x.data(), w.attn_out_norm, w.attn_out_norm_b, st.s.x.data(),
                            E);
    std::copy_n(st.s.x.data(), n, st.s.cur.data());
    if (spec_.swiglu) {
      engine::swiglu_ffn(st, w);
    } else {
      engine::gelu_ffn(st, w);
    }
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
      if (spec_.positions) {
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
  EncoderSpec spec_;
};

// A view of rows [first, first + n) of a matrix in the file's row layout.
WeightMatrix row_range(const WeightMatrix& m, int64_t first, int64_t n) {
  WeightMatrix v = m;
  v.n_rows = n;
  v.data = static_cast<const uint8_t*>(m.data) + static_cast<size_t>(first) * m.row_stride;
  return v;
}

// Q, K and V: separate matrices, or one fused attn_qkv ([E, E + 2 Ekv]) read as three
// views of its rows.
Status load_qkv(TensorLoader& ld, const ModelHparams& hp, const std::string& p, LayerWeights& w) {
  const int64_t E = hp.n_embd, Eq = hp.n_embd_q(), Ek = hp.n_embd_k(), Ev = hp.n_embd_v();
  if (ld.has(p + "attn_qkv.weight")) {
    HEARTH_ASSIGN_OR_RETURN(WeightMatrix qkv,
                            ld.row_matrix(p + "attn_qkv.weight", E, Eq + Ek + Ev));
    w.wq = row_range(qkv, 0, Eq);
    w.wk = row_range(qkv, Eq, Ek);
    w.wv = row_range(qkv, Eq + Ek, Ev);
    HEARTH_ASSIGN_OR_RETURN(std::vector<float> b,
                            ld.vector(p + "attn_qkv.bias", Eq + Ek + Ev, true));
    if (!b.empty()) {
      w.bq.assign(b.begin(), b.begin() + Eq);
      w.bk.assign(b.begin() + Eq, b.begin() + Eq + Ek);
      w.bv.assign(b.begin() + Eq + Ek, b.end());
    }
    return Status::ok();
  }
  HEARTH_ASSIGN_OR_RETURN(w.wq, ld.matrix(p + "attn_q.weight", E, Eq));
  HEARTH_ASSIGN_OR_RETURN(w.wk, ld.matrix(p + "attn_k.weight", E, Ek));
  HEARTH_ASSIGN_OR_RETURN(w.wv, ld.matrix(p + "attn_v.weight", E, Ev));
  HEARTH_ASSIGN_OR_RETURN(w.bq, ld.vector(p + "attn_q.bias", Eq, true));
  HEARTH_ASSIGN_OR_RETURN(w.bk, ld.vector(p + "attn_k.bias", Ek, true));
  HEARTH_ASSIGN_OR_RETURN(w.bv, ld.vector(p + "attn_v.bias", Ev, true));
  return Status::ok();
}

Status load_block(TensorLoader& ld, const ModelHparams& hp, const EncoderSpec& spec, int32_t il,
                  LayerWeights& w) {
  const std::string p = fmt::format("blk.{}.", il);
  const int64_t E = hp.n_embd, F = hp.n_ff;
  HEARTH_RETURN_IF_ERROR(load_qkv(ld, hp, p, w));
  HEARTH_ASSIGN_OR_RETURN(w.wo, ld.matrix(p + "attn_output.weight", hp.n_embd_v(), E));
  HEARTH_ASSIGN_OR_RETURN(w.bo, ld.vector(p + "attn_output.bias", E, true));
  HEARTH_ASSIGN_OR_RETURN(w.attn_out_norm, ld.vector(p + "attn_output_norm.weight", E));
  HEARTH_ASSIGN_OR_RETURN(w.attn_out_norm_b, ld.vector(p + "attn_output_norm.bias", E));
  HEARTH_ASSIGN_OR_RETURN(w.ffn_up, ld.matrix(p + "ffn_up.weight", E, F));
  HEARTH_ASSIGN_OR_RETURN(w.ffn_down, ld.matrix(p + "ffn_down.weight", F, E));
  // nomic-bert's graph uses no FFN biases even when the file has them.
  std::vector<float> up_b, down_b;
  HEARTH_ASSIGN_OR_RETURN(up_b, ld.vector(p + "ffn_up.bias", F, true));
  HEARTH_ASSIGN_OR_RETURN(down_b, ld.vector(p + "ffn_down.bias", E, true));
  if (spec.swiglu) {
    HEARTH_ASSIGN_OR_RETURN(w.ffn_gate, ld.matrix(p + "ffn_gate.weight", E, F));
  } else {
    w.ffn_up_b = std::move(up_b);
    w.ffn_down_b = std::move(down_b);
  }
  HEARTH_ASSIGN_OR_RETURN(w.out_norm, ld.vector(p + "layer_output_norm.weight", E));
  HEARTH_ASSIGN_OR_RETURN(w.out_norm_b, ld.vector(p + "layer_output_norm.bias", E));
  return Status::ok();
}

// Token rows, token type 0, positions, the embedding norm and the rank head.
Status load_embeddings(TensorLoader& ld, const gguf::Archive& archive, const ModelHparams& hp,
                       const EncoderSpec& spec, ModelWeights& w) {
  const int64_t E = hp.n_embd;
  HEARTH_ASSIGN_OR_RETURN(w.token_embd, ld.row_matrix("token_embd.weight", E, hp.n_vocab));
  if (const gguf::TensorInfo* types = archive.find_tensor("token_types.weight")) {
    if (types->ne[1] < 1)
      return error(ErrorCode::kCorruptFile,
                   archive.primary().name() + ": tensor 'token_types.weight' has no rows");
    HEARTH_ASSIGN_OR_RETURN(WeightMatrix m, ld.row_matrix("token_types.weight", E, types->ne[1]));
    w.token_type0.resize(static_cast<size_t>(E));
    kernels::dequantize_row(m.type, m.data, w.token_type0.data(), E);
  }
  if (spec.positions) {
    HEARTH_ASSIGN_OR_RETURN(w.position_embd,
                            ld.row_matrix("position_embd.weight", E, hp.n_ctx_train));
  }
  HEARTH_ASSIGN_OR_RETURN(w.embd_norm, ld.vector("token_embd_norm.weight", E));
  HEARTH_ASSIGN_OR_RETURN(w.embd_norm_b, ld.vector("token_embd_norm.bias", E));
  if (spec.positions) {  // only bert has the classifier
    HEARTH_ASSIGN_OR_RETURN(w.cls, ld.row_matrix("cls.weight", E, E, true));
    HEARTH_ASSIGN_OR_RETURN(w.cls_b, ld.vector("cls.bias", E, true));
    HEARTH_ASSIGN_OR_RETURN(w.cls_out, ld.row_matrix("cls.output.weight", E, hp.n_cls_out, true));
    HEARTH_ASSIGN_OR_RETURN(w.cls_out_b, ld.vector("cls.output.bias", hp.n_cls_out, true));
  }
  return Status::ok();
}

Result<ModelPtr> load_encoder(std::shared_ptr<const gguf::Archive> archive, ModelHparams hp,
                              const EncoderSpec& spec, const engine::LoadOptions& options) {
  const gguf::TensorInfo* emb = archive->find_tensor("token_embd.weight");
  if (emb == nullptr)
    return error(ErrorCode::kCorruptFile,
                 archive->primary().name() + ": required tensor 'token_embd.weight' is missing");
  if (hp.n_vocab == 0) hp.n_vocab = static_cast<int32_t>(std::min<int64_t>(emb->ne[1], INT32_MAX));
  if (!(hp.norm_eps > 0.0f) || !std::isfinite(hp.norm_eps))
    return error(ErrorCode::kCorruptFile,
                 fmt::format("{}: '{}.attention.layer_norm_epsilon' is missing or not a positive "
                             "number",
                             archive->primary().name(), hp.arch));
  if (spec.positions && hp.n_ctx_train < 1)
    return error(ErrorCode::kCorruptFile,
                 fmt::format("{}: '{}.context_length' must be positive (it sizes the position "
                             "embeddings)",
                             archive->primary().name(), hp.arch));
  hp.causal = false;  // an encoder attends to its whole input, whatever the key says
  TensorLoader ld(*archive, options);
  ModelWeights w;
  HEARTH_RETURN_IF_ERROR(load_embeddings(ld, *archive, hp, spec, w));
  w.layers.resize(static_cast<size_t>(hp.n_layer));
  for (int32_t il = 0; il < hp.n_layer; ++il)
    HEARTH_RETURN_IF_ERROR(load_block(ld, hp, spec, il, w.layers[static_cast<size_t>(il)]));
  HEARTH_RETURN_IF_ERROR(ld.check_all_used());
  w.repacked = ld.take_repacked();
  return ModelPtr(
      std::make_shared<EncoderModel>(std::move(archive), std::move(hp), std::move(w), spec));
}

}  // namespace

Result<ModelPtr> load_bert(std::shared_ptr<const gguf::Archive> archive, ModelHparams hp,
                           const engine::LoadOptions& options) {
  return load_encoder(std::move(archive), std::move(hp), EncoderSpec{}, options);
}

Result<ModelPtr> load_nomic_bert(std::shared_ptr<const gguf::Archive> archive, ModelHparams hp,
                                 const engine::LoadOptions& options) {
  EncoderSpec spec;
  spec.positions = false;
  spec.swiglu = true;
  return load_encoder(std::move(archive), std::move(hp), spec, options);
}

}  // namespace hearth::models
