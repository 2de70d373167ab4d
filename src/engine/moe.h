// The mixture-of-experts feed-forward (engine-internal): route each token to its top-k
// experts, run each active expert once over all the tokens routed to it (a GEMM over its
// tokens, its weights streamed once per call), and sum the weighted expert outputs.
#pragma once

#include <cstdint>

#include "engine/forward.h"

namespace hearth::engine {

// How a token's experts and their weights come from the router logits: a softmax over all
// experts, then the k most probable (qwen2/3moe, mixtral, olmoe); the k largest logits,
// then a softmax over those k (gpt-oss); or sigmoids of the logits, the k largest of them
// plus a per-expert selection bias chosen, weighted by their unbiased sigmoids (lfm2moe).
enum class MoeGating { kSoftmaxThenTopK, kTopKThenSoftmax, kSigmoid };

// The experts' gated activation: silu(gate) * up, or gpt-oss's clamped SwiGLU,
// g = min(gate, 7), u = clamp(up, -7, 7), g * sigmoid(1.702 g) * (u + 1).
enum class MoeActivation { kSilu, kClampedSwiglu };

struct MoeOptions {
  int32_t n_used = 0;         // experts per token (top-k)
  bool norm_weights = false;  // divide the k routing weights by their sum (qwen3moe, mixtral)
  MoeGating gating = MoeGating::kSoftmaxThenTopK;
  MoeActivation activation = MoeActivation::kSilu;
  // kSigmoid: the layer's selection bias [n_expert] added to the sigmoids to choose the k
  // experts only (the reference's exp_probs_b); null: none.
  const float* selection_bias = nullptr;
};

// s.out = sum_k w_k * down_k(act(gate_k s.cur, up_k s.cur)) for each row of s.cur, the k
// experts and their weights w_k chosen by opt.gating from the router logits (plus the
// router's bias where the layer has one; w_k normalized when opt.norm_weights), the sum in
// order of decreasing weight as the reference adds them, each projection plus its expert's
// bias where the layer has them; plus the shared expert times sigmoid(shared_router s.cur)
// where the layer has one. A row's result depends only on the row.
void moe_ffn(ForwardState& st, const LayerWeights& w, const MoeOptions& opt);

}  // namespace hearth::engine
