// cli.md section 2: exact-match spellings, value consumption, stoi/stof semantics, errors,
// repeated options.
#include <gtest/gtest.h>

#include <cmath>
#include <string>

#include "server/options/value_parse.h"
#include "unit/options/options_test_util.h"

namespace hearth::server::options {
namespace {

using test::has_warning;
using test::parse;
using test::parse_ok;

TEST(OptionsGrammarTest, UnknownOptionErrorText) {
  ParseOutcome out = parse({"--port", "9000", "--no-such-option"});
  EXPECT_EQ(out.action, ParseAction::kError);
  EXPECT_EQ(out.exit_code, 1);
  EXPECT_EQ(out.text, "error: invalid argument: --no-such-option");
}

TEST(OptionsGrammarTest, EqualsFormIsUnknown) {
  ParseOutcome out = parse({"--port=8080"});
  EXPECT_EQ(out.action, ParseAction::kError);
  EXPECT_EQ(out.text, "error: invalid argument: --port=8080");
}

TEST(OptionsGrammarTest, PositionalIsUnknown) {
  EXPECT_EQ(parse({"model.gguf"}).text, "error: invalid argument: model.gguf");
  EXPECT_EQ(parse({"-ngl99"}).text, "error: invalid argument: -ngl99");
}

TEST(OptionsGrammarTest, UnderscoreNormalisation) {
  EXPECT_EQ(parse_ok({"--ctx_size", "4096"}).n_ctx, 4096);
  EXPECT_FALSE(parse_ok({"--no_cache_prompt"}).defaults.cache_prompt);
  // Single-dash spellings are matched verbatim; the message shows the argument as given.
  EXPECT_EQ(parse({"-no_kvu"}).text, "error: invalid argument: -no_kvu");
  EXPECT_EQ(parse({"--ctx_sizes", "1"}).text, "error: invalid argument: --ctx_sizes");
}

TEST(OptionsGrammarTest, NegativeValueIsConsumed) {
  EXPECT_EQ(parse_ok({"-n", "-1"}).defaults.n_predict, -1);
  EXPECT_EQ(parse_ok({"-n", "-2"}).defaults.n_predict, -2);
  EXPECT_EQ(parse_ok({"--api-prefix", "--port"}).api_prefix, "--port");
}

TEST(OptionsGrammarTest, StoiSemantics) {
  EXPECT_EQ(parse_ok({"-c", "12abc"}).n_ctx, 12);
  EXPECT_EQ(parse_ok({"-c", "  +64"}).n_ctx, 64);
  ParseOutcome none = parse({"-c", "abc"});
  ASSERT_EQ(none.action, ParseAction::kError);
  EXPECT_EQ(none.exit_code, 1);
  EXPECT_EQ(none.text.rfind("error while handling argument \"-c\": ", 0), 0u) << none.text;
  EXPECT_NE(none.text.find("\n\nusage:\n-c,    --ctx-size N"), std::string::npos) << none.text;
  EXPECT_NE(none.text.find("to show complete usage, run with -h"), std::string::npos);
  EXPECT_EQ(parse({"-c", "99999999999"}).action, ParseAction::kError);
  EXPECT_EQ(parse({"-c", ""}).action, ParseAction::kError);
}

TEST(OptionsGrammarTest, StofSemantics) {
  EXPECT_FLOAT_EQ(parse_ok({"--temp", "0.5xyz"}).defaults.sampling.temperature, 0.5f);
  EXPECT_FLOAT_EQ(parse_ok({"--top-p", "1e-1"}).defaults.sampling.top_p, 0.1f);
  EXPECT_FLOAT_EQ(parse_ok({"--top-p", "0x1p-2"}).defaults.sampling.top_p, 0.25f);
  EXPECT_TRUE(std::isinf(parse_ok({"--min-p", "inf"}).defaults.sampling.min_p));
  EXPECT_EQ(parse({"--top-p", "x"}).action, ParseAction::kError);
}

TEST(OptionsGrammarTest, MissingValueError) {
  ParseOutcome out = parse({"-m"});
  ASSERT_EQ(out.action, ParseAction::kError);
  EXPECT_EQ(out.exit_code, 1);
  EXPECT_EQ(out.text.rfind("error while handling argument \"-m\": expected value for argument", 0),
            0u)
      << out.text;
  EXPECT_EQ(parse({"--control-vector-layer-range", "1"}).action, ParseAction::kError);
}

TEST(OptionsGrammarTest, TriStateValues) {
  for (const char* on : {"on", "enabled", "true", "1"}) {
    EXPECT_EQ(parse_tristate(on).value(), TriState::kOn) << on;
  }
  for (const char* off : {"off", "disabled", "false", "0"}) {
    EXPECT_EQ(parse_tristate(off).value(), TriState::kOff) << off;
  }
  EXPECT_EQ(parse_tristate("auto").value(), TriState::kAuto);
  EXPECT_EQ(parse({"-fa", "auto"}).action, ParseAction::kRun);
  EXPECT_EQ(parse({"-fa", "ON"}).action, ParseAction::kError);
  // --log-colors (no effect) validates the same values.
  EXPECT_EQ(parse({"--log-colors", "disabled"}).action, ParseAction::kRun);
  EXPECT_EQ(parse({"--log-colors", "ON"}).action, ParseAction::kError);
}

TEST(OptionsGrammarTest, HelpPrintedAfterFullParse) {
  EXPECT_EQ(parse({"-h", "--bogus"}).action, ParseAction::kError);
  EXPECT_EQ(parse({"-h", "-c", "x"}).action, ParseAction::kError);
  EXPECT_EQ(parse({"-h"}, {{"LLAMA_ARG_FLASH_ATTN", "bad"}}).action, ParseAction::kError);
  EXPECT_EQ(parse({"-c", "1", "-h"}).action, ParseAction::kPrintAndExit);
}

TEST(OptionsGrammarTest, RepeatedScalarKeepsLastAndWarns) {
  ParseOutcome out = parse({"--port", "1", "--port", "2"});
  ASSERT_EQ(out.action, ParseAction::kRun);
  EXPECT_EQ(out.args.http.port, 2);
  EXPECT_TRUE(has_warning(out, "DEPRECATED: argument '--port' specified multiple times"));
  EXPECT_FALSE(has_warning(parse({"--port", "1"}), "DEPRECATED"));
}

TEST(OptionsGrammarTest, RepeatedAppendingOptionsKeepAllValues) {
  ParseOutcome out =
      parse({"--api-key", "a", "--api-key", "b,c", "-r", "x", "-r", "y", "-l", "1+1", "-l", "2-1"});
  ASSERT_EQ(out.action, ParseAction::kRun);
  EXPECT_EQ(out.args.api_keys, (std::vector<std::string>{"a", "b", "c"}));
  EXPECT_EQ(out.args.defaults.stop, (std::vector<std::string>{"x", "y"}));
  EXPECT_EQ(out.args.defaults.sampling.logit_bias.size(), 2u);
  EXPECT_TRUE(has_warning(out, "DEPRECATED: argument '--api-key'"));
}

TEST(OptionsGrammarTest, SeedParsesAsUnsigned) {
  EXPECT_EQ(parse_ok({"-s", "-1"}).defaults.sampling.seed, 0xFFFFFFFFu);
  EXPECT_EQ(parse_ok({"-s", "4294967295"}).defaults.sampling.seed, 0xFFFFFFFFu);
  EXPECT_EQ(parse_ok({"-s", "7junk"}).defaults.sampling.seed, 7u);
  EXPECT_EQ(parse({"-s", "seed"}).action, ParseAction::kError);
}

}  // namespace
}  // namespace hearth::server::options
