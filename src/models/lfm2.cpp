// lfm2: LiquidAI's LFM2 / LFM2.5 (the text model of LFM2-VL). A hybrid of pre-norm blocks:
// most mix tokens with a gated short convolution (engine::short_conv: in_proj to B, C and x,
// C * causal depthwise convolution of B*x over the last <arch>.shortconv.l_cache positions,
// out_proj), a few with GQA attention (per-head q/k RMSNorms, NeoX RoPE); each then runs a
// SwiGLU FFN. The zeros of the per-layer <arch>.attention.head_count_kv mark the convolution
// layers. Their state is each token's B*x row, cached as a windowed layer of window l_cache.
// With <arch>.attention.sliding_window the attention layers attend within that window.
// The output norm is named token_embd_norm.
// lfm2moe (LFM2-8B-A1B and the like): the same blocks, the FFNs after the first
// <arch>.leading_dense_block_count layers routed to experts by sigmoid gating with a
// per-expert selection bias (exp_probs_b), the k weights normalized.
#include <fmt/format.h>

#include "engine/moe.h"

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

// lfm2moe's routed layers: each one's selection bias [n_expert] (empty on dense layers).
using SelectionBiases = std::vector<std::vector<float>>;

class Lfm2Model : public engine::Model {
 public:
  Lfm2Model(std::shared_ptr<const gguf::Archive> archive, ModelHparams hparams,
            engine::ModelWeights weights, int32_t l_cache, int32_t n_swa,
            SelectionBiases selection_biases)
      : Model(std::move(archive), std::move(hparams), std::move(weights)),
        l_cache_(l_cache),
        n_swa_(n_swa),
        selection_biases_(std::move(selection_biases)) {}

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
    if (w.moe.present()) {
      engine::MoeOptions moe;
      moe.n_used = hparams().n_expert_used;
      moe.norm_weights = true;
      moe.gating = engine::MoeGating::kSigmoid;
      moe.selection_bias = selection_biases_[static_cast<size_t>(il)].data();
      engine::moe_ffn(st, w, moe);
    } else {
      engine::glu_ffn(st, w, engine::GluActivation::kSilu);
    }
    engine::add_residual(st);
  }

 private:
  int32_t l_cache_;
  int32_t n_swa_;
  SelectionBiases selection_biases_;
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

// lfm2moe's routed FFN: the router, the experts' 3-D tensors and the selection bias.
Status load_experts(TensorLoader& ld, const ModelHparams& hp, const std::string& p, LayerWeights& w,
                    std::vector<float>& selection_bias) {
  const int64_t E = hp.n_embd, X = hp.n_expert, Fe = hp.n_ff_exp;
  engine::MoeWeights& m = w.moe;
  HEARTH_ASSIGN_OR_RETURN(m.router, ld.matrix(p + "ffn_gate_inp.weight", E, X));
  HEARTH_ASSIGN_OR_RETURN(m.gate, ld.matrices(p + "ffn_gate_exps.weight", E, Fe, X));
  HEARTH_ASSIGN_OR_RETURN(m.up, ld.matrices(p + "ffn_up_exps.weight", E, Fe, X));
  HEARTH_ASSIGN_OR_RETURN(m.down, ld.matrices(p + "ffn_down_exps.weight", Fe, E, X));
  HEARTH_ASSIGN_OR_RETURN(selection_bias, ld.vector(p + "exp_probs_b.bias", X));
  return Status::ok();
}

// A layer: its token mixer, then its dense or (from n_dense_lead on, lfm2moe) routed FFN.
Status load_layer(TensorLoader& ld, const ModelHparams& hp, int32_t l_cache, int32_t n_dense_lead,
                  int32_t il, LayerWeights& w, std::vector<float>& selection_bias) {
  const std::string p = fmt::format("blk.{}.", il);
  const int64_t E = hp.n_embd, F = hp.n_ff;
  HEARTH_ASSIGN_OR_RETURN(w.attn_norm, ld.vector(p + "attn_norm.weight", E));
  if (hp.attends(il)) {
    HEARTH_RETURN_IF_ERROR(load_attention(ld, hp, p, w));
  } else {
    HEARTH_RETURN_IF_ERROR(load_conv(ld, hp, l_cache, p, w));
  }
  HEARTH_ASSIGN_OR_RETURN(w.ffn_norm, ld.vector(p + "ffn_norm.weight", E));
  if (il >= n_dense_lead) return load_experts(ld, hp, p, w, selection_bias);
  HEARTH_ASSIGN_OR_RETURN(w.ffn_gate, ld.matrix(p + "ffn_gate.weight", E, F));
  HEARTH_ASSIGN_OR_RETURN(w.ffn_up, ld.matrix(p + "ffn_up.weight", E, F));
  HEARTH_ASSIGN_OR_RETURN(w.ffn_down, ld.matrix(p + "ffn_down.weight", F, E));
  return Status::ok();
}

}  // namespace

