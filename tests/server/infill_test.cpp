// POST /infill on a model whose vocabulary has fill-in-the-middle tokens: a tiny
// random-weight model synthesized with StarCoder's vocabulary.
#include <filesystem>

#include "server/server_fixture.h"
#include "support/process.h"

namespace hearth::test {
namespace {

class ServerInfill : public ::testing::Test {
 protected:
  void SetUp() override {
    model_ = make_temp_dir("infill") + "/fim.gguf";
    const std::string& model = model_;
    ProcessResult synth = run_process({bin_dir() + "/hearth-synth",
                                       "--vocab",
                                       shared_path("models/vocab/ggml-vocab-starcoder.gguf"),
                                       "--arch",
                                       "llama",
                                       "--n-embd",
                                       "64",
                                       "--n-layer",
                                       "1",
                                       "--n-head",
                                       "2",
                                       "--n-head-kv",
                                       "1",
                                       "--n-ff",
                                       "128",
                                       "--ctx",
                                       "1024",
                                       "--type",
                                       "f32",
                                       "-o",
                                       model});
    ASSERT_EQ(synth.exit_code, 0) << synth.err;
    ASSERT_TRUE(server_.start({"-m", model, "-np", "1", "-c", "1024"})) << server_.log();
  }
  std::string model_;
  ServerProcess server_;
};

TEST_F(ServerInfill, AssemblesPrefixPromptSuffixMiddle) {
  int status = 0;
  Json r = post_json(server_.port(), "/infill",
                     Json{{"input_prefix", "def f("},
                          {"input_suffix", "):\n"},
                          {"prompt", "x"},
                          {"n_predict", 4},
                          {"temperature", 0}},
                     &status);
  ASSERT_EQ(status, 200) << r.dump();
  const std::string prompt = r["prompt"];
  const std::string tail = "<fim_prefix>def f(x<fim_suffix>):\n<fim_middle>";
  ASSERT_GE(prompt.size(), tail.size()) << prompt;
  EXPECT_EQ(prompt.substr(prompt.size() - tail.size()), tail) << prompt;
  EXPECT_EQ(r["tokens_predicted"], 4);
  EXPECT_EQ(r["stop_type"], "limit");
}

// --log-prompts-dir writes the assembled prompt's token ids, as indented JSON.
TEST_F(ServerInfill, PromptsDirGetsTheAssembledTokens) {
  const std::string dir = make_temp_dir("infill_prompts");
  ServerProcess logged;
  ASSERT_TRUE(logged.start({"-m", model_, "-np", "1", "-c", "1024", "--log-prompts-dir", dir}))
      << logged.log();
  int status = 0;
  Json r = post_json(logged.port(), "/infill",
                     Json{{"input_prefix", "def f("}, {"input_suffix", "):\n"}, {"n_predict", 1}},
                     &status);
  ASSERT_EQ(status, 200) << r.dump();
  std::vector<std::filesystem::path> files;
  for (const auto& entry : std::filesystem::directory_iterator(dir)) files.push_back(entry.path());
  ASSERT_EQ(files.size(), 1u);
  const std::string text = read_file(files[0].string());
  const Json tokens = parse_or_null(text);
  ASSERT_TRUE(tokens.is_array()) << text;
  EXPECT_EQ(text, tokens.dump(2));
  // The ids are the prompt the answer reports.
  const Json back = post_json(logged.port(), "/detokenize", Json{{"tokens", tokens}});
  EXPECT_EQ(back["content"], r["prompt"]);
  std::filesystem::remove_all(dir);
}

TEST_F(ServerInfill, RejectsMalformedInput) {
  int status = 0;
  // The reference means to answer this 400 but fails later with a 500 (differences.json).
  Json r = post_json(server_.port(), "/infill", Json{{"input_suffix", "b"}}, &status);
  EXPECT_EQ(status, 400);
  EXPECT_EQ(r["error"]["message"], "\"input_prefix\" is required");
  r = post_json(server_.port(), "/infill",
                Json{{"input_prefix", "a"}, {"input_suffix", "b"}, {"input_extra", "x"}}, &status);
  EXPECT_EQ(status, 400);
  EXPECT_EQ(r["error"]["message"],
            "\"input_extra\" must be an array of {\"filename\": string, \"text\": string}");
  r = post_json(server_.port(), "/infill",
                Json{{"input_prefix", "a"},
                     {"input_suffix", "b"},
                     {"input_extra", Json::array({Json{{"filename", "f"}}})}},
                &status);
  EXPECT_EQ(status, 400);
  EXPECT_EQ(r["error"]["message"],
            "extra_context chunk must contain a \"text\" field with a string value");
}

}  // namespace
}  // namespace hearth::test
