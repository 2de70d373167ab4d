// Loading pieces several architecture files share (the llama family, bert.cpp,
// modern_bert.cpp).
#pragma once

#include <memory>
#include <string>

#include "engine/hparams.h"
#include "engine/weights.h"
#include "gguf/file.h"

namespace hearth::models::parts {

// A view of rows [first, first + n) of a matrix in the file's row layout.
engine::WeightMatrix row_range(const engine::WeightMatrix& m, int64_t first, int64_t n);

// Q, K and V of block prefix `p` ("blk.N."): separate attn_q/k/v matrices, or one fused
// attn_qkv ([E, E + 2 Ekv]) read as three views of its rows; biases where the file has them.
Status load_qkv(engine::TensorLoader& ld, const engine::ModelHparams& hp, const std::string& p,
                engine::LayerWeights& w);

// The vocabulary size: the metadata's, else the row count of token_embd (which must exist).
Status settle_vocab(const gguf::Archive& archive, engine::ModelHparams& hp);

// settle_vocab(), and the checks common to encoders: the LayerNorm epsilon is a positive
// number. Marks the model non-causal (an encoder attends to its whole input, whatever the
// key says).
Status prepare_encoder_hparams(const gguf::Archive& archive, engine::ModelHparams& hp);

}  // namespace hearth::models::parts
