// lfm2: LiquidAI's LFM2 / LFM2.5 (the text model of LFM2-VL). A hybrid of pre-norm blocks:
// most mix tokens with a gated short convolution (engine::short_conv: in_proj to B, C and x,
// C * causal depthwise convolution of B*x over the last <arch>.shortconv.l_cache positions,
// out_proj), a few with GQA attention (per-head q/k RMSNorms, NeoX RoPE); each then runs a
// SwiGLU FFN. The zeros of the per-layer <arch>.attention.head_count_kv mark the convolution
// layers. Their state is each token's B*x row, cached as a windowed layer of window l_cache.
// With <arch>.attention.sliding_window the attention layers attend within that window.
// The output norm is named token_embd_norm.
#include <fmt/format.h>

#include "engine/forward.h"
#include "engine/model.h"
#include "models/architectures.h"
#include "models/llama_family.h"
#include "models/load_parts.h"

namespace hearth::models {

namespace {

using engine::LayerWeights;
using engine::ModelHparams;
using engine::TensorLoader;

class Lfm2Model : public engine::Model {
 public:
  Lfm2Model(std::shared_ptr<const gguf::Archive> archive, ModelHparams hparams,
            engine::ModelWeights weights, int32_t l_cache, int32_t n_swa)
      : Model(std::move(archive), std::move(hparams), std::move(weights)),
        l_cache_(l_cache),
        n_swa_(n_swa) {}

  int32_t attention_window(int32_t il) const override {
    return hparams().attends(il) ? n_swa_ : l_cache_;
  }
  int32_t state_row_bytes(int32_t il) const override {
    return hparams().attends(il) ? 0 : hparams().n_embd * static_cast<int32_t>(sizeof(float));
  }

  void forward_layer(int32_t il, engine::ForwardState& st) const override {
    const LayerWeights& w = weights().layers[static_cast<size_t>(il)];
    const int64_t E = hparams().n_embd;
    engine::norm_rows(st, st.s.x.data(), w.attn_norm, st.s.cur.data(), E);
    if (hparams().attends(il)) {
      engine::AttentionOptions opt;
      opt.rope = engine::ops::RopeKind::kNeox;
      opt.window = n_swa_;
      engine::self_attention(st, il, w, opt);
    } else {
      engine::short_conv(st, il, w);
    }
    engine::add_residual(st);
    engine::norm_rows(st, st.s.x.data(), w.ffn_norm, st.s.cur.data(), E);
    engine::glu_ffn(st, w, engine::GluActivation::kSilu);
    engine::add_residual(st);
  }

