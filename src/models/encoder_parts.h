// Loading pieces the encoder architectures share (bert.cpp, modern_bert.cpp).
#pragma once

#include <memory>
#include <string>

#include "engine/hparams.h"
#include "engine/weights.h"
#include "gguf/file.h"

namespace hearth::models::encoder {

// A view of rows [first, first + n) of a matrix in the file's row layout.
engine::WeightMatrix row_range(const engine::WeightMatrix& m, int64_t first, int64_t n);

// Q, K and V of block prefix `p` ("blk.N."): separate attn_q/k/v matrices, or one fused
// attn_qkv ([E, E + 2 Ekv]) read as three views of its rows; biases where the file has them.
Status load_qkv(engine::TensorLoader& ld, const engine::ModelHparams& hp, const std::string& p,
                engine::LayerWeights& w);

// Checks common to encoders and fills n_vocab from token_embd when the vocab has no size:
// the token matrix exists, the LayerNorm epsilon is a positive number. Marks the model
// non-causal (an encoder attends to its whole input, whatever the key says).
Status prepare_hparams(const gguf::Archive& archive, engine::ModelHparams& hp);

}  // namespace hearth::models::encoder
