// modern-bert: ModernBERT and its derivatives (gte-modernbert, granite-embedding R2). A
// pre-norm encoder: token rows and a LayerNorm without bias; each block LayerNorm (none at
// layer 0) -> fused QKV without biases -> NeoX RoPE -> non-causal attention, on local layers
// only within a symmetric window of n_swa / 2 positions each side and with the local rope
// base -> residual; LayerNorm -> GEGLU (or SwiGLU / ReGLU per hidden_activation) FFN with a
// fused gate-up matrix [E, 2F] -> residual. A final LayerNorm gives the embedding. Layer il is
// local when il % pattern != 0 (the reference's dense-first pattern, default 3). Rerankers
// carry mean pooling -> cls [E, E] -> GELU -> cls.norm -> cls.output (engine/pooling.cpp).
#include <fmt/format.h>

#include <algorithm>

#include "engine/forward.h"
#include "engine/model.h"
#include "models/architectures.h"
#include "models/load_parts.h"

namespace hearth::models {

using engine::LayerWeights;
using engine::ModelHparams;
using engine::ModelWeights;
using engine::TensorLoader;
using engine::WeightMatrix;

namespace {

struct ModernBertSpec {
  int32_t n_swa = 0;        // attention.sliding_window; 0: every layer global
  uint32_t swa_period = 3;  // attention.sliding_window_pattern
  engine::GluActivation glu = engine::GluActivation::kGelu;

  bool is_local(int32_t il) const {
    return n_swa > 0 && (swa_period == 0 || static_cast<uint32_t>(il) % swa_period != 0);
  }
};

class ModernBertModel final : public engine::Model {
 public:
  ModernBertModel(std::shared_ptr<const gguf::Archive> archive, ModelHparams hparams,
                  ModelWeights weights, ModernBertSpec spec)
      : Model(std::move(archive), std::move(hparams), std::move(weights)), spec_(spec) {}

  void forward_layer(int32_t il, engine::ForwardState& st) const override {
    const LayerWeights& w = weights().layers[static_cast<size_t>(il)];
    const int64_t E = hparams().n_embd;
    if (w.attn_norm.empty()) {
      std::copy_n(st.s.x.data(), st.n_tokens() * E, st.s.cur.data());
    } else {
      engine::layer_norm_rows(st, st.s.x.data(), w.attn_norm, {}, st.s.cur.data(), E);
    }
    engine::AttentionOptions opt;
    opt.causal = false;
    opt.rope = engine::ops::RopeKind::kNeox;
    if (spec_.is_local(il)) {
      opt.half_window = spec_.n_swa / 2;
      opt.swa_rope = true;
    }
    engine::self_attention(st, il, w, opt);
    engine::add_residual(st);
    engine::layer_norm_rows(st, st.s.x.data(), w.ffn_norm, {}, st.s.cur.data(), E);
    engine::glu_ffn(st, w, spec_.glu);
    engine::add_residual(st);
  }

  // Token rows, then the embedding LayerNorm (no bias).
  void embed_input(engine::ForwardState& st) const override {
    Model::embed_input(st);
    engine::layer_norm_rows(st, st.s.x.data(), weights().embd_norm, {}, st.s.x.data(),
                            hparams().n_embd);
  }

  void final_hidden(const float* x, float* out) const override {
    engine::ops::layer_norm(x, weights().output_norm.data(), nullptr, out, hparams().n_embd,
                            hparams().norm_eps);
  }