 private:
  int32_t l_cache_;
  int32_t n_swa_;
};

Status load_attention(TensorLoader& ld, const ModelHparams& hp, const std::string& p,
                      LayerWeights& w) {
  const int64_t E = hp.n_embd;
  HEARTH_ASSIGN_OR_RETURN(w.wq, ld.matrix(p + "attn_q.weight", E, hp.n_embd_q()));
  HEARTH_ASSIGN_OR_RETURN(w.wk, ld.matrix(p + "attn_k.weight", E, hp.n_embd_k()));
  HEARTH_ASSIGN_OR_RETURN(w.wv, ld.matrix(p + "attn_v.weight", E, hp.n_embd_v()));
  HEARTH_ASSIGN_OR_RETURN(w.wo, ld.matrix(p + "attn_output.weight", hp.n_embd_q(), E));
  HEARTH_ASSIGN_OR_RETURN(w.q_norm, ld.vector(p + "attn_q_norm.weight", hp.head_dim));
  HEARTH_ASSIGN_OR_RETURN(w.k_norm, ld.vector(p + "attn_k_norm.weight", hp.head_dim));
  return Status::ok();
}

Status load_conv(TensorLoader& ld, const ModelHparams& hp, int32_t l_cache, const std::string& p,
                 LayerWeights& w) {
  const int64_t E = hp.n_embd;
  HEARTH_ASSIGN_OR_RETURN(w.conv_in, ld.matrix(p + "shortconv.in_proj.weight", E, 3 * E));
  HEARTH_ASSIGN_OR_RETURN(w.conv_out, ld.matrix(p + "shortconv.out_proj.weight", E, E));
  // GGUF [L, E]: each channel's L taps.
  HEARTH_ASSIGN_OR_RETURN(auto taps, ld.vectors(p + "shortconv.conv.weight", l_cache, E));
  w.conv_kernel.reserve(static_cast<size_t>(E * l_cache));
  for (const auto& channel : taps)
    w.conv_kernel.insert(w.conv_kernel.end(), channel.begin(), channel.end());
  return Status::ok();
}

Status load_layer(TensorLoader& ld, const ModelHparams& hp, int32_t l_cache, int32_t il,
                  LayerWeights& w) {
  const std::string p = fmt::format("blk.{}.", il);
  const int64_t E = hp.n_embd, F = hp.n_ff;
  HEARTH_ASSIGN_OR_RETURN(w.attn_norm, ld.vector(p + "attn_norm.weight", E));
  if (hp.attends(il)) {
    HEARTH_RETURN_IF_ERROR(load_attention(ld, hp, p, w));
  } else {
    HEARTH_RETURN_IF_ERROR(load_conv(ld, hp, l_cache, p, w));
  }
  HEARTH_ASSIGN_OR_RETURN(w.ffn_norm, ld.vector(p + "ffn_norm.weight", E));
  HEARTH_ASSIGN_OR_RETURN(w.ffn_gate, ld.matrix(p + "ffn_gate.weight", E, F));
  HEARTH_ASSIGN_OR_RETURN(w.ffn_up, ld.matrix(p + "ffn_up.weight", E, F));
  HEARTH_ASSIGN_OR_RETURN(w.ffn_down, ld.matrix(p + "ffn_down.weight", F, E));
  return Status::ok();
}

}  // namespace

Result<ModelPtr> load_lfm2(std::shared_ptr<const gguf::Archive> archive, ModelHparams hp,
                           const engine::LoadOptions& options) {
  const gguf::File& f = archive->primary();
  const auto corrupt = [&](const std::string& what) {
    return error(ErrorCode::kCorruptFile, fmt::format("{}: {}", f.name(), what));
  };
  // The reference requires the key; the short convolution needs at least 2 taps.
  HEARTH_ASSIGN_OR_RETURN(int64_t l_cache,
                          engine::read_u32_key(f, hp.arch + ".shortconv.l_cache", 0));
  if (l_cache < 2 || l_cache > 64)
    return corrupt(
        fmt::format("{}.shortconv.l_cache {} is missing or outside [2, 64]", hp.arch, l_cache));
  if (hp.n_embd_q() != hp.n_embd || hp.head_dim_v != hp.head_dim)
    return corrupt(
        "lfm2's attention needs head_count * head size = embedding length and equal "
        "key and value sizes");
  HEARTH_ASSIGN_OR_RETURN(int32_t n_swa, read_window(f, hp.arch, 0));
  HEARTH_RETURN_IF_ERROR(parts::settle_vocab(*archive, hp));
  TensorLoader ld(*archive, options);
  engine::ModelWeights w;
  const int64_t E = hp.n_embd, V = hp.n_vocab;
  HEARTH_ASSIGN_OR_RETURN(w.token_embd, ld.row_matrix("token_embd.weight", E, V));
  HEARTH_ASSIGN_OR_RETURN(w.output_norm, ld.vector("token_embd_norm.weight", E));
  HEARTH_ASSIGN_OR_RETURN(w.output, ld.matrix("output.weight", E, V, /*optional=*/true));
  if (!engine::present(w.output)) w.output = w.token_embd;  // tied embeddings
  w.layers.resize(static_cast<size_t>(hp.n_layer));
  for (int32_t il = 0; il < hp.n_layer; ++il)
    HEARTH_RETURN_IF_ERROR(
        load_layer(ld, hp, static_cast<int32_t>(l_cache), il, w.layers[static_cast<size_t>(il)]));
  HEARTH_RETURN_IF_ERROR(ld.check_all_used());
  w.repacked = ld.take_repacked();
  return ModelPtr(std::make_shared<Lfm2Model>(std::move(archive), std::move(hp), std::move(w),
                                              static_cast<int32_t>(l_cache), n_swa));
}

}  // namespace hearth::models
