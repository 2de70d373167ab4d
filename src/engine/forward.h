// What one forward call hands to the layers, and the building blocks every llama-family
// architecture is made of. All activations are f32, one row per batch token.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "base/thread_pool.h"
#include "engine/batch.h"
#include "engine/kv_cache.h"
#include "engine/ops.h"
#include "engine/weights.h"

namespace hearth::engine {

class Model;

// Per-call working memory, sized for the largest batch seen so far and reused.
struct Scratch {
  std::vector<float> x;                   // [T][E] residual stream
  std::vector<float> cur;                 // [T][E] normalized input of a block
  std::vector<float> out;                 // [T][E] block output before the residual add
  std::vector<float> q;                   // [T][H*D]
  std::vector<float> k;                   // [T][Hkv*D]
  std::vector<float> v;                   // [T][Hkv*Dv]
  std::vector<float> attn;                // [T][H*Dv] attention output before Wo
  std::vector<float> gate;                // [T][F]
  std::vector<float> up;                  // [T][F]
  std::vector<float> rope_cos, rope_sin;  // [T][R/2]
};

struct ForwardState {
  const Model& model;
  KvCache& kv;
  TensorType type_k;  // element types of the cached rows
  TensorType type_v;
  kernels::MatmulPrecision precision;
  ThreadPool& pool;
  std::span<const BatchToken> tokens;
  Scratch& s;
  int64_t n_tokens() const { return static_cast<int64_t>(tokens.size()); }
};

struct AttentionOptions {
  ops::RopeKind rope = ops::RopeKind::kNorm;
  bool apply_rope = true;  // false on NoPE layers
  float kq_scale = 0.0f;   // 0: 1/sqrt(head_dim)
  // false (encoders): each token attends to every token of its sequence in the batch, not
  // only to those before it.
  bool causal = true;
};

// out[t] = norm(in[t]) * w for every batch row; `width` values per row.
void norm_rows(ForwardState& st, const float* in, const std::vector<float>& w, float* out,
               int64_t width);
// out[t] = LayerNorm(in[t]) * w + b for every batch row (encoders; eps = norm_eps).
void layer_norm_rows(ForwardState& st, const float* in, const std::vector<float>& w,
                     const std::vector<float>& b, float* out, int64_t width);
// out[t] = W in[t] (+ bias) for every batch row.
void project(ForwardState& st, const WeightMatrix& w, const std::vector<float>& bias,
             const float* in, float* out);
// Self-attention of block `il` on s.cur: projections (+ biases), optional per-head q/k
// norms, RoPE, K/V appended to the cache, causal attention over each token's own
// sequence, output projection. Result in s.out.
void self_attention(ForwardState& st, int32_t il, const LayerWeights& w,
                    const AttentionOptions& opt);
// SwiGLU feed-forward on s.cur; result in s.out.
void swiglu_ffn(ForwardState& st, const LayerWeights& w);
// GELU feed-forward (encoders): s.out = W_down gelu(W_up s.cur + b_up) + b_down.
void gelu_ffn(ForwardState& st, const LayerWeights& w);
// s.x += s.out
void add_residual(ForwardState& st);

}  // namespace hearth::engine
