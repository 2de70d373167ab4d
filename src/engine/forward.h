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
  std::vector<float> x;                           // [T][E] residual stream
  std::vector<float> cur;                         // [T][E] normalized input of a block
  std::vector<float> out;                         // [T][E] block output before the residual add
  std::vector<float> q;                           // [T][H*D]
  std::vector<float> k;                           // [T][Hkv*D]
  std::vector<float> v;                           // [T][Hkv*Dv]
  std::vector<float> attn;                        // [T][H*Dv] attention output before Wo
  std::vector<float> gate;                        // [T][F]
  std::vector<float> up;                          // [T][F] ([T][2F] for a fused gate-up matrix)
  std::vector<float> rope_cos, rope_sin;          // [T][R/2]
  std::vector<float> rope_cos_swa, rope_sin_swa;  // [T][R/2] sliding-window layers' rope
  std::vector<float> conv;                        // [T][3E] lfm2's B, C, x rows
  std::vector<BatchToken> kept_tokens;            // the rows left after pruning
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
  // Set for the last layer when only some rows' outputs are wanted: the batch indices to
  // keep. self_attention() stores every row's K and V and attends for every row, then drops
  // the others from tokens, s.x, s.cur and s.attn, so the rest of the layer runs on the kept
  // rows only (each row's arithmetic is unchanged).
  const std::vector<int32_t>* keep_rows = nullptr;
  int64_t n_tokens() const { return static_cast<int64_t>(tokens.size()); }
};

enum class QkNorm { kHeadRms, kRowLayerNorm, kRowRms };

struct AttentionOptions {
  ops::RopeKind rope = ops::RopeKind::kNorm;
  bool apply_rope = true;  // false on NoPE layers
  bool swa_rope = false;   // the sliding-window layers' rope table (hparams.rope_swa)
  // What the q/k norms (where the layer has them) are: per-head RMSNorms (qwen3, gemma3),
  // LayerNorms with biases over the whole q and k rows (jina-bert-v2), or RMSNorms over the
  // whole rows (olmo2).
  QkNorm qk_norm = QkNorm::kHeadRms;
  float kq_scale = 0.0f;  // 0: 1/sqrt(head_dim)
  // false (encoders): each token attends to every token of its sequence in the batch, not
  // only to those before it.
  bool causal = true;
  // Non-causal only. >= 0: a symmetric sliding window, keys at most this many positions
  // before or after the query (modern-bert's local layers: n_swa / 2).
  int32_t half_window = -1;
  // Causal only. > 0: a sliding window, each query sees its last `window` positions (itself
  // included; gemma2/3's local layers).
  int32_t window = 0;
  // Causal only. > 0: attention logit soft-capping, score = softcap * tanh(score / softcap)
  // (gemma2).
  float softcap = 0.0f;
  // != 0: q is multiplied by this after RoPE and the scores are not scaled again (gemma's
  // query pre-scaling; the reference rounds the scaled q for the K cache's dot).
  float q_scale = 0.0f;
  // != 0: attention temperature tuning (mistral3): after RoPE, q of a token at position p is
  // multiplied by 1 + temp_scale * ln(floor(p / temp_floor) + 1).
  float temp_scale = 0.0f;
  int32_t temp_floor = 1;
  // Non-causal only. > 0: ALiBi (jina-bert-v2), each head's scores biased by
  // slope_h * -|query position - key position|.
  float max_alibi_bias = 0.0f;
  // Causal only. Non-null (gpt-oss): each head's attention sink [H], a logit that joins its
  // softmax's denominator with no value row.
  const float* sinks = nullptr;
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
// GELU feed-forward (encoders): s.out = W_down gelu(W_up s.cur + b_up) + b_down.
void gelu_ffn(ForwardState& st, const LayerWeights& w);
enum class GluActivation { kGelu, kSilu, kRelu };
// Gated feed-forward on s.cur; result in s.out: W_down (act(g) * u) + b_down, where g and u
// are the separate gate and up projections (+ biases), or the first and second halves of a
// fused ffn_up of 2F rows (+ its bias) when there is no ffn_gate (GEGLU encoders, phi3).
// kSilu is the llama family's SwiGLU.
void glu_ffn(ForwardState& st, const LayerWeights& w, GluActivation act);
// s.x += s.out
void add_residual(ForwardState& st);
// lfm2's gated short convolution of block il on s.cur, result in s.out: in_proj gives B, C
// and x ([T][3E]); each token's B*x row [E] is cached as the layer's f32 state row at its
// position; the depthwise causal convolution over the token's last L = attention_window(il)
// rows (positions before 0 are zeros), times C, through out_proj.
void short_conv(ForwardState& st, int32_t il, const LayerWeights& w);
// For a last layer that computed every row: keeps rows *st.keep_rows (ascending batch
// indices) of tokens, s.x, s.cur and `rows` ([T][width]), and clears keep_rows.
void prune_rows(ForwardState& st, std::vector<float>& rows, int64_t width);
// Deepstack (qwen3vl), after layer il < n_deepstack: each media row's slice il + 1 of its
// input embedding (BatchToken::embd [n_embd_inp()]) is added to its hidden state; token rows
// add nothing (the reference pads their input with zeros).
void add_deepstack(ForwardState& st, int32_t il);

}  // namespace hearth::engine