namespace {

// lfm2moe's keys: the leading dense layers (0 when absent), the experts' width (required)
// and their gating function (required; the reference's 2, sigmoid, is the one lfm2moe uses).
Result<int32_t> read_moe_keys(const gguf::File& f, ModelHparams& hp) {
  const auto corrupt = [&](const std::string& what) {
    return error(ErrorCode::kCorruptFile, fmt::format("{}: {}", f.name(), what));
  };
  if (hp.n_expert <= 0 || hp.n_expert_used <= 0 || hp.n_expert_used > hp.n_expert)
    return corrupt(hp.arch + " needs expert_count and expert_used_count (at most the count)");
  if (hp.n_ff_exp <= 0) return corrupt(hp.arch + ".expert_feed_forward_length is missing");
  HEARTH_ASSIGN_OR_RETURN(int64_t gating,
                          engine::read_u32_key(f, hp.arch + ".expert_gating_func", 0));
  if (gating != 2)
    return error(ErrorCode::kUnsupported,
                 fmt::format("{}: {}.expert_gating_func {} is not supported (2, sigmoid)", f.name(),
                             hp.arch, gating));
  HEARTH_ASSIGN_OR_RETURN(int64_t lead,
                          engine::read_u32_key(f, hp.arch + ".leading_dense_block_count", 0));
  return static_cast<int32_t>(std::min<int64_t>(lead, hp.n_layer));
}

Result<ModelPtr> load_lfm2_model(std::shared_ptr<const gguf::Archive> archive, ModelHparams hp,
                                 const engine::LoadOptions& options, bool moe) {
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
  // The reference's non-causal variant (LFM2-ColBert embeddings) centres the convolution's
  // window; Hearth runs the causal models only.
  if (!hp.causal)
    return error(ErrorCode::kUnsupported,
                 fmt::format("{}: non-causal {} (attention.causal = false) is not supported",
                             f.name(), hp.arch));
  HEARTH_ASSIGN_OR_RETURN(int32_t n_swa, read_window(f, hp.arch, 0));
  int32_t n_dense_lead = hp.n_layer;
  if (moe) {
    HEARTH_ASSIGN_OR_RETURN(n_dense_lead, read_moe_keys(f, hp));
  }
  HEARTH_RETURN_IF_ERROR(parts::settle_vocab(*archive, hp));
  TensorLoader ld(*archive, options);
  engine::ModelWeights w;
  const int64_t E = hp.n_embd, V = hp.n_vocab;
  HEARTH_ASSIGN_OR_RETURN(w.token_embd, ld.row_matrix("token_embd.weight", E, V));
  HEARTH_ASSIGN_OR_RETURN(w.output_norm, ld.vector("token_embd_norm.weight", E));
  HEARTH_ASSIGN_OR_RETURN(w.output, ld.matrix("output.weight", E, V, /*optional=*/true));
  if (!engine::present(w.output)) w.output = w.token_embd;  // tied embeddings
  w.layers.resize(static_cast<size_t>(hp.n_layer));
  SelectionBiases biases(static_cast<size_t>(hp.n_layer));
  for (int32_t il = 0; il < hp.n_layer; ++il)
    HEARTH_RETURN_IF_ERROR(load_layer(ld, hp, static_cast<int32_t>(l_cache), n_dense_lead, il,
                                      w.layers[static_cast<size_t>(il)],
                                      biases[static_cast<size_t>(il)]));
  HEARTH_RETURN_IF_ERROR(ld.check_all_used());
  w.repacked = ld.take_repacked();
  return ModelPtr(std::make_shared<Lfm2Model>(std::move(archive), std::move(hp), std::move(w),
                                              static_cast<int32_t>(l_cache), n_swa,
                                              std::move(biases)));
}

}  // namespace

Result<ModelPtr> load_lfm2(std::shared_ptr<const gguf::Archive> archive, ModelHparams hp,
                           const engine::LoadOptions& options) {
  return load_lfm2_model(std::move(archive), std::move(hp), options, false);
}

Result<ModelPtr> load_lfm2moe(std::shared_ptr<const gguf::Archive> archive, ModelHparams hp,
                              const engine::LoadOptions& options) {
  return load_lfm2_model(std::move(archive), std::move(hp), options, true);
}

}  // namespace hearth::models
