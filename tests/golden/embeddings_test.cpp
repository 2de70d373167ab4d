// Embeddings of decoder models against the reference: tests/data/embeddings holds what
// llama-server b10573 answered on /embedding (embd_normalize -1) for the F16 tiny models with
// --pooling none, mean, cls and last. Hearth's final hidden states, pooled the same way, must
// point the same way (cosine >= 0.9999, issue 15's bound for F16) and have the same length to
// 1e-3. Also the normalization arithmetic of embd_normalize.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <cmath>
#include <string>
#include <vector>

#include "engine/context.h"
#include "engine/pooling.h"
#include "models/registry.h"
#include "support/test_paths.h"

namespace hearth {
namespace {

using engine::PoolingType;

double cosine(const std::vector<float>& a, const std::vector<float>& b) {
  double ab = 0.0, aa = 0.0, bb = 0.0;
  for (size_t i = 0; i < a.size(); ++i) {
    ab += static_cast<double>(a[i]) * b[i];
    aa += static_cast<double>(a[i]) * a[i];
    bb += static_cast<double>(b[i]) * b[i];
  }
  return ab / std::sqrt(aa * bb);
}

double length(const std::vector<float>& a) {
  double s = 0.0;
  for (float v : a) s += static_cast<double>(v) * v;
  return std::sqrt(s);
}

void expect_same_direction(const std::vector<float>& got, const std::vector<float>& want,
                           const std::string& what) {
  ASSERT_EQ(got.size(), want.size()) << what;
  EXPECT_GE(cosine(got, want), 0.9999) << what;
  EXPECT_NEAR(length(got), length(want), 1e-3 * length(want)) << what;
}

class ReferenceEmbeddings : public ::testing::TestWithParam<std::string> {};

TEST_P(ReferenceEmbeddings, PooledAndPerTokenVectorsMatchTheReference) {
  const std::string data =
      std::string(HEARTH_SOURCE_DIR) + "/tests/data/embeddings/" + GetParam() + ".json";
  const auto doc = nlohmann::json::parse(test::read_file(data));
  const std::string model_path = test::shared_path(doc["model"].get<std::string>());
  if (!test::file_exists(model_path)) GTEST_SKIP() << "SKIPPED: " << model_path << " is missing";
  auto model = models::load_model(model_path, engine::LoadOptions{});
  ASSERT_TRUE(model.is_ok()) << model.status().to_string();
  const int64_t E = (*model)->hparams().n_embd;
  for (const auto& prompt : doc["prompts"]) {
    engine::ContextParams cp;
    cp.n_ctx = 256;
    cp.n_threads = 2;
    cp.embeddings = true;
    auto ctx = engine::Context::create(*model, cp);
    ASSERT_TRUE(ctx.is_ok()) << ctx.status().to_string();
    const auto tokens = prompt["tokens"].get<std::vector<int32_t>>();
    engine::Batch batch;
    for (size_t i = 0; i < tokens.size(); ++i)
      batch.add(tokens[i], static_cast<int32_t>(i), 0, i + 1 == tokens.size());
    ASSERT_TRUE((*ctx)->decode(batch).is_ok());
    std::vector<float> rows;
    for (int32_t i = 0; i < batch.size(); ++i) {
      const auto e = (*ctx)->embedding(i);
      ASSERT_EQ(static_cast<int64_t>(e.size()), E);
      rows.insert(rows.end(), e.begin(), e.end());
    }
    const std::string text = prompt["text"].get<std::string>();
    if (prompt.contains("none")) {
      const auto& per_token = prompt["none"];
      ASSERT_EQ(per_token.size(), tokens.size());
      for (size_t t = 0; t < tokens.size(); ++t) {
        const std::vector<float> got(rows.begin() + static_cast<int64_t>(t) * E,
                                     rows.begin() + static_cast<int64_t>(t + 1) * E);
        expect_same_direction(got, per_token[t].get<std::vector<float>>(),
                              GetParam() + " none, token " + std::to_string(t) + " of " + text);
      }
    }
    for (PoolingType type : {PoolingType::kMean, PoolingType::kCls, PoolingType::kLast}) {
      const std::string name(engine::pooling_name(type));
      std::vector<float> pooled(static_cast<size_t>(E));
      engine::pool_rows(type, rows.data(), static_cast<int64_t>(tokens.size()), E, pooled.data());
      expect_same_direction(pooled, prompt[name].get<std::vector<float>>(),
                            GetParam() + " " + name + " of " + text);
    }
  }
}

INSTANTIATE_TEST_SUITE_P(TinyModels, ReferenceEmbeddings,
                         ::testing::Values("tiny-llama-f16", "tiny-qwen2-f16", "tiny-qwen3-f16"),
                         [](const ::testing::TestParamInfo<std::string>& param_info) {
                           std::string name = param_info.param;
                           for (char& c : name)
                             if (c == '-') c = '_';
                           return name;
                         });

TEST(Pooling, MeanClsAndLastOfRows) {
  const std::vector<float> rows = {1, 2, 3, 5, 7, 11};  // 3 tokens x 2
  std::vector<float> out(2);
  engine::pool_rows(PoolingType::kMean, rows.data(), 3, 2, out.data());
  EXPECT_FLOAT_EQ(out[0], 11.0f / 3.0f);
  EXPECT_FLOAT_EQ(out[1], 6.0f);
  engine::pool_rows(PoolingType::kCls, rows.data(), 3, 2, out.data());
  EXPECT_EQ(out, (std::vector<float>{1, 2}));
  engine::pool_rows(PoolingType::kLast, rows.data(), 3, 2, out.data());
  EXPECT_EQ(out, (std::vector<float>{7, 11}));
}

TEST(Pooling, NamesRoundTrip) {
  for (const char* name : {"none", "mean", "cls", "last", "rank"}) {
    const auto type = engine::pooling_from_name(name);
    ASSERT_TRUE(type.has_value()) << name;
    EXPECT_EQ(engine::pooling_name(*type), name);
  }
  EXPECT_FALSE(engine::pooling_from_name("max").has_value());
  EXPECT_EQ(static_cast<int>(PoolingType::kRank), 4);  // the GGUF key's numbering
}

TEST(Pooling, NormalizationFollowsEmbdNormalize) {
  const std::vector<float> v = {3.0f, -4.0f, 0.0f, 12.0f};
  std::vector<float> out(v.size());
  auto norm_of = [&](int p) {
    engine::normalize_embedding(v.data(), out.data(), 4, p);
    return out;
  };
  EXPECT_EQ(norm_of(-1), v);
  const auto max_abs = norm_of(0);  // 12 maps to 32760
  EXPECT_FLOAT_EQ(max_abs[3], 32760.0f);
  EXPECT_FLOAT_EQ(max_abs[1], -4.0f * 32760.0f / 12.0f);
  const auto taxicab = norm_of(1);  // |3| + |-4| + |12| = 19
  EXPECT_FLOAT_EQ(taxicab[0], 3.0f / 19.0f);
  const auto euclid = norm_of(2);  // sqrt(9 + 16 + 144) = 13
  EXPECT_FLOAT_EQ(euclid[3], 12.0f / 13.0f);
  const auto p3 = norm_of(3);  // (27 + 64 + 1728)^(1/3)
  EXPECT_NEAR(p3[2 + 1], 12.0 / std::cbrt(1819.0), 1e-6);
  const std::vector<float> zero(4, 0.0f);
  engine::normalize_embedding(zero.data(), out.data(), 4, 2);
  EXPECT_EQ(out, zero);  // no division by zero
}

}  // namespace
}  // namespace hearth
