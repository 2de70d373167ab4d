#include "engine/forward.h"

#include <algorithm>
#include <cmath>
#include <span>
#include <vector>

#include "base/half.h"
#include "engine/attention.h"
#include "engine/model.h"
#include "kernels/attention_ops.h"
#include "kernels/matmul.h"
#include "kernels/quant.h"

namespace hearth::engine {

namespace {

// Runs fn(t) for every batch row, on the pool when there are enough rows to share (a row's
// result never depends on which thread computes it).
template <class Fn>
void for_rows(ForwardState& st, const Fn& fn) {
  constexpr int64_t kMinRowsToShare = 8;
  if (st.n_tokens() < kMinRowsToShare) {
    for (int64_t t = 0; t < st.n_tokens(); ++t) fn(t);
    return;
  }
  st.pool.parallel_for(st.n_tokens(), [&](int64_t begin, int64_t end, int) {
    for (int64_t t = begin; t < end; ++t) fn(t);
  });
}

}  // namespace

void norm_rows(ForwardState& st, const float* in, const std::vector<float>& w, float* out,
               int64_t width) {
  const float eps = st.model.hparams().rms_eps;
  for_rows(
      st, [&](int64_t t) { ops::rms_norm(in + t * width, w.data(), out + t * width, width, eps); });
}

void layer_norm_rows(ForwardState& st, const float* in, const std::vector<float>& w,
                     const std::vector<float>& b, float* out, int64_t width) {
  const float eps = st.model.hparams().norm_eps;
  for_rows(st, [&](int64_t t) {
    ops::layer_norm(in + t * width, w.data(), b.empty() ? nullptr : b.data(), out + t * width,
                    width, eps);
  });
}

void project(ForwardState& st, const WeightMatrix& w, const std::vector<float>& bias,
             const float* in, float* out) {
  kernels::matmul(w, in, st.n_tokens(), out, st.pool, st.precision);
  if (bias.empty()) return;
  for_rows(st, [&](int64_t t) { ops::add_inplace(out + t * w.n_rows, bias.data(), w.n_rows); });
}

void gelu_ffn(ForwardState& st, const LayerWeights& w) {
  const int64_t n_ff = w.ffn_up.n_rows;
  project(st, w.ffn_up, w.ffn_up_b, st.s.cur.data(), st.s.up.data());
  float* up = st.s.up.data();
  st.pool.parallel_for(st.n_tokens(), [=](int64_t begin, int64_t end, int) {
    ops::gelu(up + begin * n_ff, up + begin * n_ff, (end - begin) * n_ff);
  });
  project(st, w.ffn_down, w.ffn_down_b, st.s.up.data(), st.s.out.data());
}

void glu_ffn(ForwardState& st, const LayerWeights& w, GluActivation act) {
  const int64_t n_ff = w.ffn_down.n_cols;
  const bool fused = !present(w.ffn_gate);
  // Gate and up rows: [T][F] each in s.gate / s.up, or [T][2F] (gate half, up half) in s.up.
  project(st, w.ffn_up, w.ffn_up_b, st.s.cur.data(), st.s.up.data());
  if (!fused) project(st, w.ffn_gate, w.ffn_gate_b, st.s.cur.data(), st.s.gate.data());
  const int64_t up_width = fused ? 2 * n_ff : n_ff;
  float* gate = st.s.gate.data();
  float* up = st.s.up.data();
  st.pool.parallel_for(st.n_tokens(), [=](int64_t begin, int64_t end, int) {
    for (int64_t t = begin; t < end; ++t) {
      const float* g = fused ? up + t * up_width : gate + t * n_ff;
      const float* u = up + t * up_width + (fused ? n_ff : 0);
      float* y = gate + t * n_ff;  // may alias g (element by element)
      switch (act) {
        case GluActivation::kGelu:
          ops::gelu(g, y, n_ff);
          for (int64_t i = 0; i < n_ff; ++i) y[i] *= u[i];
          break;
        case GluActivation::kSilu:
          ops::swiglu(g, u, y, n_ff);
          break;
        case GluActivation::kRelu:
          for (int64_t i = 0; i < n_ff; ++i) y[i] = (g[i] > 0.0f ? g[i] : 0.0f) * u[i];
          break;
      }
    }
  });
  project(st, w.ffn_down, w.ffn_down_b, st.s.gate.data(), st.s.out.data());
}

void add_residual(ForwardState& st) {
  const int64_t E = st.model.hparams().n_embd;
  float* x = st.s.x.data();
  const float* out = st.s.out.data();
  for_rows(st, [&](int64_t t) { ops::add_inplace(x + t * E, out + t * E, E); });
}

void add_deepstack(ForwardState& st, int32_t il) {
  const int64_t E = st.model.hparams().n_embd;
  float* x = st.s.x.data();
  for (int64_t t = 0; t < st.n_tokens(); ++t) {
    const float* embd = st.tokens[static_cast<size_t>(t)].embd;
    if (embd != nullptr) ops::add_inplace(x + t * E, embd + (il + 1) * E, E);
  }
}

namespace {

// Per-head RMSNorm (qwen3, gemma3): each head vector of `dim` values is normalized on its own.
void norm_heads(ForwardState& st, float* rows, int32_t n_heads, int32_t dim,
                const std::vector<float>& w) {
  const float eps = st.model.hparams().rms_eps;
  const int64_t n = st.n_tokens() * n_heads;
  for (int64_t i = 0; i < n; ++i) ops::rms_norm(rows + i * dim, w.data(), rows + i * dim, dim, eps);
}

void apply_rope(ForwardState& st, float* rows, int32_t n_heads, int32_t dim, ops::RopeKind kind,
                bool swa) {
  const int32_t n_rot = st.model.hparams().n_rot;
  const int32_t half = n_rot / 2;
  const float* cos_table = (swa ? st.s.rope_cos_swa : st.s.rope_cos).data();
  const float* sin_table = (swa ? st.s.rope_sin_swa : st.s.rope_sin).data();
  for (int64_t t = 0; t < st.n_tokens(); ++t) {
    const float* c = cos_table + t * half;
    const float* s = sin_table + t * half;
    for (int32_t h = 0; h < n_heads; ++h)
      ops::rope_apply(kind, rows + (t * n_heads + h) * dim, c, s, n_rot);
  }
}

// Appends this block's K and V rows of every batch token to the cache, converted to the
// cache's element types.
void store_kv(ForwardState& st, int32_t il) {
  const auto& hp = st.model.hparams();
  const int64_t kw = hp.n_embd_k(), vw = hp.n_embd_v();
  for (int64_t t = 0; t < st.n_tokens(); ++t) {
    const BatchToken& bt = st.tokens[static_cast<size_t>(t)];
    kernels::quantize_row(st.type_k, st.s.k.data() + t * kw, st.kv.k_row(il, bt.seq, bt.pos), kw);
    kernels::quantize_row(st.type_v, st.s.v.data() + t * vw, st.kv.v_row(il, bt.seq, bt.pos), vw);
  }
}

// q *= 1 + temp_scale * ln(floor(p / temp_floor) + 1) per token, the factor rounded to f32
// from the f64 expression as the reference computes its input.
void scale_q_by_position(ForwardState& st, const AttentionOptions& opt) {
  const int64_t width = st.model.hparams().n_embd_q();
  for (int64_t t = 0; t < st.n_tokens(); ++t) {
    const float pos = static_cast<float>(st.tokens[static_cast<size_t>(t)].pos);
    const float steps = std::floor(pos / static_cast<float>(opt.temp_floor));
    const auto factor = static_cast<float>(
        std::log(static_cast<double>(steps) + 1.0) * static_cast<double>(opt.temp_scale) + 1.0);
    float* q = st.s.q.data() + t * width;
    for (int64_t i = 0; i < width; ++i) q[i] *= factor;
  }
}

}  // namespace

void self_attention(ForwardState& st, int32_t il, const LayerWeights& w,
                    const AttentionOptions& opt) {
  const auto& hp = st.model.hparams();
  const int32_t H = hp.n_head, Hkv = hp.n_head_kv, D = hp.head_dim;
  project(st, w.wq, w.bq, st.s.cur.data(), st.s.q.data());
  project(st, w.wk, w.bk, st.s.cur.data(), st.s.k.data());
  project(st, w.wv, w.bv, st.s.cur.data(), st.s.v.data());
  if (opt.qk_norm == QkNorm::kRowLayerNorm) {
    if (!w.q_norm.empty())
      layer_norm_rows(st, st.s.q.data(), w.q_norm, w.q_norm_b, st.s.q.data(), hp.n_embd_q());
    if (!w.k_norm.empty())
      layer_norm_rows(st, st.s.k.data(), w.k_norm, w.k_norm_b, st.s.k.data(), hp.n_embd_k());
  } else if (opt.qk_norm == QkNorm::kRowRms) {
    if (!w.q_norm.empty()) norm_rows(st, st.s.q.data(), w.q_norm, st.s.q.data(), hp.n_embd_q());
    if (!w.k_norm.empty()) norm_rows(st, st.s.k.data(), w.k_norm, st.s.k.data(), hp.n_embd_k());
  } else {
    if (!w.q_norm.empty()) norm_heads(st, st.s.q.data(), H, D, w.q_norm);
    if (!w.k_norm.empty()) norm_heads(st, st.s.k.data(), Hkv, D, w.k_norm);
  }
  if (opt.apply_rope) {
    apply_rope(st, st.s.q.data(), H, D, opt.rope, opt.swa_rope);
    apply_rope(st, st.s.k.data(), Hkv, D, opt.rope, opt.swa_rope);
  }
  if (opt.temp_scale != 0.0f) scale_q_by_position(st, opt);
  store_kv(st, il);
  float scale = opt.kq_scale != 0.0f ? opt.kq_scale : 1.0f / std::sqrt(static_cast<float>(D));
  if (opt.q_scale != 0.0f) {
    float* q = st.s.q.data();
    const int64_t n = st.n_tokens() * hp.n_embd_q();
    for (int64_t i = 0; i < n; ++i) q[i] *= opt.q_scale;
    scale = 1.0f;
  }
  attend_all(st, il, scale, opt);
  if (st.keep_rows != nullptr) prune_rows(st, st.s.attn, int64_t{hp.n_head} * hp.head_dim_v);
  project(st, w.wo, w.bo, st.s.attn.data(), st.s.out.data());
}

void prune_rows(ForwardState& st, std::vector<float>& rows, int64_t width) {
  const auto& hp = st.model.hparams();
  const std::vector<int32_t>& keep = *st.keep_rows;
  const int64_t E = hp.n_embd;
  const auto move_rows = [&](std::vector<float>& v, int64_t w) {
    for (size_t r = 0; r < keep.size(); ++r) {
      const auto to = static_cast<int64_t>(r);
      if (keep[r] != to) std::copy_n(v.data() + keep[r] * w, w, v.data() + to * w);
    }
  };
  move_rows(st.s.x, E);
  move_rows(st.s.cur, E);
  if (&rows != &st.s.x && &rows != &st.s.cur) move_rows(rows, width);
  std::vector<BatchToken>& kept = st.s.kept_tokens;
  kept.clear();
  for (int32_t i : keep) kept.push_back(st.tokens[static_cast<size_t>(i)]);
  st.tokens = std::span<const BatchToken>(kept);
  st.keep_rows = nullptr;
}

}  // namespace hearth::engine
