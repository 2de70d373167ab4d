// Sentence embeddings from a sequence's final hidden states (the rows after the output norm,
// [n_tokens][n_embd]), pooled as the reference's --pooling types do, and the reference's
// per-request normalization of a pooled vector (embd_normalize).
#pragma once

#include <cstdint>
#include <vector>

#include "base/pooling_type.h"
#include "base/thread_pool.h"
#include "kernels/matmul.h"

namespace hearth::engine {

using hearth::pooling_from_name;
using hearth::pooling_name;
using hearth::PoolingType;

// One pooled vector [n_embd] from `rows` ([n_tokens][n_embd], n_tokens >= 1) for kMean, kCls
// and kLast. The mean adds the rows in token order and scales by 1 / n_tokens afterwards.
void pool_rows(PoolingType type, const float* rows, int64_t n_tokens, int64_t n_embd, float* out);

class Model;
struct ModelHparams;

// The final hidden states a pooling reads: all of them (none, mean), the first (cls, and
// rank except on Qwen3) or the last (last, and Qwen3's rank).
enum class PooledRows { kAll, kFirst, kLast };
PooledRows pooled_rows(const ModelHparams& hp, PoolingType type);

// The output of one sequence's pooling on `model`, from its final hidden states `rows`
// ([n_tokens][n_embd], n_tokens >= 1). kMean, kCls, kLast: the pooled row [n_embd]. kRank: the
// rank head's n_cls_out outputs: the first row (Qwen3: the last row), through the model's
// classifier when it has one (tanh(cls r + b), then cls.output r + b), a softmax on Qwen3, of
// which the first n_cls_out values are kept. kNone: empty. Products run on `pool`.
std::vector<float> pool_sequence(const Model& model, PoolingType type, const float* rows,
                                 int64_t n_tokens, ThreadPool& pool,
                                 kernels::MatmulPrecision precision);

// out = in / norm(in) (in and out may alias), as embd_normalize selects: -1 no change, 0
// the largest magnitude mapped to 32760 (the int16 range), 1 taxicab, 2 Euclidean, p > 2 the
// p-norm. Sums run in double, as the reference's do; a zero vector stays zero.
void normalize_embedding(const float* in, float* out, int64_t n, int embd_normalize);

}  // namespace hearth::engine
