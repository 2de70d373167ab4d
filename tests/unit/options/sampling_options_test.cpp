// The sampling and grammar options: each reaches ServerArgs with the reference's
// command-line validation (sampling.md section 4).
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "support/test_paths.h"
#include "unit/options/options_test_util.h"

namespace hearth::server::options {
namespace {

using test::parse;

ServerArgs parse_ok(std::vector<std::string> args) {
  ParseOutcome out = parse(args);
  EXPECT_EQ(out.action, ParseAction::kRun) << out.text;
  return out.args;
}

TEST(SamplingOptions, ValuesReachTheDefaults) {
  ServerArgs a = parse_ok(
      {"--top-nsigma",       "1.5",  "--xtc-probability",    "0.5",  "--xtc-threshold",      "0.2",
       "--typical",          "0.9",  "--repeat-last-n",      "32",   "--repeat-penalty",     "1.1",
       "--presence-penalty", "0.25", "--frequency-penalty",  "0.75", "--dry-multiplier",     "0.8",
       "--dry-base",         "2",    "--dry-allowed-length", "3",    "--dry-penalty-last-n", "128",
       "--mirostat",         "2",    "--mirostat-lr",        "0.2",  "--mirostat-ent",       "4",
       "--dynatemp-range",   "0.5",  "--dynatemp-exp",       "2",    "--adaptive-target",    "0.4",
       "--adaptive-decay",   "0.6",  "--ignore-eos"});
  const sampling::SamplerParams& s = a.defaults.sampling;
  EXPECT_FLOAT_EQ(s.top_n_sigma, 1.5f);
  EXPECT_FLOAT_EQ(s.xtc_probability, 0.5f);
  EXPECT_FLOAT_EQ(s.xtc_threshold, 0.2f);
  EXPECT_FLOAT_EQ(s.typical_p, 0.9f);
  EXPECT_EQ(s.repeat_last_n, 32);
  EXPECT_FLOAT_EQ(s.repeat_penalty, 1.1f);
  EXPECT_FLOAT_EQ(s.presence_penalty, 0.25f);
  EXPECT_FLOAT_EQ(s.frequency_penalty, 0.75f);
  EXPECT_FLOAT_EQ(s.dry_multiplier, 0.8f);
  EXPECT_FLOAT_EQ(s.dry_base, 2.0f);
  EXPECT_EQ(s.dry_allowed_length, 3);
  EXPECT_EQ(s.dry_penalty_last_n, 128);
  EXPECT_EQ(s.mirostat, 2);
  EXPECT_FLOAT_EQ(s.mirostat_eta, 0.2f);
  EXPECT_FLOAT_EQ(s.mirostat_tau, 4.0f);
  EXPECT_FLOAT_EQ(s.dynatemp_range, 0.5f);
  EXPECT_FLOAT_EQ(s.dynatemp_exponent, 2.0f);
  EXPECT_FLOAT_EQ(s.adaptive_target, 0.4f);
  EXPECT_FLOAT_EQ(s.adaptive_decay, 0.6f);
  EXPECT_TRUE(a.defaults.ignore_eos);
}

TEST(SamplingOptions, SamplerOrderByNamesAndLetters) {
  using sampling::SamplerType;
  EXPECT_EQ(parse_ok({"--samplers", "Top-K;temp;bogus;top_k"}).defaults.sampling.samplers,
            (std::vector<SamplerType>{SamplerType::kTopK, SamplerType::kTemperature,
                                      SamplerType::kTopK}));
  EXPECT_EQ(parse_ok({"--sampler-seq", "kzt"}).defaults.sampling.samplers,
            (std::vector<SamplerType>{SamplerType::kTopK, SamplerType::kTemperature}));
  ServerArgs by_names = parse_ok({"--samplers", "min_p"});
  EXPECT_EQ(by_names.sampling_set_by_user, std::vector<std::string>{"--samplers"});
  // --sampler-seq does not count as a user choice (a model's sequence still applies).
  EXPECT_TRUE(parse_ok({"--sampler-seq", "k"}).sampling_set_by_user.empty());
}

TEST(SamplingOptions, ReferenceValidation) {
  EXPECT_EQ(parse({"--repeat-last-n", "-1"}).action, ParseAction::kError);
  EXPECT_EQ(parse({"--dry-penalty-last-n", "-1"}).action, ParseAction::kError);
  EXPECT_EQ(parse({"--repeat-penalty", "0"}).action, ParseAction::kError);
  EXPECT_EQ(parse({"--repeat-penalty", "inf"}).action, ParseAction::kError);
  EXPECT_EQ(parse({"--presence-penalty", "nan"}).action, ParseAction::kError);
  EXPECT_EQ(parse({"--mirostat", "3"}).action, ParseAction::kError);
  EXPECT_FLOAT_EQ(parse_ok({"--dry-base", "0.5"}).defaults.sampling.dry_base, 1.75f);  // ignored
  EXPECT_FLOAT_EQ(parse_ok({"--temp", "-3"}).defaults.sampling.temperature, 0.0f);
}

TEST(SamplingOptions, DryBreakersReplaceTheDefaultsAndTakeEscapes) {
  EXPECT_EQ(parse_ok({"--dry-sequence-breaker", "a\\nb", "--dry-sequence-breaker", "c"})
                .defaults.sampling.dry_sequence_breakers,
            (std::vector<std::string>{"a\nb", "c"}));
  EXPECT_TRUE(
      parse_ok({"--dry-sequence-breaker", "none"}).defaults.sampling.dry_sequence_breakers.empty());
  EXPECT_EQ(parse_ok({}).defaults.sampling.dry_sequence_breakers,
            (std::vector<std::string>{"\n", ":", "\"", "*"}));
}

TEST(SamplingOptions, GrammarAndSchemaSources) {
  std::string dir = hearth::test::make_temp_dir("sampling_options");
  std::ofstream(dir + "/g.gbnf") << "root ::= \"yes\"\n";
  EXPECT_EQ(parse_ok({"--grammar-file", dir + "/g.gbnf"}).defaults.grammar, "root ::= \"yes\"\n");
  EXPECT_EQ(parse_ok({"--grammar", "root ::= \"a\""}).defaults.grammar, "root ::= \"a\"");
  EXPECT_EQ(parse_ok({"-j", "{}"}).json_schema, "{}");
  EXPECT_EQ(parse({"--grammar-file", dir + "/missing.gbnf"}).action, ParseAction::kError);
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace hearth::server::options
