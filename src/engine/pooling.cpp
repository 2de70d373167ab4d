#include "engine/pooling.h"

#include <algorithm>
#include <cmath>
#include <cstring>

namespace hearth::engine {

namespace {

struct PoolingName {
  PoolingType type;
  std::string_view name;
};

constexpr PoolingName kPoolingNames[] = {
    {PoolingType::kNone, "none"}, {PoolingType::kMean, "mean"}, {PoolingType::kCls, "cls"},
    {PoolingType::kLast, "last"}, {PoolingType::kRank, "rank"},
};

}  // namespace

std::optional<PoolingType> pooling_from_name(std::string_view name) {
  for (const PoolingName& p : kPoolingNames) {
    if (p.name == name) return p.type;
  }
  return std::nullopt;
}

std::string_view pooling_name(PoolingType type) {
  for (const PoolingName& p : kPoolingNames) {
    if (p.type == type) return p.name;
  }
  return "unspecified";
}

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
