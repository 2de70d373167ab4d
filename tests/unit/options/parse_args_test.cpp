// Core serving options: defaults, values, help, version and the refusals.
#include <gtest/gtest.h>

#include <climits>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <string>
#include <tuple>
#include <utility>

#include "server/options/option_table.h"
#include "support/test_paths.h"
#include "unit/options/options_test_util.h"

namespace hearth::server::options {
namespace {

using test::has_warning;
using test::parse;
using test::parse_ok;

TEST(ParseArgsTest, DefaultsMatchReference) {
  ServerArgs a = parse_ok({});
  EXPECT_EQ(a.model_path, "");
  EXPECT_TRUE(a.aliases.empty());
  EXPECT_EQ(a.http.host, "127.0.0.1");
  EXPECT_EQ(a.http.port, 8080);
  EXPECT_EQ(a.n_ctx, 0);
  EXPECT_EQ(a.n_parallel, -1);
  EXPECT_EQ(resolved_n_slots(a), 4);
  EXPECT_TRUE(resolved_kv_unified(a));
  EXPECT_FALSE(a.kv_unified);
  EXPECT_EQ(a.n_batch, 2048);
  EXPECT_EQ(a.n_ubatch, 512);
  EXPECT_FALSE(a.n_threads.has_value());
  EXPECT_FALSE(a.n_threads_batch.has_value());
  EXPECT_EQ(a.defaults.n_predict, -1);
  EXPECT_EQ(a.defaults.n_keep, 0);
  EXPECT_TRUE(a.api_keys.empty());
  EXPECT_EQ(a.http.timeout_seconds, 3600);
  EXPECT_FALSE(a.endpoint_metrics);
  EXPECT_TRUE(a.endpoint_slots);
  EXPECT_FALSE(a.endpoint_props);
  EXPECT_EQ(a.slot_save_path, "");
  EXPECT_EQ(a.defaults.n_cache_reuse, 0);
  EXPECT_TRUE(a.defaults.cache_prompt);
  EXPECT_EQ(a.cache_ram_mib, 8192);
  EXPECT_TRUE(a.cache_idle_slots);
  EXPECT_FLOAT_EQ(a.slot_prompt_similarity, 0.10f);
  EXPECT_TRUE(a.cont_batching);
  EXPECT_EQ(a.cache_type_k, "f16");
  EXPECT_EQ(a.cache_type_v, "f16");
  EXPECT_FALSE(a.context_shift);
  EXPECT_EQ(a.defaults.sampling.seed, kDefaultSeed);
  EXPECT_FLOAT_EQ(a.defaults.sampling.temperature, 0.8f);
  EXPECT_EQ(a.defaults.sampling.top_k, 40);
  EXPECT_FLOAT_EQ(a.defaults.sampling.top_p, 0.95f);
  EXPECT_FLOAT_EQ(a.defaults.sampling.min_p, 0.05f);
  EXPECT_TRUE(a.defaults.stop.empty());
  EXPECT_FALSE(a.special);
  EXPECT_EQ(a.api_prefix, "");
  EXPECT_EQ(a.cors_origins, "*");
  EXPECT_EQ(a.defaults.sse_ping_interval, 30);
  EXPECT_EQ(a.verbosity, 3);
  EXPECT_EQ(a.log_file, "");
}

TEST(ParseArgsTest, ModelAndAlias) {
  ServerArgs a = parse_ok({"-m", "models/x.gguf", "-a", " one , ,two "});
  EXPECT_EQ(a.model_path, "models/x.gguf");
  EXPECT_EQ(a.aliases, (std::vector<std::string>{"one", "two"}));
  EXPECT_EQ(parse_ok({"--model", "y.gguf", "--alias", "z"}).aliases,
            (std::vector<std::string>{"z"}));
}

TEST(ParseArgsTest, NetworkOptions) {
  ServerArgs a = parse_ok({"--host", "0.0.0.0", "--port", "0", "-to", "30", "--api-prefix", "/llm",
                           "--sse-ping-interval", "-1"});
  EXPECT_EQ(a.http.host, "0.0.0.0");
  EXPECT_EQ(a.http.port, 0);
  EXPECT_EQ(a.http.timeout_seconds, 30);
  EXPECT_EQ(a.api_prefix, "/llm");
  EXPECT_EQ(a.defaults.sse_ping_interval, -1);
  ServerArgs c = parse_ok({"--cors-origins", "localhost", "--cors-methods", "GET", "--cors-headers",
                           "X-A", "--no-cors-credentials"});
  EXPECT_EQ(c.cors_origins, "localhost");
  EXPECT_TRUE(c.cors_origins_set);
  EXPECT_EQ(c.cors_methods, "GET");
  EXPECT_EQ(c.cors_headers, "X-A");
  EXPECT_FALSE(c.cors_credentials);
}

TEST(ParseArgsTest, ContextAndSlots) {
  ServerArgs a = parse_ok({"-c", "8192", "-np", "2", "-n", "128", "--keep", "-1"});
  EXPECT_EQ(a.n_ctx, 8192);
  EXPECT_EQ(a.n_parallel, 2);
  EXPECT_EQ(resolved_n_slots(a), 2);
  EXPECT_FALSE(resolved_kv_unified(a));
  EXPECT_EQ(a.defaults.n_predict, 128);
  EXPECT_EQ(a.defaults.n_keep, -1);
  EXPECT_TRUE(resolved_kv_unified(parse_ok({"-np", "3", "-kvu"})));
  EXPECT_FALSE(parse_ok({"-kvu", "-no-kvu"}).kv_unified);
  EXPECT_TRUE(parse_ok({"--kv-unified"}).kv_unified);
  EXPECT_FALSE(a.swa_full);
  EXPECT_TRUE(parse_ok({"--swa-full"}).swa_full);
  ParseOutcome zero = parse({"-np", "0"});
  EXPECT_EQ(zero.action, ParseAction::kError);
  EXPECT_NE(zero.text.find("invalid value for n_parallel"), std::string::npos);
}

TEST(ParseArgsTest, BatchingAndThreads) {
  ServerArgs a = parse_ok({"-b", "512", "-ub", "64", "-t", "3", "-tb", "-1", "-nocb"});
  EXPECT_EQ(a.n_batch, 512);
  EXPECT_EQ(a.n_ubatch, 64);
  EXPECT_EQ(a.n_threads, 3);
  EXPECT_EQ(a.n_threads_batch, -1);  // explicit: all logical CPUs
  EXPECT_FALSE(a.cont_batching);
  EXPECT_TRUE(parse_ok({"--no-cont-batching", "-cb"}).cont_batching);
  EXPECT_EQ(parse_ok({"--threads", "-1"}).n_threads, -1);
}

TEST(ParseArgsTest, Repack) {
  EXPECT_TRUE(parse_ok({}).repack);
  EXPECT_FALSE(parse_ok({"-nr"}).repack);
  EXPECT_FALSE(parse_ok({"--no-repack"}).repack);
  EXPECT_TRUE(parse_ok({"-nr", "--repack"}).repack);
}

TEST(ParseArgsTest, KvCacheTypes) {
  for (const char* type : {"f32", "f16", "bf16", "q8_0"}) {
    ServerArgs a = parse_ok({"-ctk", type, "-ctv", type});
    EXPECT_EQ(a.cache_type_k, type);
    EXPECT_EQ(a.cache_type_v, type);
  }
  ParseOutcome q4 = parse({"-ctk", "q4_0"});
  ASSERT_EQ(q4.action, ParseAction::kError);
  EXPECT_NE(q4.text.find("f32, f16, bf16, q8_0"), std::string::npos) << q4.text;
  ParseOutcome bogus = parse({"--cache-type-v", "q3_k"});
  ASSERT_EQ(bogus.action, ParseAction::kError);
  EXPECT_NE(bogus.text.find("Unsupported cache type: q3_k"), std::string::npos) << bogus.text;
}

TEST(ParseArgsTest, FlashAttentionValidatedWithoutEffect) {
  ParseOutcome on = parse({"-fa", "on"});
  ASSERT_EQ(on.action, ParseAction::kRun);
  EXPECT_TRUE(has_warning(on, "has no effect"));
  EXPECT_TRUE(on.args == parse_ok({})) << "nothing is stored";
  EXPECT_TRUE(parse_ok({"--flash-attn", "disabled"}) == parse_ok({}));
  EXPECT_EQ(parse({"-fa", "-1"}).action, ParseAction::kRun);
  EXPECT_EQ(parse({"-fa", "maybe"}).action, ParseAction::kError);
}

// -lm names the load mode; its value is checked.
TEST(ParseArgsTest, LoadModeSetsTheMode) {
  EXPECT_EQ(parse_ok({}).load_mode, LoadMode::kAuto);
  const std::pair<std::string, LoadMode> cases[] = {
      {"auto", LoadMode::kAuto},
      {"none", LoadMode::kNone},
      {"mmap", LoadMode::kMmap},
      {"mlock", LoadMode::kMlock},
      {"mmap+mlock", LoadMode::kMmapMlock},
      {"dio", LoadMode::kDirectIo},
  };
  for (const auto& [name, mode] : cases) {
    ParseOutcome out = parse({"-lm", name});
    ASSERT_EQ(out.action, ParseAction::kRun) << name << ": " << out.text;
    EXPECT_EQ(out.args.load_mode, mode) << name;
    EXPECT_TRUE(out.warnings.empty()) << name;
    EXPECT_EQ(parse({"--load-mode", name}).args.load_mode, mode) << name;
  }
  ParseOutcome bad = parse({"-lm", "fast"});
  ASSERT_EQ(bad.action, ParseAction::kError);
  EXPECT_NE(bad.text.find("unknown load mode 'fast'"), std::string::npos) << bad.text;
}

// The deprecated spellings set the same mode with the reference's warning; the last option
// given wins, and mixing them with -lm on the command line warns once more.
TEST(ParseArgsTest, LoadModeAliasesWarnAndTheLastWins) {
  const std::tuple<std::string, LoadMode, std::string> cases[] = {
      {"--mlock", LoadMode::kMlock, "DEPRECATED: --mlock is deprecated. use --load-mode mlock"},
      {"--mmap", LoadMode::kMmap, "DEPRECATED: --mmap and --no-mmap are deprecated"},
      {"--no-mmap", LoadMode::kNone, "DEPRECATED: --mmap and --no-mmap are deprecated"},
      {"-dio", LoadMode::kDirectIo, "DEPRECATED: --direct-io and --no-direct-io are deprecated"},
      {"--direct-io", LoadMode::kDirectIo, "use --load-mode dio instead"},
      {"-ndio", LoadMode::kNone, "DEPRECATED: --direct-io and --no-direct-io are deprecated"},
      {"--no-direct-io", LoadMode::kNone, "use --load-mode dio instead"},
  };
  for (const auto& [arg, mode, warning] : cases) {
    ParseOutcome out = parse({arg});
    ASSERT_EQ(out.action, ParseAction::kRun) << arg << ": " << out.text;
    EXPECT_EQ(out.args.load_mode, mode) << arg;
    EXPECT_TRUE(has_warning(out, warning)) << arg;
    EXPECT_FALSE(has_warning(out, "should not be combined")) << arg;
  }
  const std::string mixed =
      "`--load-mode` and `--mlock`/`--mmap`/`--direct-io` should not be "
      "combined; only the last flag on the command line will take effect";
  ParseOutcome alias_last = parse({"-lm", "mmap", "--no-mmap"});
  EXPECT_EQ(alias_last.args.load_mode, LoadMode::kNone);
  EXPECT_TRUE(has_warning(alias_last, mixed));
  ParseOutcome mode_last = parse({"--mlock", "-dio", "--load-mode", "mmap+mlock"});
  EXPECT_EQ(mode_last.args.load_mode, LoadMode::kMmapMlock);
  EXPECT_TRUE(has_warning(mode_last, mixed));
  EXPECT_EQ(parse({"--mlock", "--no-mmap"}).args.load_mode, LoadMode::kNone);
}

TEST(ParseArgsTest, WarmupAndCheckTensors) {
  const ServerArgs defaults = parse_ok({});
  EXPECT_TRUE(defaults.warmup);
  EXPECT_FALSE(defaults.check_tensors);
  ParseOutcome off = parse({"--no-warmup", "--check-tensors"});
  ASSERT_EQ(off.action, ParseAction::kRun) << off.text;
  EXPECT_FALSE(off.args.warmup);
  EXPECT_TRUE(off.args.check_tensors);
  EXPECT_TRUE(off.warnings.empty());
  EXPECT_TRUE(parse({"--no-warmup", "--warmup"}).args.warmup);
}

// Options whose subject Hearth does not have are accepted with a warning naming them.
TEST(ParseArgsTest, NoEffectOptionsWarn) {
  struct Case {
    std::vector<std::string> args;
    std::string note;
  };
  const Case cases[] = {
      {{"--gpu-layers", "99"}, "CPU-only build"},
      {{"--no-op-offload"}, "CPU-only build"},
      {{"--flash-attn", "on"}, "single attention path"},
  };
  for (const Case& c : cases) {
    ParseOutcome out = parse(c.args);
    ASSERT_EQ(out.action, ParseAction::kRun) << c.args[0] << ": " << out.text;
    EXPECT_TRUE(has_warning(out, "option '" + c.args[0] + "' has no effect in hearth-server: "))
        << c.args[0];
    EXPECT_TRUE(has_warning(out, c.note)) << c.args[0];
  }
  // Values are still validated as the reference validates them.
  EXPECT_EQ(parse({"--threads-http", "many"}).action, ParseAction::kError);
  // The HTTP layer's options are honoured (no warning).
  ParseOutcome http = parse({"--reuse-port", "--threads-http", "6"});
  ASSERT_EQ(http.action, ParseAction::kRun);
  EXPECT_TRUE(http.args.http.reuse_port);
  EXPECT_EQ(http.args.threads_http, 6);
  EXPECT_TRUE(http.warnings.empty());
  EXPECT_EQ(parse({"--log-colors", "sometimes"}).action, ParseAction::kError);
}

TEST(SpecOptionsTest, SpecTypeList) {
  EXPECT_FALSE(uses_spec_type(parse_ok({}), "ngram-simple"));
  EXPECT_TRUE(uses_spec_type(parse_ok({"--spec-type", "ngram-simple"}), "ngram-simple"));
  EXPECT_TRUE(uses_spec_type(parse_ok({"--spec-type", "none", "--spec-type", "ngram-simple"}),
                             "ngram-simple"));
  // A list naming none contributes nothing.
  EXPECT_FALSE(uses_spec_type(parse_ok({"--spec-type", "ngram-simple,none"}), "ngram-simple"));
  const auto error_of = [](std::vector<std::string> args) { return parse(args).text; };
  EXPECT_NE(error_of({"--spec-type", "ngram-bogus"}).find("unknown speculative type: ngram-bogus"),
            std::string::npos);
  const ServerArgs all =
      parse_ok({"--spec-type", "ngram-simple,ngram-map-k,ngram-map-k4v,ngram-mod,ngram-cache"});
  for (const char* type :
       {"ngram-simple", "ngram-map-k", "ngram-map-k4v", "ngram-mod", "ngram-cache"})
    EXPECT_TRUE(uses_spec_type(all, type)) << type;
  // The echo lists every type as given after the initial none, as the reference's does.
  EXPECT_EQ(spec_type_names(parse_ok({})), "none");
  const ServerArgs both = parse_ok({"--spec-type", "ngram-mod,ngram-simple"});
  EXPECT_TRUE(uses_spec_type(both, "ngram-simple") && uses_spec_type(both, "ngram-mod"));
  EXPECT_EQ(spec_type_names(both), "none,ngram-mod,ngram-simple");
  EXPECT_EQ(spec_type_names(parse_ok({"--spec-type", "ngram-simple,none"})), "none,none");
  EXPECT_NE(error_of({"--spec-type", "draft-mtp"}).find("needs multi-token-prediction layers"),
            std::string::npos);
  EXPECT_EQ(parse({"--spec-type", "draft-eagle3"}).action, ParseAction::kError);
}

TEST(SpecOptionsTest, NgramSimpleSizes) {
  const ServerArgs a = parse_ok({"--spec-ngram-simple-size-n", "4", "--spec-ngram-simple-size-m",
                                 "16", "--spec-ngram-simple-min-hits", "3"});
  EXPECT_EQ(a.spec_ngram_simple_n, 4);
  EXPECT_EQ(a.spec_ngram_simple_m, 16);
  EXPECT_EQ(parse_ok({}).spec_ngram_simple_n, 12);
  EXPECT_EQ(parse_ok({}).spec_ngram_simple_m, 48);
  EXPECT_NE(parse({"--spec-ngram-simple-size-n", "0"})
                .text.find("ngram size N must be between 1 and 1024 inclusive"),
            std::string::npos);
  EXPECT_NE(parse({"--spec-ngram-simple-size-m", "1025"})
                .text.find("ngram size M must be between 1 and 1024 inclusive"),
            std::string::npos);
  EXPECT_NE(
      parse({"--spec-ngram-simple-min-hits", "0"}).text.find("ngram min hits must be at least 1"),
      std::string::npos);
  EXPECT_TRUE(has_warning(parse({"--spec-ngram-simple-min-hits", "2"}), "does not read it either"));
}

TEST(SpecOptionsTest, NgramModSizesAndTheDefaultConfiguration) {
  const ServerArgs a = parse_ok({"--spec-type", "ngram-mod", "--spec-ngram-mod-n-match", "8",
                                 "--spec-ngram-mod-n-min", "0", "--spec-ngram-mod-n-max", "16"});
  EXPECT_TRUE(uses_spec_type(a, "ngram-mod"));
  EXPECT_EQ(a.spec_ngram_mod_n_match, 8);
  EXPECT_EQ(a.spec_ngram_mod_n_min, 0);
  EXPECT_EQ(a.spec_ngram_mod_n_max, 16);
  EXPECT_NE(parse({"--spec-ngram-mod-n-min", "-1"})
                .text.find("ngram n-min must be between 0 and 1024 inclusive"),
            std::string::npos);
  EXPECT_NE(parse({"--spec-ngram-mod-n-max", "2000"})
                .text.find("ngram n-max must be between 0 and 1024 inclusive"),
            std::string::npos);
  EXPECT_NE(parse({"--spec-ngram-mod-n-match", "0"})
                .text.find("ngram size N must be between 1 and 1024 inclusive"),
            std::string::npos);
  const ServerArgs d = parse_ok({"--spec-ngram-mod-n-match", "8", "--spec-default"});
  EXPECT_TRUE(uses_spec_type(d, "ngram-mod"));
  EXPECT_EQ(d.spec_ngram_mod_n_match, 24);
  EXPECT_EQ(d.spec_ngram_mod_n_min, 48);
  EXPECT_EQ(d.spec_ngram_mod_n_max, 64);
  EXPECT_EQ(spec_type_names(d), "none,ngram-mod");
}

TEST(SpecOptionsTest, NgramMapSizesAndLookupCaches) {
  const ServerArgs a =
      parse_ok({"--spec-type", "ngram-map-k,ngram-map-k4v", "--spec-ngram-map-k-size-n", "4",
                "--spec-ngram-map-k-size-m", "9", "--spec-ngram-map-k-min-hits", "2",
                "--spec-ngram-map-k4v-size-n", "5", "--spec-ngram-map-k4v-size-m", "10",
                "--spec-ngram-map-k4v-min-hits", "3"});
  EXPECT_EQ(a.spec_ngram_map_k.size_n, 4);
  EXPECT_EQ(a.spec_ngram_map_k.size_m, 9);
  EXPECT_EQ(a.spec_ngram_map_k.min_hits, 2);
  EXPECT_EQ(a.spec_ngram_map_k4v.size_n, 5);
  EXPECT_EQ(a.spec_ngram_map_k4v.size_m, 10);
  EXPECT_EQ(a.spec_ngram_map_k4v.min_hits, 3);
  const ServerArgs d = parse_ok({});
  EXPECT_EQ(d.spec_ngram_map_k.size_n, 12);
  EXPECT_EQ(d.spec_ngram_map_k4v.size_m, 48);
  EXPECT_EQ(d.spec_ngram_map_k4v.min_hits, 1);
  EXPECT_NE(parse({"--spec-ngram-map-k-size-n", "0"})
                .text.find("ngram size N must be between 1 and 1024 inclusive"),
            std::string::npos);
  EXPECT_NE(parse({"--spec-ngram-map-k4v-size-m", "1025"})
                .text.find("ngram size M must be between 1 and 1024 inclusive"),
            std::string::npos);
  EXPECT_NE(
      parse({"--spec-ngram-map-k4v-min-hits", "0"}).text.find("ngram min hits must be at least 1"),
      std::string::npos);
  const ServerArgs c = parse_ok({"--spec-type", "ngram-cache", "-lcs", "static.bin",
                                 "--lookup-cache-dynamic", "dynamic.bin"});
  EXPECT_EQ(c.lookup_cache_static, "static.bin");
  EXPECT_EQ(c.lookup_cache_dynamic, "dynamic.bin");
}

TEST(SpecOptionsTest, DraftModelOptions) {
  const ServerArgs a =
      parse_ok({"--spec-type", "draft-simple", "-md", "draft.gguf", "--spec-draft-n-max", "8",
                "--spec-draft-n-min", "2", "--spec-draft-p-min", "0.75", "-ctkd", "q8_0", "-ctvd",
                "bf16", "-td", "3", "-tbd", "4"});
  EXPECT_TRUE(uses_spec_type(a, "draft-simple"));
  EXPECT_EQ(a.spec_draft_model, "draft.gguf");
  EXPECT_EQ(a.spec_draft_n_max, 8);
  EXPECT_EQ(a.spec_draft_n_min, 2);
  EXPECT_FLOAT_EQ(a.spec_draft_p_min, 0.75f);
  EXPECT_EQ(a.spec_draft_type_k, "q8_0");
  EXPECT_EQ(a.spec_draft_type_v, "bf16");
  EXPECT_EQ(a.spec_draft_threads, 3);
  EXPECT_EQ(a.spec_draft_threads_batch, 4);
  EXPECT_GT(parse_ok({"-td", "0"}).spec_draft_threads, 0) << "<= 0: all logical CPUs";
  EXPECT_EQ(spec_type_names(a), "none,draft-simple");
  const ServerArgs d = parse_ok({});
  EXPECT_EQ(d.spec_draft_n_max, 3);
  EXPECT_EQ(d.spec_draft_type_k, "f16");
  EXPECT_NE(parse({"--spec-draft-n-max", "-1"}).text.find("invalid value"), std::string::npos);
  EXPECT_NE(parse({"-ctkd", "q4_0"}).text.find("is not supported by hearth-server"),
            std::string::npos);
  EXPECT_TRUE(has_warning(parse({"--spec-draft-p-split", "0.3"}), "does not read it either"));
}

TEST(ParseArgsTest, PromptCacheOptions) {
  ServerArgs a = parse_ok({"--no-cache-prompt", "--cache-reuse", "0", "-cram", "-1",
                           "--no-cache-idle-slots", "-sps", "0.5"});
  EXPECT_FALSE(a.defaults.cache_prompt);
  EXPECT_EQ(a.defaults.n_cache_reuse, 0);
  EXPECT_EQ(a.cache_ram_mib, -1);
  EXPECT_FALSE(a.cache_idle_slots);
  EXPECT_FLOAT_EQ(a.slot_prompt_similarity, 0.5f);
}

TEST(ParseArgsTest, EndpointSwitches) {
  std::string dir = hearth::test::make_temp_dir("options_slots");
  ServerArgs a = parse_ok({"--metrics", "--props", "--no-slots", "--slot-save-path", dir});
  EXPECT_TRUE(a.endpoint_metrics);
  EXPECT_TRUE(a.endpoint_props);
  EXPECT_FALSE(a.endpoint_slots);
  EXPECT_EQ(a.slot_save_path, dir + "/");
  ParseOutcome missing = parse({"--slot-save-path", dir + "/does-not-exist"});
  EXPECT_EQ(missing.action, ParseAction::kError);
  std::filesystem::remove_all(dir);
}

TEST(ParseArgsTest, SamplingDefaults) {
  ServerArgs a = parse_ok({"-s", "42", "--temp", "0.2", "--top-k", "5", "--top-p", "0.5", "--min-p",
                           "0.01", "-l", "15043+1.5", "-l", "7-inf"});
  EXPECT_EQ(a.defaults.sampling.seed, 42u);
  EXPECT_FLOAT_EQ(a.defaults.sampling.temperature, 0.2f);
  EXPECT_EQ(a.defaults.sampling.top_k, 5);
  EXPECT_FLOAT_EQ(a.defaults.sampling.top_p, 0.5f);
  EXPECT_FLOAT_EQ(a.defaults.sampling.min_p, 0.01f);
  ASSERT_EQ(a.defaults.sampling.logit_bias.size(), 2u);
  EXPECT_EQ(a.defaults.sampling.logit_bias[0].first, 15043);
  EXPECT_FLOAT_EQ(a.defaults.sampling.logit_bias[0].second, 1.5f);
  EXPECT_EQ(a.defaults.sampling.logit_bias[1].first, 7);
  EXPECT_TRUE(std::isinf(a.defaults.sampling.logit_bias[1].second) &&
              a.defaults.sampling.logit_bias[1].second < 0);
  EXPECT_FLOAT_EQ(parse_ok({"--temperature", "-3"}).defaults.sampling.temperature, 0.0f);
  EXPECT_EQ(parse_ok({"--seed", "-1"}).defaults.sampling.seed, kDefaultSeed);
  EXPECT_EQ(parse({"-l", "15043*2"}).action, ParseAction::kError);
}

TEST(ParseArgsTest, ReversePromptsAndEscapes) {
  ServerArgs a = parse_ok({"-r", "User:\\n", "--reverse-prompt", "\\x41\\t"});
  EXPECT_EQ(a.defaults.stop, (std::vector<std::string>{"User:\n", "A\t"}));
  ServerArgs raw = parse_ok({"-r", "a\\nb", "--no-escape"});
  EXPECT_EQ(raw.defaults.stop, (std::vector<std::string>{"a\\nb"}));
  EXPECT_TRUE(parse_ok({"-sp"}).special);
  EXPECT_TRUE(parse_ok({"--special"}).special);
}

TEST(ParseArgsTest, LoggingOptions) {
  ParseOutcome out = parse({"-lv", "5", "--log-file", "out.log", "--log-colors", "off",
                            "--no-log-prefix", "--no-log-timestamps", "--log-disable"});
  ASSERT_EQ(out.action, ParseAction::kRun) << out.text;
  const ServerArgs& a = out.args;
  EXPECT_EQ(a.verbosity, 5);
  EXPECT_EQ(a.log_file, "out.log");
  EXPECT_TRUE(a.log_disable);
  EXPECT_EQ(a.log_colors, TriState::kOff);
  EXPECT_FALSE(a.log_prefix);
  EXPECT_FALSE(a.log_timestamps);
  EXPECT_TRUE(out.warnings.empty());
  // llama-server's defaults: prefix and timestamps on, colours when on a terminal.
  const ServerArgs defaults = parse_ok({});
  EXPECT_EQ(defaults.log_colors, TriState::kAuto);
  EXPECT_TRUE(defaults.log_prefix);
  EXPECT_TRUE(defaults.log_timestamps);
  EXPECT_TRUE(parse_ok({"--log-prefix"}).log_prefix);
  EXPECT_EQ(parse_ok({"--log-colors", "on"}).log_colors, TriState::kOn);
  EXPECT_EQ(parse_ok({"--log-colors", "auto"}).log_colors, TriState::kAuto);

  // --log-prompts-dir creates the directory with its parents; one that cannot be made is an
  // error naming it.
  const std::string dir = hearth::test::make_temp_dir("options_prompts");
  EXPECT_EQ(parse_ok({"--log-prompts-dir", dir + "/a/b"}).prompts_log_dir, dir + "/a/b");
  EXPECT_TRUE(std::filesystem::is_directory(dir + "/a/b"));
  std::ofstream(dir + "/file") << "x";
  ParseOutcome bad = parse({"--log-prompts-dir", dir + "/file"});
  EXPECT_EQ(bad.action, ParseAction::kError);
  EXPECT_NE(bad.text.find("cannot create prompts directory '" + dir + "/file'"), std::string::npos)
      << bad.text;
  EXPECT_EQ(parse({"--log-prompts-dir", ""}).action, ParseAction::kError);
  std::filesystem::remove_all(dir);
  EXPECT_EQ(parse_ok({"-v"}).verbosity, INT32_MAX);
  EXPECT_EQ(parse_ok({"--log-verbose"}).verbosity, INT32_MAX);
}

TEST(ParseArgsTest, ApiKeys) {
  std::string dir = hearth::test::make_temp_dir("options_keys");
  std::ofstream(dir + "/keys") << "# comment\n\nfile-key \n";
  ServerArgs a = parse_ok({"--api-key", "a,\"b,c\",,", "--api-key-file", dir + "/keys"});
  EXPECT_EQ(a.api_keys, (std::vector<std::string>{"a", "b,c", "file-key "}));
  ParseOutcome missing = parse({"--api-key-file", dir + "/none"});
  ASSERT_EQ(missing.action, ParseAction::kError);
  EXPECT_EQ(missing.text, "error: failed to open file '" + dir + "/none'");
  std::filesystem::remove_all(dir);
}

// The engine always uses the model's RoPE/YaRN values: an override is refused by name,
// a value meaning "the model's" is accepted.
TEST(ParseArgsTest, RopeOverridesAreRefused) {
  const std::string reason =
      "RoPE and YaRN overrides are not implemented; the model's own values are used";
  for (std::vector<std::string> args : std::vector<std::vector<std::string>>{
           {"--rope-scaling", "yarn"},
           {"--rope-scaling", "none"},
           {"--rope-scale", "4"},
           {"--rope-freq-base", "500000"},
           {"--rope-freq-scale", "0.25"},
           {"--yarn-orig-ctx", "8192"},
           {"--yarn-ext-factor", "1"},
           {"--yarn-attn-factor", "1"},
           {"--yarn-beta-slow", "1"},
           {"--yarn-beta-fast", "16"},
       }) {
    ParseOutcome out = parse(args);
    ASSERT_EQ(out.action, ParseAction::kError) << args[0];
    EXPECT_EQ(out.exit_code, 1);
    EXPECT_EQ(out.text, "error: option '" + args[0] + "' is not supported by hearth-server yet: " +
                            reason + " (deferred to issue 36)");
  }
  ParseOutcome env = parse({}, {{"LLAMA_ARG_ROPE_FREQ_BASE", "1e6"}});
  ASSERT_EQ(env.action, ParseAction::kError);
  EXPECT_EQ(env.text.rfind("error: option '--rope-freq-base' (from environment variable "
                           "LLAMA_ARG_ROPE_FREQ_BASE) is not supported by hearth-server",
                           0),
            0u)
      << env.text;
  for (std::vector<std::string> args : std::vector<std::vector<std::string>>{
           {"--rope-freq-base", "0"},
           {"--rope-freq-scale", "0"},
           {"--yarn-orig-ctx", "0"},
           {"--yarn-ext-factor", "-1"},
           {"--yarn-attn-factor", "-1.00"},
           {"--yarn-beta-slow", "-1"},
           {"--yarn-beta-fast", "-1.0"},
       }) {
    ParseOutcome out = parse(args);
    EXPECT_EQ(out.action, ParseAction::kRun) << args[0] << ": " << out.text;
    EXPECT_TRUE(out.warnings.empty()) << args[0];
  }
}

// Reusing non-prefix KV chunks needs position shifting, which Hearth lacks: only 0 (off,
// the default) is accepted.
TEST(ParseArgsTest, CacheReuseOnlyOff) {
  EXPECT_EQ(parse_ok({"--cache-reuse", "0"}).defaults.n_cache_reuse, 0);
  ParseOutcome out = parse({"--cache-reuse", "256"});
  ASSERT_EQ(out.action, ParseAction::kError);
  EXPECT_EQ(out.text.rfind("error: option '--cache-reuse' is not supported by hearth-server yet: "
                           "reusing KV chunks by shifting their positions is not implemented",
                           0),
            0u)
      << out.text;
  EXPECT_EQ(parse({}, {{"LLAMA_ARG_CACHE_REUSE", "0"}}).action, ParseAction::kRun);
  EXPECT_EQ(parse({}, {{"LLAMA_ARG_CACHE_REUSE", "64"}}).action, ParseAction::kError);
}

TEST(ParseArgsTest, DeviceOptionsHaveNoEffect) {
  ParseOutcome out = parse({"-ngl", "99", "-sm", "row", "-ts", "1/1", "-mg", "0", "-dev", "none"});
  ASSERT_EQ(out.action, ParseAction::kRun) << out.text;
  EXPECT_TRUE(has_warning(out, "option '-ngl' has no effect"));
  EXPECT_TRUE(has_warning(out, "option '-dev' has no effect"));
  ParseOutcome gpu = parse({"-dev", "CUDA0"});
  ASSERT_EQ(gpu.action, ParseAction::kError);
  EXPECT_NE(gpu.text.find("invalid device: CUDA0"), std::string::npos);
  EXPECT_EQ(parse({"-sm", "diagonal"}).action, ParseAction::kError);
  EXPECT_EQ(parse({"-ngl", "all"}).action, ParseAction::kRun);
  EXPECT_EQ(parse({"-ot", "x=CUDA0"}).action, ParseAction::kError);
}

TEST(ParseArgsTest, ListDevicesPrintsNone) {
  ParseOutcome out = parse({"--list-devices", "--bogus"});
  EXPECT_EQ(out.action, ParseAction::kPrintAndExit);
  EXPECT_EQ(out.exit_code, 0);
  EXPECT_EQ(out.text, "Available devices:\n  (none)");
}

TEST(ParseArgsTest, VersionPrintsImmediately) {
  ParseOutcome out = parse({"--version", "--bogus"});
  ASSERT_EQ(out.action, ParseAction::kPrintAndExit);
  EXPECT_EQ(out.exit_code, 0);
  EXPECT_EQ(out.text.rfind("version: ", 0), 0u);
  EXPECT_NE(out.text.find("hearth"), std::string::npos);
  // Options before --version are still parsed first.
  EXPECT_EQ(parse({"--bogus", "--version"}).action, ParseAction::kError);
}

TEST(ParseArgsTest, HelpGroupsFourSections) {
  ParseOutcome out = parse({"--port", "9000", "-h"});
  ASSERT_EQ(out.action, ParseAction::kPrintAndExit);
  EXPECT_EQ(out.exit_code, 0);
  const std::string& help = out.text;
  size_t common = help.find("----- common params -----");
  size_t sampling = help.find("\n\n\n----- sampling params -----");
  size_t speculative = help.find("\n\n\n----- speculative params -----");
  size_t example = help.find("\n\n\n----- example-specific params -----");
  EXPECT_EQ(common, 0u);
  EXPECT_LT(common, sampling);
  EXPECT_LT(sampling, speculative);
  EXPECT_LT(speculative, example);
  EXPECT_NE(example, std::string::npos);
  // One entry per table row: entry heads start at column 0 with '-'.
  int n_entries = 0;
  int n_env = 0;
  size_t pos = 0;
  while (pos < help.size()) {
    size_t end = help.find('\n', pos);
    std::string line = help.substr(pos, end - pos);
    if (line.starts_with("-") && !line.starts_with("----- ")) ++n_entries;
    if (line.find("(env: ") != std::string::npos) ++n_env;
    pos = end == std::string::npos ? help.size() : end + 1;
  }
  EXPECT_EQ(n_entries, 249);
  EXPECT_EQ(n_env, 136);
  EXPECT_NE(help.find("-c,    --ctx-size N"), std::string::npos);
  EXPECT_NE(help.find("(env: LLAMA_ARG_CTX_SIZE)"), std::string::npos);
  EXPECT_EQ(parse({"--usage"}).text, help);
  EXPECT_EQ(parse({"--help"}).text, help);
}

TEST(ParseArgsTest, CompletionBash) {
  ParseOutcome out = parse({"--completion-bash"});
  ASSERT_EQ(out.action, ParseAction::kPrintAndExit);
  EXPECT_NE(out.text.find("--ctx-size"), std::string::npos);
  EXPECT_NE(out.text.find("complete -F"), std::string::npos);
}

}  // namespace
}  // namespace hearth::server::options
