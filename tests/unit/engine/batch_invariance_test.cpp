// A request's logits must not depend on what else shares its forward call: the same
// sequence alone (one thread) and among 15 others (two threads, mixed prefill and decode)
// gives bit-identical logits at every step. Checked with the fast kernels the engine
// uses, on a small model of every weight type and on the 1.1B llama shape.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <string>
#include <vector>

#include "engine/context.h"
#include "models/registry.h"
#include "support/test_paths.h"
#include "tools/synth/synth.h"

namespace hearth::engine {
namespace {

constexpr int kOthers = 15;
constexpr int kSteps = 4;

std::unique_ptr<Context> make_context(const models::ModelPtr& model, int threads) {
  ContextParams p;
  p.n_ctx = 2048;
  p.n_seq_max = kOthers + 1;
  p.n_threads = threads;
  p.n_threads_batch = threads;
  auto c = Context::create(model, p);
  EXPECT_TRUE(c.is_ok()) << c.status().to_string();
  return c.is_ok() ? std::move(*c) : nullptr;
}

std::vector<int32_t> prompt_of(int seq, int32_t n_vocab) {
  std::vector<int32_t> p = {1};
  for (int i = 0; i < 3 + (seq * 5) % 11; ++i) p.push_back((37 + seq * 101 + i * 13) % n_vocab);
  return p;
}

int32_t argmax(std::span<const float> l) {
  return static_cast<int32_t>(std::max_element(l.begin(), l.end()) - l.begin());
}

// Logits of sequence 0 after its prompt and after each greedy step, run alone.
std::vector<std::vector<float>> run_alone(const models::ModelPtr& model) {
  auto ctx = make_context(model, 1);
  const auto prompt = prompt_of(0, model->hparams().n_vocab);
  std::vector<std::vector<float>> out;
  Batch b;
  for (size_t i = 0; i < prompt.size(); ++i)
    b.add(prompt[i], static_cast<int32_t>(i), 0, i + 1 == prompt.size());
  for (int step = 0; step <= kSteps; ++step) {
    EXPECT_TRUE(ctx->decode(b).is_ok());
    auto l = ctx->logits(b.size() - 1);
    out.emplace_back(l.begin(), l.end());
    const int32_t pos = ctx->kv_cache().length(0);
    b.clear();
    b.add(argmax(l), pos, 0, true);
  }
  return out;
}

// The same for sequence 0 while 15 others share every call: half of them prefilled
// beforehand (decoding beside it), the rest prefilling in the same call as its prompt.
std::vector<std::vector<float>> run_among_others(const models::ModelPtr& model) {
  auto ctx = make_context(model, 2);
  const int32_t n_vocab = model->hparams().n_vocab;
  Batch b;
  for (int s = 1; s <= kOthers; s += 2) {
    const auto p = prompt_of(s, n_vocab);
    for (size_t i = 0; i < p.size(); ++i) b.add(p[i], static_cast<int32_t>(i), s, false);
  }
  EXPECT_TRUE(ctx->decode(b).is_ok());
  std::vector<std::vector<float>> out;
  std::vector<int32_t> next(kOthers + 1, 5);
  std::vector<int32_t> prompt0 = prompt_of(0, n_vocab);
  for (int step = 0; step <= kSteps; ++step) {
    b.clear();
    int32_t row0 = -1;
    for (int s = 0; s <= kOthers; ++s) {
      const int32_t len = ctx->kv_cache().length(s);
      if (len == 0) {  // first call of this sequence: its whole prompt
        const auto p = s == 0 ? prompt0 : prompt_of(s, n_vocab);
        for (size_t i = 0; i < p.size(); ++i) b.add(p[i], static_cast<int32_t>(i), s, true);
      } else {
        b.add(next[static_cast<size_t>(s)], len, s, true);
      }
      if (s == 0) row0 = b.size() - 1;
    }
    EXPECT_TRUE(ctx->decode(b).is_ok());
    for (int32_t i = 0; i < b.size(); ++i)
      next[static_cast<size_t>(b[i].seq)] = argmax(ctx->logits(i));
    auto l = ctx->logits(row0);
    out.emplace_back(l.begin(), l.end());
  }
  return out;
}

void expect_invariant(const std::string& path) {
  auto m = models::load_model(path);
  ASSERT_TRUE(m.is_ok()) << m.status().to_string();
  const auto alone = run_alone(*m);
  const auto together = run_among_others(*m);
  ASSERT_EQ(alone.size(), together.size());
  for (size_t step = 0; step < alone.size(); ++step) {
    ASSERT_EQ(alone[step].size(), together[step].size());
    EXPECT_TRUE(alone[step] == together[step]) << "step " << step << ": logits differ";
  }
}

std::string write_model(const synth::SynthParams& p, const std::string& name) {
  const std::string dir = test::make_temp_dir("batch-invariance");
  const std::string path = dir + "/" + name;
  const Status s = synth::synthesize(p, path);
  EXPECT_TRUE(s.is_ok()) << s.to_string();
  return path;
}

// A small random model of weight type `type` (GQA: 8 heads over 2 KV heads).
synth::SynthParams small_model(TensorType type) {
  synth::SynthParams p;
  p.n_embd = 256;
  p.n_layer = 2;
  p.n_head = 8;
  p.n_head_kv = 2;
  p.n_ff = 512;
  p.type = type;
  p.vocab_path = test::shared_path("models/stories260K.gguf");  // 512 tokens: fast to write
  return p;
}

class SmallModel : public ::testing::TestWithParam<TensorType> {};

TEST_P(SmallModel, LogitsAloneEqualLogitsAmongFifteenOthers) {
  const std::string path = write_model(small_model(GetParam()), "small.gguf");
  expect_invariant(path);
  std::filesystem::remove_all(std::filesystem::path(path).parent_path());
}

// Logits at chosen positions of a 150-token prompt fed in chunks of `chunk` tokens, each call
// also carrying the next tokens of a second sequence when `with_other` (so the queries of a
// call mix two sequences at different depths, past the attention's exact prefix of 64).
std::vector<std::vector<float>> long_prompt_logits(const models::ModelPtr& model, int chunk,
                                                   bool with_other) {
  auto ctx = make_context(model, 2);
  const int32_t n_vocab = model->hparams().n_vocab;
  const int32_t n = 150, n_other = 120;
  const std::vector<int32_t> wanted = {40, 70, 100, 149};
  std::vector<std::vector<float>> out(wanted.size());
  for (int32_t start = 0; start < n; start += chunk) {
    Batch b;
    std::vector<std::pair<int32_t, int32_t>> rows;  // (position, batch row) of wanted ones
    for (int32_t i = start; i < std::min(n, start + chunk); ++i) {
      const bool want = std::find(wanted.begin(), wanted.end(), i) != wanted.end();
      if (want) rows.emplace_back(i, b.size());
      b.add((7 + i * 31) % n_vocab, i, 0, want);
    }
    if (with_other) {
      for (int32_t i = start; i < std::min(n_other, start + chunk); ++i)
        b.add((11 + i * 17) % n_vocab, i, 1, false);
    }
    EXPECT_TRUE(ctx->decode(b).is_ok());
    for (const auto& [pos, row] : rows) {
      const auto l = ctx->logits(row);
      const auto k = std::find(wanted.begin(), wanted.end(), pos) - wanted.begin();
      out[static_cast<size_t>(k)].assign(l.begin(), l.end());
    }
  }
  return out;
}

// A 150-token prompt gives the same logits whole as token by token (chunk 1) and in chunks
// beside another sequence.
void expect_chunking_invariant(const models::ModelPtr& m,
                               std::initializer_list<std::pair<int, bool>> chunkings = {
                                   {1, false}, {7, true}}) {
  const auto whole = long_prompt_logits(m, 150, false);
  for (const auto& [chunk, other] : chunkings) {
    const auto got = long_prompt_logits(m, chunk, other);
    for (size_t k = 0; k < whole.size(); ++k) {
      ASSERT_FALSE(whole[k].empty());
      EXPECT_TRUE(got[k] == whole[k]) << "chunk " << chunk << " wanted row " << k;
    }
  }
}

// Past 64 positions attention runs in tiles shared by the queries of consecutive tokens: a
// token's logits must still not depend on how its prompt is chunked or what shares its calls.
TEST(LongContext, LogitsDoNotDependOnChunkingOrNeighbours) {
  const std::string path = write_model(small_model(TensorType::kQ4_0), "long.gguf");
  auto m = models::load_model(path);
  ASSERT_TRUE(m.is_ok()) << m.status().to_string();
  expect_chunking_invariant(*m, {{1, false}, {7, true}, {64, true}});
  std::filesystem::remove_all(std::filesystem::path(path).parent_path());
}

// Sliding-window layers (gemma2 and gemma3 with a window of 16, soft caps on gemma2): a
// token's logits still do not depend on chunking or neighbours, past the window and past
// the exact prefix; and a batch of sixteen sequences gives each its logits alone.
TEST(SlidingWindow, LogitsDoNotDependOnChunkingOrNeighbours) {
  for (const char* arch : {"gemma2", "gemma3"}) {
    SCOPED_TRACE(arch);
    synth::SynthParams p = small_model(TensorType::kQ8_0);
    p.arch = arch;
    p.n_swa = 16;
    p.swa_pattern = 2;
    p.attn_softcap = p.arch == "gemma2" ? 5.0f : 0.0f;
    p.final_softcap = 10.0f;
    const std::string path = write_model(p, "swa.gguf");
    auto m = models::load_model(path);
    ASSERT_TRUE(m.is_ok()) << m.status().to_string();
    expect_chunking_invariant(*m);
    expect_invariant(path);
    std::filesystem::remove_all(std::filesystem::path(path).parent_path());
  }
}

// Mixtures of experts (qwen3moe, 16 experts, top 4; qwen2moe with a shared expert): the
// tokens of a call route to different experts, each expert runs once over its tokens, and
// every sequence still gets the logits it gets alone.
TEST(MixtureOfExperts, LogitsAloneEqualLogitsAmongFifteenOthers) {
  for (const char* arch : {"qwen3moe", "qwen2moe"}) {
    SCOPED_TRACE(arch);
    synth::SynthParams p = small_model(TensorType::kQ4_K);
    p.arch = arch;
    p.n_expert = 16;
    p.n_expert_used = 4;
    p.n_ff_exp = 128;
    const std::string path = write_model(p, "moe.gguf");
    expect_invariant(path);
    std::filesystem::remove_all(std::filesystem::path(path).parent_path());
  }
}

// gpt-oss (MXFP4 experts, Q8_0 elsewhere): attention sinks, alternating 16-position windows,
// top-k-then-softmax routing and the clamped SwiGLU with biased experts; the long prompt
// gives the same logits whole, token by token, or in chunks beside another sequence.
TEST(MixtureOfExperts, GptOssLogitsDoNotDependOnBatching) {
  synth::SynthParams p = small_model(TensorType::kMXFP4);
  p.arch = "gpt-oss";
  p.n_expert = 16;
  p.n_expert_used = 4;
  p.n_ff_exp = 128;
  p.n_swa = 16;
  p.yarn_factor = 4.0f;
  const std::string path = write_model(p, "gpt-oss.gguf");
  auto m = models::load_model(path);
  ASSERT_TRUE(m.is_ok()) << m.status().to_string();
  expect_chunking_invariant(*m);
  expect_invariant(path);
  std::filesystem::remove_all(std::filesystem::path(path).parent_path());
}

INSTANTIATE_TEST_SUITE_P(
    EveryWeightType, SmallModel,
    ::testing::Values(TensorType::kF32, TensorType::kF16, TensorType::kBF16, TensorType::kQ8_0,
                      TensorType::kQ4_0, TensorType::kQ4_1, TensorType::kQ5_0, TensorType::kQ5_1,
                      TensorType::kQ2_K, TensorType::kQ3_K, TensorType::kQ4_K, TensorType::kQ5_K,
                      TensorType::kQ6_K, TensorType::kIQ4_NL, TensorType::kIQ4_XS),
    [](const auto& param_info) { return std::string(tensor_type_name(param_info.param)); });

// The 1.1B llama shape of the benchmarks (Q4_0, ~600 MiB, synthesized in ~20 s). Too slow
// for the sanitizer build, which the small models cover.
TEST(LargeModel, LogitsAloneEqualLogitsAmongFifteenOthersOn1BShape) {
#if defined(__SANITIZE_ADDRESS__)
  GTEST_SKIP() << "1.1B model: Release build only";
#endif
  synth::SynthParams p;  // defaults: the 1.1B llama shape
  p.type = TensorType::kQ4_0;
  p.vocab_path = test::shared_path("models/vocab/ggml-vocab-llama-spm.gguf");
  const std::string path = write_model(p, "llama-1b-q4_0.gguf");
  expect_invariant(path);
  std::filesystem::remove_all(std::filesystem::path(path).parent_path());
}

}  // namespace
}  // namespace hearth::engine
