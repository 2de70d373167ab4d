// Each architecture added with issue 16 (and the Qwen-VL and LFM2 text models of issue 35) served
// end to end: hearth-server on the tiny model hearth-synth writes from a golden vectors file
// (tests/data/logits), asked for a greedy /completion of each of the file's prompts, answers
// the reference's greedy tokens (up to the first near tie, where either engine may go either
// way), and answers a chat completion.
#include <filesystem>

#include "server/server_fixture.h"
#include "support/process.h"

namespace hearth::test {
namespace {

class ServedArchitecture : public ::testing::TestWithParam<std::string> {
 protected:
  void SetUp() override {
    const std::string file =
        std::string(HEARTH_SOURCE_DIR) + "/tests/data/logits/" + GetParam() + ".json";
    vectors_ = Json::parse(read_file(file));
    dir_ = make_temp_dir("served-arch");
    std::vector<std::string> args{bin_dir() + "/hearth-synth"};
    for (const auto& a : vectors_["synth"]) {
      const std::string arg = a;
      args.push_back(arg.rfind("models/", 0) == 0 ? shared_path(arg) : arg);
      if (arg.rfind("models/", 0) == 0 && !file_exists(args.back()))
        GTEST_SKIP() << "SKIPPED: " << args.back() << " is missing";
    }
    args.insert(args.end(), {"-o", dir_ + "/model.gguf"});
    const ProcessResult r = run_process(args, 120);
    ASSERT_EQ(r.exit_code, 0) << r.err;
    std::vector<std::string> flags{"-m", dir_ + "/model.gguf", "-np", "2", "-c", "1024"};
    if (GetParam().find("gpt-oss") != std::string::npos) {  // its harmony chat template
      const std::string tmpl = shared_path("templates/openai-gpt-oss-120b.jinja");
      if (!file_exists(tmpl)) GTEST_SKIP() << "SKIPPED: " << tmpl << " is missing";
      flags.insert(flags.end(), {"--jinja", "--chat-template-file", tmpl});
    }
    ASSERT_TRUE(server_.start(flags)) << server_.log();
  }
  void TearDown() override {
    if (!dir_.empty()) std::filesystem::remove_all(dir_);
  }
  Json vectors_;
  std::string dir_;
  ServerProcess server_;
};

TEST_P(ServedArchitecture, CompletionFollowsTheReferenceGreedyPath) {
  // The golden logits test's tolerance for the weight type: gaps under it are near ties.
  const double tie = GetParam().find("-f16") != std::string::npos ? 0.02 : 0.1;
  size_t compared = 0;
  for (const Json& c : vectors_["cases"]) {
    const Json& steps = c["steps"];
    int status = 0;
    const Json r = post_json(server_.port(), "/completion",
                             Json{{"prompt", c["prompt"]},
                                  {"n_predict", steps.size()},
                                  {"temperature", 0},
                                  {"return_tokens", true}},
                             &status);
    ASSERT_EQ(status, 200) << r.dump();
    const Json& tokens = r["tokens"];
    for (size_t k = 0; k < steps.size() && k < tokens.size(); ++k) {
      const Json& top = steps[k]["top"];
      if (top[0][1].get<double>() - top[1][1].get<double>() < tie) break;
      EXPECT_EQ(tokens[k].get<int>(), steps[k]["token"].get<int>()) << c["prompt"] << " step " << k;
      ++compared;
    }
  }
  EXPECT_GE(compared, 2u) << "too few steps before near ties to compare";
}

TEST_P(ServedArchitecture, AnswersAChat) {
  int status = 0;
  const Json r = post_json(
      server_.port(), "/v1/chat/completions",
      Json{{"messages", Json::array({Json{{"role", "user"}, {"content", "Tell me a story"}}})},
           {"max_tokens", 8},
           {"temperature", 0}},
      &status);
  ASSERT_EQ(status, 200) << r.dump();
  // Eight tokens, or fewer ending at an end-of-generation token.
  const int n = r["usage"]["completion_tokens"].get<int>();
  EXPECT_TRUE(n == 8 || (n >= 1 && n < 8 && r["choices"][0]["finish_reason"] == "stop"))
      << r.dump();
  const Json& message = r["choices"][0]["message"];
  // A harmony model's text outside a final channel may come back as reasoning.
  EXPECT_TRUE(message["content"].is_string() || message.contains("reasoning_content")) << r.dump();
}

INSTANTIATE_TEST_SUITE_P(Issue16, ServedArchitecture,
                         ::testing::Values("tiny-gemma-f16", "tiny-gemma2-f16", "tiny-gemma3-q8_0",
                                           "tiny-granite-f16", "tiny-phi3-q8_0", "tiny-olmo2-f16",
                                           "tiny-qwen3moe-f16", "tiny-qwen2moe-q8_0",
                                           "tiny-olmoe-f16", "tiny-mixtral-f16",
                                           "tiny-mistral3-f16", "tiny-gpt-oss-q8_0",
                                           "tiny-gpt-oss-q4_k", "tiny-qwen2vl-f16",
                                           "tiny-qwen3vl-f16", "tiny-qwen3vlmoe-f16",
                                           "tiny-lfm2-f16", "tiny-lfm2moe-f16"),
                         [](const auto& param_info) {
                           std::string n = param_info.param;
                           for (char& ch : n)
                             if (ch == '-') ch = '_';
                           return n;
                         });

}  // namespace
}  // namespace hearth::test
