// cli.md section 3: LLAMA_ARG_* variables, LLAMA_ARG_NO_* for bool pairs, flag truthiness,
// precedence over the environment, appending options.
#include <gtest/gtest.h>

#include <string>

#include "unit/options/options_test_util.h"

namespace hearth::server::options {
namespace {

using test::has_warning;
using test::parse;
using test::parse_ok;

TEST(OptionsEnvTest, ValuesFromEnvironment) {
  ServerArgs a = parse_ok({}, {{"LLAMA_ARG_CTX_SIZE", "2048"},
                               {"LLAMA_ARG_N_PARALLEL", "3"},
                               {"LLAMA_ARG_HOST", "0.0.0.0"},
                               {"LLAMA_ARG_PORT", "9999"},
                               {"LLAMA_ARG_MODEL", "m.gguf"},
                               {"LLAMA_ARG_BATCH", "1024"},
                               {"LLAMA_ARG_UBATCH", "256"},
                               {"LLAMA_ARG_TOP_K", "7"},
                               {"LLAMA_ARG_CACHE_TYPE_K", "q8_0"},
                               {"LLAMA_ARG_THREADS", "2"}});
  EXPECT_EQ(a.n_ctx, 2048);
  EXPECT_EQ(a.n_parallel, 3);
  EXPECT_EQ(a.http.host, "0.0.0.0");
  EXPECT_EQ(a.http.port, 9999);
  EXPECT_EQ(a.model_path, "m.gguf");
  EXPECT_EQ(a.n_batch, 1024);
  EXPECT_EQ(a.n_ubatch, 256);
  EXPECT_EQ(a.defaults.sampling.top_k, 7);
  EXPECT_EQ(a.cache_type_k, "q8_0");
  EXPECT_EQ(a.n_threads, 2);
}

TEST(OptionsEnvTest, CommandLineOverridesWithWarning) {
  ParseOutcome out = parse({"--port", "1234"}, {{"LLAMA_ARG_PORT", "9999"}});
  ASSERT_EQ(out.action, ParseAction::kRun);
  EXPECT_EQ(out.args.http.port, 1234);
  EXPECT_TRUE(has_warning(out,
                          "warn: LLAMA_ARG_PORT environment variable is set, but will be "
                          "overwritten by command line argument --port"));
}

TEST(OptionsEnvTest, BoolPairTruthyAndFalsey) {
  EXPECT_FALSE(parse_ok({}, {{"LLAMA_ARG_CACHE_PROMPT", "false"}}).defaults.cache_prompt);
  EXPECT_FALSE(parse_ok({}, {{"LLAMA_ARG_ENDPOINT_SLOTS", "0"}}).endpoint_slots);
  EXPECT_TRUE(parse_ok({}, {{"LLAMA_ARG_KV_UNIFIED", "enabled"}}).kv_unified);
  EXPECT_FALSE(parse_ok({}, {{"LLAMA_ARG_CONT_BATCHING", "off"}}).cont_batching);
  ParseOutcome bad = parse({}, {{"LLAMA_ARG_CACHE_PROMPT", "yes"}});
  ASSERT_EQ(bad.action, ParseAction::kError);
  EXPECT_EQ(bad.exit_code, 1);
  EXPECT_EQ(bad.text,
            "error while handling environment variable \"LLAMA_ARG_CACHE_PROMPT\": invalid "
            "boolean value");
}

TEST(OptionsEnvTest, NoPrefixVariableMeansFalseAndWins) {
  EXPECT_FALSE(parse_ok({}, {{"LLAMA_ARG_NO_CACHE_PROMPT", ""}}).defaults.cache_prompt);
  EXPECT_FALSE(
      parse_ok({}, {{"LLAMA_ARG_NO_ENDPOINT_SLOTS", "whatever"}, {"LLAMA_ARG_ENDPOINT_SLOTS", "1"}})
          .endpoint_slots);
  ParseOutcome no_mmap = parse({}, {{"LLAMA_ARG_NO_MMAP", "1"}, {"LLAMA_ARG_MMAP", "1"}});
  EXPECT_EQ(no_mmap.args.load_mode, LoadMode::kNone);
  EXPECT_TRUE(has_warning(no_mmap, "DEPRECATED: --mmap and --no-mmap are deprecated"));
  // Only bool pairs have the alias: --metrics is a plain flag.
  EXPECT_FALSE(parse_ok({}, {{"LLAMA_ARG_NO_ENDPOINT_METRICS", "1"}}).endpoint_metrics);
}

TEST(OptionsEnvTest, FlagTruthiness) {
  EXPECT_TRUE(parse_ok({}, {{"LLAMA_ARG_ENDPOINT_METRICS", "1"}}).endpoint_metrics);
  EXPECT_TRUE(parse_ok({}, {{"LLAMA_ARG_ENDPOINT_PROPS", "on"}}).endpoint_props);
  EXPECT_TRUE(parse_ok({}, {{"LLAMA_ARG_OFFLINE", "true"}}).offline);
  // Anything else is silently ignored.
  EXPECT_FALSE(parse_ok({}, {{"LLAMA_ARG_ENDPOINT_METRICS", "yes"}}).endpoint_metrics);
  EXPECT_FALSE(parse_ok({}, {{"LLAMA_ARG_ENDPOINT_METRICS", "0"}}).endpoint_metrics);
  // A refused flag whose variable is falsey never fires.
  EXPECT_EQ(parse({}, {{"LLAMA_ARG_EMBEDDINGS", "0"}}).action, ParseAction::kRun);
}

TEST(OptionsEnvTest, ApiKeyVariableAppends) {
  ParseOutcome out = parse({"--api-key", "cli"}, {{"LLAMA_API_KEY", "env1,env2"}});
  ASSERT_EQ(out.action, ParseAction::kRun);
  EXPECT_EQ(out.args.api_keys, (std::vector<std::string>{"env1", "env2", "cli"}));
  EXPECT_TRUE(has_warning(out, "LLAMA_API_KEY environment variable is set"));
}

TEST(OptionsEnvTest, EmptyValueIsPassedToHandler) {
  EXPECT_EQ(parse_ok({}, {{"LLAMA_ARG_API_PREFIX", ""}}).api_prefix, "");
  ParseOutcome out = parse({}, {{"LLAMA_ARG_CTX_SIZE", ""}});
  ASSERT_EQ(out.action, ParseAction::kError);
  EXPECT_EQ(out.text.rfind("error while handling environment variable \"LLAMA_ARG_CTX_SIZE\"", 0),
            0u);
}

TEST(OptionsEnvTest, RemovedVariablesFail) {
  ParseOutcome out = parse({}, {{"LLAMA_ARG_DRAFT_MAX", "4"}});
  ASSERT_EQ(out.action, ParseAction::kError);
  EXPECT_EQ(out.text,
            "error while handling environment variable \"LLAMA_ARG_DRAFT_MAX\": the argument has "
            "been removed. use --spec-draft-n-max or --spec-ngram-mod-n-max");
  EXPECT_EQ(parse({}, {{"LLAMA_ARG_DRAFT_MIN", "1"}}).action, ParseAction::kError);
}

TEST(OptionsEnvTest, RefusedVariableNamesOption) {
  ParseOutcome out = parse({}, {{"LLAMA_ARG_ROPE_SCALING_TYPE", "yarn"}});
  ASSERT_EQ(out.action, ParseAction::kError);
  EXPECT_EQ(out.exit_code, 1);
  EXPECT_EQ(out.text.rfind("error: option '--rope-scaling' (from environment variable "
                           "LLAMA_ARG_ROPE_SCALING_TYPE) is not supported by hearth-server yet: ",
                           0),
            0u)
      << out.text;
  EXPECT_TRUE(parse({}, {{"LLAMA_ARG_EMBEDDINGS", "1"}}).args.embeddings);
  EXPECT_EQ(parse({}, {{"LLAMA_ARG_POOLING", "cls"}}).args.pooling, 2);
  EXPECT_EQ(parse({}, {{"LLAMA_ARG_PREFILL_ASSISTANT", "1"}}).action, ParseAction::kRun);
  EXPECT_FALSE(parse({}, {{"LLAMA_ARG_NO_PREFILL_ASSISTANT", ""}}).args.chat.prefill_assistant);
}

TEST(OptionsEnvTest, NoEffectVariablesWarn) {
  ParseOutcome out = parse({}, {{"LLAMA_ARG_N_GPU_LAYERS", "99"}});
  ASSERT_EQ(out.action, ParseAction::kRun);
  EXPECT_TRUE(has_warning(out, "LLAMA_ARG_N_GPU_LAYERS' has no effect"));
  EXPECT_EQ(parse({}, {{"LLAMA_ARG_SPLIT_MODE", "diagonal"}}).action, ParseAction::kError);
  EXPECT_TRUE(parse({}, {{"LLAMA_ARG_SWA_FULL", "true"}}).args.swa_full);
  // A falsey variable of a flag never fires, so the deprecated --mlock warns about nothing.
  EXPECT_TRUE(parse({}, {{"LLAMA_ARG_MLOCK", "0"}}).warnings.empty());
}

}  // namespace
}  // namespace hearth::server::options
