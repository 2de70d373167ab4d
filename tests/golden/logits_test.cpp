// The reference engine's own numbers: top-10 log-probabilities at every teacher-forced step,
// for stories260K and each tiny random-weight model (../shared/golden/logits), and for the
// architectures added since (tests/data/logits: vectors recorded the same way through the
// reference's library on models hearth-synth writes from the recorded "synth" arguments).
// A mixture of experts picks each token's top k experts; where the k-th and (k+1)-th are
// within the engines' rounding of each other, either engine may take either, and the
// log-probabilities then part by far more than any tolerance (as a greedy near tie does).
// The MoE sets were synthesized with seeds whose routes have no such near tie.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <filesystem>

#include "golden/model_fixture.h"
#include "kernels/cpu_level.h"
#include "kernels/interleaved.h"
#include "support/process.h"
#include "support/test_paths.h"

namespace hearth::test {
namespace {

struct LogitsCase {
  std::string vectors;  // json file
  std::string model;    // gguf path; empty: hearth-synth writes it from the file's "synth"
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
  for (const char* t : {"q4_", "q5_", "q6_k", "q8_0", "iq4", "mxfp4"}) {
    if (name.find(t) != std::string::npos) return 0.1;
  }
  return 0.02;
}

std::vector<LogitsCase> all_cases() {
  std::vector<LogitsCase> cases;
  const std::string dir = shared_path("golden/logits");
  // The shared vectors when ../shared is there; ours always (their tests skip, naming the
  // missing vocabulary, without it).
  for (const auto& e : std::filesystem::exists(dir) ? std::filesystem::directory_iterator(dir)
                                                    : std::filesystem::directory_iterator()) {
    if (e.path().extension() != ".json") continue;
    const std::string stem = e.path().stem().string();
    const std::string model = stem == "stories260K" ? shared_path("models/stories260K.gguf")
                                                    : shared_path("models/tiny/" + stem + ".gguf");
    cases.push_back({e.path().string(), model, tolerance_for(stem)});
  }
  const std::string ours = std::string(HEARTH_SOURCE_DIR) + "/tests/data/logits";
  for (const auto& e : std::filesystem::directory_iterator(ours)) {
    if (e.path().extension() == ".json")
      cases.push_back({e.path().string(), "", tolerance_for(e.path().stem().string())});
  }
  std::sort(cases.begin(), cases.end(),
            [](const auto& a, const auto& b) { return a.vectors < b.vectors; });
  return cases;
}

// The model of a case: the shared file, or the one hearth-synth writes into `dir` from the
// vectors' "synth" arguments ("" with `why` set when it cannot; `missing` when a shared
// input is absent, so the test skips rather than fails).
std::string case_model(const LogitsCase& c, const nlohmann::json& doc, const std::string& dir,
                       std::string& why, bool& missing) {
  missing = false;
  if (!c.model.empty()) {
    missing = !std::filesystem::exists(c.model);
    if (missing) why = c.model + " is missing";
    return missing ? "" : c.model;
  }
  std::vector<std::string> args{bin_dir() + "/hearth-synth"};
  for (const auto& a : doc["synth"]) {
    const std::string arg = a;
    args.push_back(arg.rfind("models/", 0) == 0 ? shared_path(arg) : arg);
    if (arg.rfind("models/", 0) == 0 && !std::filesystem::exists(args.back())) {
      why = args.back() + " is missing";
      missing = true;
      return "";
    }
  }
  const std::string out = dir + "/model.gguf";
  args.insert(args.end(), {"-o", out});
  const ProcessResult r = run_process(args, 120);
  if (r.exit_code != 0) why = "hearth-synth failed: " + r.err;
  return r.exit_code == 0 ? out : "";
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

// Every case of a vectors file, teacher-forced through `ctx`.
void check_cases(const nlohmann::json& doc, engine::Context& ctx, double tolerance) {
  for (const auto& cs : doc["cases"]) {
    ctx.kv_cache().clear(0);
    auto logits = feed(ctx, cs["prompt_tokens"].get<std::vector<int32_t>>());
    const auto& steps = cs["steps"];
    for (size_t k = 0; k < steps.size(); ++k) {
      ASSERT_FALSE(logits.empty());
      check_step(steps[k], logits, tolerance,
                 cs["prompt"].get<std::string>() + " step " + std::to_string(k));
      logits = feed(ctx, {steps[k]["token"].get<int32_t>()});
    }
  }
}

// Both weight layouts: repacked for the interleaved kernels (the default) and the file's.
TEST_P(GoldenLogits, TopTenAgreeAtEveryStep) {
  const LogitsCase& c = GetParam();
  const auto doc = nlohmann::json::parse(read_file(c.vectors));
  const std::string dir = make_temp_dir("golden-logits");
  std::string why;
  bool missing = false;
  const std::string model = case_model(c, doc, dir, why, missing);
  if (missing) {
    std::filesystem::remove_all(dir);
    GTEST_SKIP() << "SKIPPED: " << why;
  }
  ASSERT_FALSE(model.empty()) << why;
  for (const bool repack : {true, false}) {
    SCOPED_TRACE(repack ? "repacked weights" : "file layout (-nr)");
    LoadedModel lm = load_with_context(model, 256, 1, 2, TensorType::kF16,
                                       kernels::MatmulPrecision::kReference, repack);
    ASSERT_TRUE(lm.ctx);
    ASSERT_EQ(lm.model->hparams().n_vocab, doc["n_vocab"].get<int>());
    check_cases(doc, *lm.ctx, c.tolerance);
  }
  std::filesystem::remove_all(dir);
}

// The tiny models of the types with an interleaved layout are loaded repacked (so the test
// above covers those kernels), and give the greedy tokens of the file layout wherever its
// top-2 gap exceeds the model's tolerance (a near tie may go either way; both continue from
// the file layout's token then).
TEST(RepackedModels, InterleavedAndFileLayoutsGiveTheSameGreedyTokens) {
  if (kernels::active_cpu_level() == kernels::CpuLevel::kScalar)
    GTEST_SKIP() << "SKIPPED: no SIMD level active, so nothing is repacked";
  for (const char* name :
       {"tiny-llama-q4_0", "tiny-qwen2-q8_0", "tiny-qwen3-q4_k", "tiny-llama-q4_1",
        "tiny-llama-q5_0", "tiny-llama-q5_1", "tiny-llama-iq4_nl", "tiny-llama-q5_k",
        "tiny-llama-q6_k", "tiny-llama-f16", "tiny-llama-bf16", "tiny-qwen3-f16"}) {
    const std::string path = shared_path(std::string("models/tiny/") + name + ".gguf");
    if (!std::filesystem::exists(path)) GTEST_SKIP() << "SKIPPED: " << path << " is missing";
    LoadedModel packed = load_with_context(path, 64, 1, 2, TensorType::kF16,
                                           kernels::MatmulPrecision::kReference, true);
    LoadedModel rows = load_with_context(path, 64, 1, 2, TensorType::kF16,
                                         kernels::MatmulPrecision::kReference, false);
    ASSERT_TRUE(packed.ctx && rows.ctx);
    const auto& lp = packed.model->weights().layers[0];
    const auto& lr = rows.model->weights().layers[0];
    // Q5_K is repacked only at the AVX-512 level (kernels::can_interleave).
    const auto packed_layout = kernels::can_interleave(lr.wq)
                                   ? kernels::WeightLayout::kInterleaved16
                                   : kernels::WeightLayout::kRows;
    EXPECT_EQ(lp.wq.layout, packed_layout) << name;
    EXPECT_EQ(lp.ffn_down.layout, packed_layout) << name;
    EXPECT_EQ(lr.wq.layout, kernels::WeightLayout::kRows) << name;
    EXPECT_EQ(packed.model->weights().token_embd.layout, kernels::WeightLayout::kRows) << name;
    std::vector<int32_t> next = {1, 400, 33};
    for (int step = 0; step < 12; ++step) {
      const auto a = feed(*packed.ctx, next);
      const auto b = feed(*rows.ctx, next);
      ASSERT_EQ(a.size(), b.size());
      const auto ta = std::max_element(a.begin(), a.end()) - a.begin();
      const auto tb = std::max_element(b.begin(), b.end()) - b.begin();
      if (ta != tb) {
        EXPECT_LT(b[static_cast<size_t>(tb)] - b[static_cast<size_t>(ta)], tolerance_for(name))
            << name << " step " << step << ": greedy tokens " << ta << " vs " << tb;
      }
      next = {static_cast<int32_t>(tb)};
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
  EXPECT_GE(all_cases().size(), 30u) << "missing " << shared_path("golden/logits");
}

}  // namespace
}  // namespace hearth::test
