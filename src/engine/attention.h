// The attention of one layer over the KV cache (engine-internal): each token's query heads
// against the cached positions [0, pos] of its sequence, into st.s.attn.
#pragma once

#include <cstdint>

#include "engine/forward.h"

namespace hearth::engine {

// st.s.attn[t][h] = softmax(scale * q[t][h] . K + bias) V for every token and head, K and V
// the layer's cached rows of the token's sequence up to its position (causal), or up to the
// sequence's last position in the batch, within opt's window and with its ALiBi bias
// (encoders). A token's result depends only on its own query, position and visible cached
// rows, never on the rest of the batch.
void attend_all(ForwardState& st, int32_t il, float scale, const AttentionOptions& opt);

}  // namespace hearth::engine