 private:
  ModernBertSpec spec_;
};

// The window, its pattern and rope base, and the FFN's activation.
Result<ModernBertSpec> read_spec(const gguf::File& f, ModelHparams& hp) {
  const std::string a = hp.arch;
  ModernBertSpec spec;
  HEARTH_ASSIGN_OR_RETURN(int64_t n_swa,
                          engine::read_u32_key(f, a + ".attention.sliding_window", 0));
  spec.n_swa = static_cast<int32_t>(std::min<int64_t>(n_swa, INT32_MAX));
  // The reference reads the pattern only as a scalar (an array leaves the default).
  if (const gguf::Value* v = f.find(a + ".attention.sliding_window_pattern");
      v != nullptr && v->type() == gguf::ValueType::kU32)
    spec.swa_period = static_cast<uint32_t>(*v->as_uint());
  if (spec.n_swa > 0) {
    hp.rope_swa = hp.rope;
    hp.rope_swa->freq_scale = 1.0f;
    HEARTH_ASSIGN_OR_RETURN(hp.rope_swa->freq_base,
                            engine::read_f32_key(f, a + ".rope.freq_base_swa", 10000.0f));
  }
  if (const gguf::Value* act = f.find(a + ".hidden_activation")) {
    auto name = act->as_string();
    if (!name)
      return error(ErrorCode::kCorruptFile,
                   f.name() + ": " + a + ".hidden_activation must be a string");
    if (*name == "silu" || *name == "swish" || *name == "swiglu") {
      spec.glu = engine::GluActivation::kSilu;
    } else if (*name == "reglu") {
      spec.glu = engine::GluActivation::kRelu;
    } else if (*name == "relu") {
      // The reference maps "relu" to an ungated ReLU, which cannot feed ffn_down's F inputs
      // from ffn_up's 2F rows.
      return error(ErrorCode::kUnsupported,
                   fmt::format("{}: {}.hidden_activation 'relu' (ungated) does not fit the fused "
                               "gate-up FFN of this architecture",
                               f.name(), a));
    }  // gelu, geglu and anything else: GEGLU, as the reference falls back
  }
  return spec;
}

Status load_block(TensorLoader& ld, const ModelHparams& hp, int32_t il, LayerWeights& w) {
  const std::string p = fmt::format("blk.{}.", il);
  const int64_t E = hp.n_embd, F = hp.n_ff;
  HEARTH_ASSIGN_OR_RETURN(w.attn_norm, ld.vector(p + "attn_norm.weight", E, il == 0));
  const int64_t Eq = hp.n_embd_q(), Ek = hp.n_embd_k(), Ev = hp.n_embd_v();
  HEARTH_ASSIGN_OR_RETURN(WeightMatrix qkv, ld.row_matrix(p + "attn_qkv.weight", E, Eq + Ek + Ev));
  w.wq = parts::row_range(qkv, 0, Eq);
  w.wk = parts::row_range(qkv, Eq, Ek);
  w.wv = parts::row_range(qkv, Eq + Ek, Ev);
  HEARTH_ASSIGN_OR_RETURN(w.wo, ld.matrix(p + "attn_output.weight", hp.n_embd_v(), E));
  HEARTH_ASSIGN_OR_RETURN(w.ffn_norm, ld.vector(p + "ffn_norm.weight", E));
  HEARTH_ASSIGN_OR_RETURN(w.ffn_up, ld.matrix(p + "ffn_up.weight", E, 2 * F));
  HEARTH_ASSIGN_OR_RETURN(w.ffn_down, ld.matrix(p + "ffn_down.weight", F, E));
  return Status::ok();
}

Status load_globals(TensorLoader& ld, const ModelHparams& hp, ModelWeights& w) {
  const int64_t E = hp.n_embd;
  HEARTH_ASSIGN_OR_RETURN(w.token_embd, ld.row_matrix("token_embd.weight", E, hp.n_vocab));
  HEARTH_ASSIGN_OR_RETURN(w.embd_norm, ld.vector("token_embd_norm.weight", E));
  HEARTH_ASSIGN_OR_RETURN(w.output_norm, ld.vector("output_norm.weight", E));
  HEARTH_ASSIGN_OR_RETURN(w.cls, ld.row_matrix("cls.weight", E, E, true));
  HEARTH_ASSIGN_OR_RETURN(w.cls_norm, ld.vector("cls.norm.weight", E, true));
  HEARTH_ASSIGN_OR_RETURN(w.cls_out, ld.row_matrix("cls.output.weight", E, hp.n_cls_out, true));
  HEARTH_ASSIGN_OR_RETURN(w.cls_out_b, ld.vector("cls.output.bias", hp.n_cls_out, true));
  return Status::ok();
}

}  // namespace

Result<ModelPtr> load_modern_bert(std::shared_ptr<const gguf::Archive> archive, ModelHparams hp,
                                  const engine::LoadOptions& options) {
  HEARTH_RETURN_IF_ERROR(parts::prepare_encoder_hparams(*archive, hp));
  HEARTH_ASSIGN_OR_RETURN(ModernBertSpec spec, read_spec(archive->primary(), hp));
  hp.n_ff_up = 2 * hp.n_ff;
  TensorLoader ld(*archive, options);
  ModelWeights w;
  HEARTH_RETURN_IF_ERROR(load_globals(ld, hp, w));
  w.layers.resize(static_cast<size_t>(hp.n_layer));
  for (int32_t il = 0; il < hp.n_layer; ++il)
    HEARTH_RETURN_IF_ERROR(load_block(ld, hp, il, w.layers[static_cast<size_t>(il)]));
  HEARTH_RETURN_IF_ERROR(ld.check_all_used());
  w.repacked = ld.take_repacked();
  return ModelPtr(
      std::make_shared<ModernBertModel>(std::move(archive), std::move(hp), std::move(w), spec));
}

}  // namespace hearth::models
