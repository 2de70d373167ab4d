#include "engine/pooling.h"

#include <algorithm>
#include <cmath>
#include <cstring>

#include "engine/model.h"
#include "engine/ops.h"

namespace hearth::engine {

void pool_rows(PoolingType type, const float* rows, int64_t n_tokens, int64_t n_embd, float* out) {
  const auto row_bytes = static_cast<size_t>(n_embd) * sizeof(float);
  switch (type) {
    case PoolingType::kCls:
      std::memcpy(out, rows, row_bytes);
      return;
    case PoolingType::kLast:
      std::memcpy(out, rows + (n_tokens - 1) * n_embd, row_bytes);
      return;
    case PoolingType::kMean: {
      std::fill(out, out + n_embd, 0.0f);
      for (int64_t t = 0; t < n_tokens; ++t) {
        for (int64_t i = 0; i < n_embd; ++i) out[i] += rows[t * n_embd + i];
      }
      const float scale = 1.0f / static_cast<float>(n_tokens);
      for (int64_t i = 0; i < n_embd; ++i) out[i] *= scale;
      return;
    }
    default:
      std::fill(out, out + n_embd, 0.0f);  // kNone/kRank are not a pooling of rows
      return;
  }
}

namespace {

// out = W x (+ b) for one row x.
std::vector<float> times(const WeightMatrix& w, const std::vector<float>& b,
                         const std::vector<float>& x, ThreadPool& pool,
                         kernels::MatmulPrecision precision) {
  std::vector<float> out(static_cast<size_t>(w.n_rows));
  kernels::matmul(w, x.data(), 1, out.data(), pool, precision);
  for (size_t i = 0; i < b.size() && i < out.size(); ++i) out[i] += b[i];
  return out;
}

void softmax(std::vector<float>& v) {
  const float top = *std::max_element(v.begin(), v.end());
  double sum = 0.0;
  for (float& p : v) {
    p = std::exp(p - top);
    sum += p;
  }
  for (float& p : v) p = static_cast<float>(p / sum);
}

}  // namespace

PooledRows pooled_rows(const ModelHparams& hp, PoolingType type) {
  switch (type) {
    case PoolingType::kCls:
      return PooledRows::kFirst;
    case PoolingType::kLast:
      return PooledRows::kLast;
    case PoolingType::kRank:
      // modern-bert's classifier reads the mean of the rows (as the reference's graph does).
      if (hp.arch == "modern-bert") return PooledRows::kAll;
      return hp.arch == "qwen3" ? PooledRows::kLast : PooledRows::kFirst;
    default:
      return PooledRows::kAll;
  }
}

std::vector<float> pool_sequence(const Model& model, PoolingType type, const float* rows,
                                 int64_t n_tokens, ThreadPool& pool,
                                 kernels::MatmulPrecision precision) {
  const ModelHparams& hp = model.hparams();
  const int64_t E = hp.n_embd;
  if (type == PoolingType::kNone || n_tokens < 1) return {};
  std::vector<float> pooled(static_cast<size_t>(E));
  if (type != PoolingType::kRank) {
    pool_rows(type, rows, n_tokens, E, pooled.data());
    return pooled;
  }
  const bool qwen3 = hp.arch == "qwen3";
  const bool modern_bert = hp.arch == "modern-bert";
  const PooledRows read = pooled_rows(hp, type);
  pool_rows(read == PooledRows::kLast  ? PoolingType::kLast
            : read == PooledRows::kAll ? PoolingType::kMean
                                       : PoolingType::kCls,
            rows, n_tokens, E, pooled.data());
  const ModelWeights& w = model.weights();
  if (present(w.cls)) {
    // The classifier's dense layer: tanh (BERT, RoBERTa), or GELU then a LayerNorm
    // (modern-bert's prediction head).
    pooled = times(w.cls, w.cls_b, pooled, pool, precision);
    if (modern_bert) {
      ops::gelu(pooled.data(), pooled.data(), static_cast<int64_t>(pooled.size()));
    } else {
      for (float& v : pooled) v = std::tanh(v);
    }
    if (!w.cls_norm.empty())
      ops::layer_norm(pooled.data(), w.cls_norm.data(), nullptr, pooled.data(),
                      static_cast<int64_t>(pooled.size()), hp.norm_eps);
  }
  if (present(w.cls_out)) pooled = times(w.cls_out, w.cls_out_b, pooled, pool, precision);
  if (qwen3) softmax(pooled);
  pooled.resize(std::min(pooled.size(), static_cast<size_t>(hp.n_cls_out)));
  return pooled;
}

void normalize_embedding(const float* in, float* out, int64_t n, int embd_normalize) {
  double norm = 0.0;
  if (embd_normalize == -1) {
    norm = 1.0;
  } else if (embd_normalize == 0) {
    for (int64_t i = 0; i < n; ++i) norm = std::max(norm, static_cast<double>(std::fabs(in[i])));
    norm /= 32760.0;
  } else if (embd_normalize == 2) {
    for (int64_t i = 0; i < n; ++i) norm += in[i] * in[i];
    norm = std::sqrt(norm);
  } else {
    for (int64_t i = 0; i < n; ++i) norm += std::pow(std::fabs(in[i]), embd_normalize);
    norm = std::pow(norm, 1.0 / embd_normalize);
  }
  const float scale = norm > 0.0 ? static_cast<float>(1.0 / norm) : 0.0f;
  for (int64_t i = 0; i < n; ++i) out[i] = in[i] * scale;
}

}  // namespace hearth::engine
