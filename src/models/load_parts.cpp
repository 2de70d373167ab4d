#include "models/load_parts.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

namespace hearth::models::parts {

using engine::LayerWeights;
using engine::ModelHparams;
using engine::TensorLoader;
using engine::WeightMatrix;

WeightMatrix row_range(const WeightMatrix& m, int64_t first, int64_t n) {
  WeightMatrix v = m;
  v.n_rows = n;
  v.data = static_cast<const uint8_t*>(m.data) + static_cast<size_t>(first) * m.row_stride;
  return v;
}

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

Status prepare_encoder_hparams(const gguf::Archive& archive, ModelHparams& hp) {
  HEARTH_RETURN_IF_ERROR(settle_vocab(archive, hp));
  if (!(hp.norm_eps > 0.0f) || !std::isfinite(hp.norm_eps))
    return error(ErrorCode::kCorruptFile,
                 fmt::format("{}: '{}.attention.layer_norm_epsilon' is missing or not a positive "
                             "number",
                             archive.primary().name(), hp.arch));
  hp.causal = false;
  return Status::ok();
}

}  // namespace hearth::models::parts
