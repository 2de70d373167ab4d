// Replays the reference's /completion captures (../shared/golden/llama-server-b10573)
// whose requests use only prompt, n_predict, temperature and stop, through the engine,
// tokenizer and hearth-cli's generation loop: same text, same token counts, same stop.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <filesystem>

#include "golden/model_fixture.h"
#include "support/test_paths.h"
#include "tokenizer/tokenizer.h"
#include "tools/cli/generator.h"

namespace hearth::test {
namespace {

using nlohmann::json;

struct Capture {
  std::string path;
  int32_t slot_ctx;  // context of one slot under the capture's server flags
};

std::vector<Capture> qualifying_captures() {
  // Server flags of each folder (../shared/golden/README.md): -c 2048 -np 4, and -c 1024 -np 1.
  const std::vector<std::pair<std::string, int32_t>> folders = {{"stories260K-np4", 2048 / 4},
                                                                {"stories260K-np1", 1024}};
  std::vector<Capture> out;
  for (const auto& [folder, slot_ctx] : folders) {
    const std::string dir = shared_path("golden/llama-server-b10573/" + folder);
    if (!std::filesystem::exists(dir)) continue;
    for (const auto& e : std::filesystem::directory_iterator(dir)) {
      if (e.path().filename() == "cases.json") continue;
      const json doc = json::parse(read_file(e.path().string()));
      const std::string route = doc["request"].value("path", "");
      if ((route != "/completion" && route != "/completions") || doc["status"] != 200) continue;
      const json& body = doc["request"]["body"];
      bool simple = body.is_object();
      for (const auto& [key, value] : body.items()) {
        if (key != "prompt" && key != "n_predict" && key != "temperature" && key != "stop")
          simple = false;
      }
      if (simple) out.push_back({e.path().string(), slot_ctx});
    }
  }
  std::sort(out.begin(), out.end(), [](const auto& a, const auto& b) { return a.path < b.path; });
  return out;
}

// The prompts of a request: one string or token array, or an array of strings.
std::vector<std::vector<int32_t>> prompts_of(const json& prompt, const tokenizer::Tokenizer& tok) {
  std::vector<std::vector<int32_t>> out;
  if (prompt.is_string()) {
    out.push_back(tok.tokenize(prompt.get<std::string>(), true, true));
  } else if (prompt.is_array() && !prompt.empty() && prompt[0].is_string()) {
    for (const auto& p : prompt) out.push_back(tok.tokenize(p.get<std::string>(), true, true));
  } else {
    out.push_back(prompt.get<std::vector<int32_t>>());
  }
  return out;
}

void PrintTo(const Capture& c, std::ostream* os) {
  *os << c.path;
}

class GoldenCompletion : public ::testing::TestWithParam<Capture> {};

TEST_P(GoldenCompletion, SameTextAndCounts) {
  const json doc = json::parse(read_file(GetParam().path));
  const json& body = doc["request"]["body"];
  LoadedModel lm = load_with_context(shared_path("models/stories260K.gguf"), GetParam().slot_ctx);
  ASSERT_TRUE(lm.ctx);
  auto tok = tokenizer::Tokenizer::from_gguf(lm.model->metadata());
  ASSERT_TRUE(tok.is_ok()) << tok.status().to_string();
  const auto prompts = prompts_of(body["prompt"], *tok);
  const json responses =
      doc["response"].is_array() ? doc["response"] : json::array({doc["response"]});
  ASSERT_EQ(prompts.size(), responses.size());
  for (size_t i = 0; i < prompts.size(); ++i) {
    cli::GenerationRequest req;
    req.prompt = prompts[i];
    req.n_predict = body.value("n_predict", -1);
    req.sampling.temperature = body.value("temperature", 0.8f);
    if (body.contains("stop")) req.stop = body["stop"].get<std::vector<std::string>>();
    std::string streamed;
    auto res = cli::generate(*lm.ctx, *tok, req, [&](std::string_view t) { streamed += t; });
    ASSERT_TRUE(res.is_ok()) << res.status().to_string();
    const json& want = responses[i];
    EXPECT_EQ(res->content, want["content"].get<std::string>());
    EXPECT_EQ(streamed, res->content) << "streamed pieces must concatenate to the content";
    EXPECT_EQ(res->n_predicted, want["tokens_predicted"].get<int>());
    EXPECT_EQ(res->n_prompt, want["tokens_evaluated"].get<int>());
    EXPECT_EQ(res->stop_type, want["stop_type"].get<std::string>());
    EXPECT_EQ(res->stopping_word, want["stopping_word"].get<std::string>());
    EXPECT_EQ(res->truncated, want["truncated"].get<bool>());
  }
}

INSTANTIATE_TEST_SUITE_P(Captures, GoldenCompletion, ::testing::ValuesIn(qualifying_captures()),
                         [](const ::testing::TestParamInfo<Capture>& param_info) {
                           const auto p = std::filesystem::path(param_info.param.path);
                           std::string name =
                               p.parent_path().filename().string() + "_" + p.stem().string();
                           std::replace_if(
                               name.begin(), name.end(),
                               [](char c) { return !std::isalnum(static_cast<unsigned char>(c)); },
                               '_');
                           return name;
                         });

TEST(GoldenCompletionSuite, FindsCaptures) {
  EXPECT_GE(qualifying_captures().size(), 8u);
}

}  // namespace
}  // namespace hearth::test
