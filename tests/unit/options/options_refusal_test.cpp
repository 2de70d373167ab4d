// Options Hearth cannot honour yet are refused by name; their default values pass; the
// options removed upstream fail exactly as the reference does.
#include <gtest/gtest.h>

#include <string>

#include "unit/options/options_test_util.h"

namespace hearth::server::options {
namespace {

using test::parse;

TEST(OptionRefusalTest, ReasoningOptionsCheckTheirValues) {
  EXPECT_EQ(parse({"--reasoning-format", "deepseek"}).args.chat.reasoning_format, "deepseek");
  EXPECT_EQ(parse({"--reasoning-format", "bogus"})
                .text.rfind("error while handling argument \"--reasoning-format\": unknown "
                            "reasoning format: bogus\n",
                            0),
            0u);
  EXPECT_EQ(parse({"-rea", "off"}).args.chat.reasoning, 0);
  EXPECT_EQ(parse({"--reasoning", "on"}).args.chat.reasoning, 1);
  EXPECT_EQ(parse({"-rea", "maybe"}).action, ParseAction::kError);
  EXPECT_EQ(parse({"--reasoning-budget", "0"}).args.chat.reasoning_budget, 0);
  EXPECT_EQ(parse({"--reasoning-budget", "-2"}).action, ParseAction::kError);
  EXPECT_FALSE(parse({"--no-prefill-assistant"}).args.chat.prefill_assistant);
  EXPECT_TRUE(parse({"--skip-chat-parsing"}).args.chat.skip_chat_parsing);
  EXPECT_EQ(parse({"--no-reasoning-preserve"}).args.chat.reasoning_preserve, 0);
  EXPECT_EQ(parse({}).args.chat.reasoning_preserve, -1);
}

// A feature not built yet is refused naming what is missing and the issue that builds it.
TEST(OptionRefusalTest, DeferredOptionsNameWhatIsMissingAndTheIssue) {
  ParseOutcome out = parse({"--rope-scaling", "yarn"});
  ASSERT_EQ(out.action, ParseAction::kError);
  EXPECT_EQ(out.text,
            "error: option '--rope-scaling' is not supported by hearth-server yet: RoPE and YaRN "
            "overrides are not implemented; the model's own values are used (deferred to issue "
            "36)");
  EXPECT_NE(parse({"-dr", "ai/smollm2"}).text.find("Docker Hub downloads are not implemented"),
            std::string::npos);
  EXPECT_EQ(parse({"--context-shift"}).action, ParseAction::kError);
  EXPECT_EQ(parse({"--no-context-shift"}).action, ParseAction::kRun);
  EXPECT_EQ(parse({"--lora", "a.gguf"}).action, ParseAction::kError);
}

// The files are only read when the server listens (tests/server/tls_test.cpp checks the
// startup errors); parsing stores them.
TEST(OptionTlsTest, FilesAreStoredInTheHttpOptions) {
  ParseOutcome out = parse({"--ssl-key-file", "k.pem", "--ssl-cert-file", "c.pem"});
  ASSERT_EQ(out.action, ParseAction::kRun) << out.text;
  EXPECT_EQ(out.args.http.ssl_key_file, "k.pem");
  EXPECT_EQ(out.args.http.ssl_cert_file, "c.pem");
  EXPECT_TRUE(parse({}).args.http.ssl_key_file.empty());
}

TEST(OptionRefusalTest, EmbeddingOptionsAreHonoured) {
  EXPECT_FALSE(parse({}).args.embeddings);
  EXPECT_EQ(parse({}).args.pooling, -1) << "the model's pooling unless given";
  EXPECT_EQ(parse({}).args.embd_normalize, 2);
  EXPECT_TRUE(parse({"--embeddings"}).args.embeddings);
  EXPECT_EQ(parse({"--pooling", "mean"}).args.pooling, 1);
  EXPECT_EQ(parse({"--pooling", "last"}).args.pooling, 3);
  ParseOutcome bad = parse({"--pooling", "max"});
  ASSERT_EQ(bad.action, ParseAction::kError);
  EXPECT_NE(bad.text.find("invalid value"), std::string::npos) << bad.text;
  // --rerank is embeddings with rank pooling; a later --pooling still wins.
  ParseOutcome rerank = parse({"--rerank"});
  EXPECT_TRUE(rerank.args.embeddings);
  EXPECT_EQ(rerank.args.pooling, 4);
  EXPECT_EQ(parse({"--reranking", "--pooling", "cls"}).args.pooling, 2);
  EXPECT_EQ(parse({"--embd-normalize", "-1"}).args.embd_normalize, -1);
}

TEST(OptionRefusalTest, WebUiIsOnByDefaultAndConfigurable) {
  EXPECT_TRUE(parse({}).args.ui.enabled);
  for (const char* off : {"--no-ui", "--no-webui"})
    EXPECT_FALSE(parse({off}).args.ui.enabled) << off;
  for (const char* on : {"--ui", "--webui"})
    EXPECT_TRUE(parse({"--no-ui", on}).args.ui.enabled) << on;
  EXPECT_EQ(parse({"--path", "/srv/page"}).args.ui.static_path, "/srv/page");
  EXPECT_EQ(parse({"--ui-config", R"({"theme":"dark"})"}).args.ui_settings,
            Json({{"theme", "dark"}}));
  ParseOutcome bad = parse({"--webui-config", "{theme"});
  ASSERT_EQ(bad.action, ParseAction::kError);
  EXPECT_NE(bad.text.find("failed to parse UI config"), std::string::npos) << bad.text;
  ParseOutcome missing = parse({"--ui-config-file", "/no/such/ui.json"});
  ASSERT_EQ(missing.action, ParseAction::kError);
  EXPECT_NE(missing.text.find("failed to open file '/no/such/ui.json'"), std::string::npos);
  // Server-side agent tools stay refused.
  EXPECT_EQ(parse({"--tools", "all"}).action, ParseAction::kError);
}

TEST(OptionRefusalTest, DownloadOptionsAreParsedAndTheRepositoryChecked) {
  ParseOutcome out = parse({"-hf", "ggml-org/stories-GGUF:Q8_0", "-hff", "a.gguf", "-hft", "hf_x",
                            "-mu", "http://host/m.gguf", "--spec-draft-hf", "u/draft"});
  ASSERT_EQ(out.action, ParseAction::kRun) << out.text;
  EXPECT_EQ(out.args.hf_repo, "ggml-org/stories-GGUF:Q8_0");
  EXPECT_EQ(out.args.hf_file, "a.gguf");
  EXPECT_EQ(out.args.hf_token, "hf_x");
  EXPECT_EQ(out.args.model_url, "http://host/m.gguf");
  EXPECT_EQ(out.args.spec_draft_hf, "u/draft");
  EXPECT_EQ(parse({}, {{"HF_TOKEN", "hf_y"}}).args.hf_token, "hf_y");
  for (const char* bad : {"model-only", "a/b/c", "/model"}) {
    ParseOutcome refused = parse({"-hf", bad});
    ASSERT_EQ(refused.action, ParseAction::kError) << bad;
    EXPECT_NE(refused.text.find("invalid HF repo format, expected <user>/<model>[:quant]"),
              std::string::npos)
        << refused.text;
  }
  EXPECT_EQ(parse({"-hfd", "nope"}).action, ParseAction::kError);
}

TEST(OptionRefusalTest, DefaultValuesAreAccepted) {
  for (std::vector<std::string> args : std::vector<std::vector<std::string>>{
           {"--jinja"},
           {"--reasoning-format", "auto"},
           {"-rea", "auto"},
           {"--spec-type", "none"},
           {"--embd-normalize", "2"},
           {"--spec-draft-type-k", "f16"},
       }) {
    EXPECT_EQ(parse(args).action, ParseAction::kRun) << args[0];
  }
}

TEST(OptionRefusalTest, RemovedOptionsFailWithReplacementHint) {
  struct Case {
    std::vector<std::string> spellings;
    std::string hint;
  };
  const Case cases[] = {
      {{"--draft", "--draft-n", "--draft-max"}, "use --spec-draft-n-max or --spec-ngram-mod-n-max"},
      {{"--draft-min", "--draft-n-min"}, "use --spec-draft-n-min or --spec-ngram-mod-n-min"},
      {{"--spec-ngram-size-n"}, "use --spec-ngram-*-size-n"},
      {{"--spec-ngram-size-m"}, "use --spec-ngram-*-size-m"},
      {{"--spec-ngram-min-hits"}, "use --spec-ngram-*-min-hits"},
  };
  for (const Case& c : cases) {
    for (const std::string& spelling : c.spellings) {
      ParseOutcome out = parse({spelling, "4"});
      ASSERT_EQ(out.action, ParseAction::kError) << spelling;
      EXPECT_EQ(out.exit_code, 1);
      EXPECT_EQ(out.text.rfind("error while handling argument \"" + spelling +
                                   "\": the argument has been removed. " + c.hint,
                               0),
                0u)
          << out.text;
    }
  }
}

}  // namespace
}  // namespace hearth::server::options
