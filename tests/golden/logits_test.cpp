// The reference engine's own numbers (../shared/golden/logits): top-10 log-probabilities
// at every teacher-forced step, for stories260K and each tiny random-weight model.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <filesystem>

#include "golden/model_fixture.h"
#include "support/test_paths.h"

namespace hearth::test {
namespace {

struct LogitsCase {
  std::string vectors;  // json file
  std::string model;    // gguf path
  double tolerance;
};

// Tolerances per weight type. Hearth computes with the reference's arithmetic (activations
// in each weight type's dot format, flash-attention rounding), and on F32/F16/BF16 models it
// stays within the README's 0.02 (measured max 0.010). On the quantized random-weight
// models the two engines agree to < 5e-4 for stretches of steps, then jump once an 8-bit
// activation lands on the other side of a rounding boundary (their float sums run in
// different orders), and stay apart by up to 0.077 (q4_K): these random networks amplify
// a single flip that much (moving one SiLU result by under one ulp, Hearth against
// Hearth, moves log-probabilities by up to 0.054). The bounds are the README's example
// values where that holds and otherwise sit above the measured worst case with headroom
// for kernels whose float sums run in yet another order; a wrong dequantizer or dot
// product moves log-probabilities by far more and changes greedy tokens.
double tolerance_for(const std::string& name) {
  if (name.find("q2_k") != std::string::npos || name.find("q3_k") != std::string::npos) return 0.15;
  for (const char* t : {"q4_", "q5_", "q6_k", "q8_0", "iq4"}) {
    if (name.find(t) != std::string::npos) return 0.1;
  }
  return 0.02;
}

std::vector<LogitsCase> all_cases() {
  std::vector<LogitsCase> cases;
  const std::string dir = shared_path("golden/logits");
  if (!std::filesystem::exists(dir)) return cases;
  for (const auto& e : std::filesystem::directory_iterator(dir)) {
    if (e.path().extension() != ".json") continue;
    const std::string stem = e.path().stem().string();
    const std::string model = stem == "stories260K" ? shared_path("models/stories260K.gguf")
                                                    : shared_path("models/tiny/" + stem + ".gguf");
    cases.push_back({e.path().string(), model, tolerance_for(stem)});
  }
  std::sort(cases.begin(), cases.end(),
            [](const auto& a, const auto& b) { return a.vectors < b.vectors; });
  return cases;
}

void PrintTo(const LogitsCase& c, std::ostream* os) {
  *os << c.vectors;
}

class GoldenLogits : public ::testing::TestWithParam<LogitsCase> {};

void check_step(const nlohmann::json& step, const std::vector<float>& logits, double tol,
                const std::string& where) {
  const auto lp = log_softmax(logits);
  const auto& top = step["top"];
  for (const auto& entry : top) {
    const int id = entry[0].get<int>();
    const double ref = entry[1].get<double>();
    EXPECT_NEAR(lp[static_cast<size_t>(id)], ref, tol) << where << " token " << id;
  }
  const double gap = top[0][1].get<double>() - top[1][1].get<double>();
  if (gap > tol) {
    const auto best = std::max_element(logits.begin(), logits.end()) - logits.begin();
    EXPECT_EQ(best, step["token"].get<int>())
        << where << ": greedy token differs (reference gap " << gap << ")";
  }
}

TEST_P(GoldenLogits, TopTenAgreeAtEveryStep) {
  const LogitsCase& c = GetParam();
  const auto doc = nlohmann::json::parse(read_file(c.vectors));
  LoadedModel lm = load_with_context(c.model, 256);
  ASSERT_TRUE(lm.ctx);
  ASSERT_EQ(lm.model->hparams().n_vocab, doc["n_vocab"].get<int>());
  for (const auto& cs : doc["cases"]) {
    lm.ctx->kv_cache().clear(0);
    auto logits = feed(*lm.ctx, cs["prompt_tokens"].get<std::vector<int32_t>>());
    const auto& steps = cs["steps"];
    for (size_t k = 0; k < steps.size(); ++k) {
      ASSERT_FALSE(logits.empty());
      check_step(steps[k], logits, c.tolerance,
                 cs["prompt"].get<std::string>() + " step " + std::to_string(k));
      logits = feed(*lm.ctx, {steps[k]["token"].get<int32_t>()});
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Models, GoldenLogits, ::testing::ValuesIn(all_cases()),
                         [](const ::testing::TestParamInfo<LogitsCase>& param_info) {
                           std::string name =
                               std::filesystem::path(param_info.param.vectors).stem().string();
                           std::replace_if(
                               name.begin(), name.end(),
                               [](char ch) {
                                 return !std::isalnum(static_cast<unsigned char>(ch));
                               },
                               '_');
                           return name;
                         });

TEST(GoldenLogitsSuite, FindsVectors) {
  EXPECT_GE(all_cases().size(), 21u) << "missing " << shared_path("golden/logits");
}

}  // namespace
}  // namespace hearth::test
