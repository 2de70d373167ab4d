// The mixture-of-experts feed-forward (engine-internal): route each token to its top-k
// experts, run each active expert once over all the tokens routed to it (a GEMM over its
// tokens, its weights streamed once per call), and sum the weighted expert outputs.
#pragma once

#include <cstdint>

#include "engine/forward.h"

namespace hearth::engine {

struct MoeOptions {
  int32_t n_used = 0;         // experts per token (top-k)
  bool norm_weights = false;  // divide the k routing weights by their sum (qwen3moe, mixtral)
};

// s.out = sum_k w_k * down_k(silu(gate_k s.cur) * up_k s.cur) for each row of s.cur, the k
// experts those of the largest softmax router probabilities, w_k their probabilities
// (normalized when opt.norm_weights), the sum in order of decreasing probability as the
// reference adds them; plus the shared expert times sigmoid(shared_router s.cur) where the
// layer has one. A row's result depends only on the row.
void moe_ffn(ForwardState& st, const LayerWeights& w, const MoeOptions& opt);

}  // namespace hearth::engine
