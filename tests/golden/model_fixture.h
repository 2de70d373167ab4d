// Helpers shared by the golden tests: loading a model with a context, running tokens.
#pragma once

#include <gtest/gtest.h>

#include <cmath>
#include <memory>
#include <string>
#include <vector>

#include "engine/context.h"
#include "models/registry.h"

namespace hearth::test {

struct LoadedModel {
  models::ModelPtr model;
  std::unique_ptr<engine::Context> ctx;
};

inline LoadedModel load_with_context(
    const std::string& path, int32_t n_ctx = 512, int32_t n_seq = 1, int32_t n_threads = 2,
    TensorType kv_type = TensorType::kF16,
    kernels::MatmulPrecision precision = kernels::MatmulPrecision::kReference, bool repack = true) {
  LoadedModel lm;
  engine::LoadOptions load;
  load.repack = repack;
  auto model = models::load_model(path, load);
  if (!model.is_ok()) {
    ADD_FAILURE() << path << ": " << model.status().to_string();
    return lm;
  }
  lm.model = *model;
  engine::ContextParams cp;
  cp.n_ctx = n_ctx;
  cp.n_seq_max = n_seq;
  cp.n_threads = n_threads;
  cp.type_k = kv_type;
  cp.type_v = kv_type;
  cp.precision = precision;
  auto ctx = engine::Context::create(lm.model, cp);
  if (!ctx.is_ok()) {
    ADD_FAILURE() << ctx.status().to_string();
    return lm;
  }
  lm.ctx = std::move(*ctx);
  return lm;
}

// Appends `tokens` to sequence `seq` in one batch; returns the logits of the last token.
inline std::vector<float> feed(engine::Context& ctx, const std::vector<int32_t>& tokens,
                               engine::SeqId seq = 0) {
  engine::Batch batch;
  const int32_t start = ctx.kv_cache().length(seq);
  for (size_t i = 0; i < tokens.size(); ++i)
    batch.add(tokens[i], start + static_cast<int32_t>(i), seq, i + 1 == tokens.size());
  Status s = ctx.decode(batch);
  EXPECT_TRUE(s.is_ok()) << s.to_string();
  if (!s.is_ok()) return {};
  auto l = ctx.logits(batch.size() - 1);
  return {l.begin(), l.end()};
}

inline std::vector<double> log_softmax(const std::vector<float>& logits) {
  double mx = -INFINITY;
  for (float v : logits) mx = std::max(mx, static_cast<double>(v));
  double sum = 0.0;
  for (float v : logits) sum += std::exp(static_cast<double>(v) - mx);
  const double lse = mx + std::log(sum);
  std::vector<double> out(logits.size());
  for (size_t i = 0; i < logits.size(); ++i) out[i] = static_cast<double>(logits[i]) - lse;
  return out;
}

}  // namespace hearth::test
