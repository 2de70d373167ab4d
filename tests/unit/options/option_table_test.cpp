// The option table against cli.md section 9, and data-driven checks of every entry:
// supported options parse under every spelling, refused options are refused.
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <string>

#include "server/options/option_handlers.h"
#include "server/options/option_table.h"
#include "support/test_paths.h"
#include "unit/options/options_test_util.h"

namespace hearth::server::options {
namespace {

using test::parse;

TEST(OptionTableTest, Has249EntriesInFourSections) {
  std::map<OptionSection, int> counts;
  OptionSection previous = OptionSection::kCommon;
  for (const OptionSpec& spec : option_table()) {
    ++counts[spec.section];
    EXPECT_GE(static_cast<int>(spec.section), static_cast<int>(previous)) << spec.spellings;
    previous = spec.section;
  }
  EXPECT_EQ(option_table().size(), 249u);
  EXPECT_EQ(counts[OptionSection::kCommon], 82);
  EXPECT_EQ(counts[OptionSection::kSampling], 34);
  EXPECT_EQ(counts[OptionSection::kSpeculative], 41);
  EXPECT_EQ(counts[OptionSection::kExample], 92);
}

TEST(OptionTableTest, SpellingsAndEnvNamesAreUnique) {
  std::set<std::string_view> spellings;
  std::set<std::string_view> long_spellings;
  std::set<std::string_view> envs;
  size_t n_spellings = 0;
  for (const OptionSpec& spec : option_table()) {
    for (std::string_view s : all_spellings(spec)) {
      ++n_spellings;
      spellings.insert(s);
      if (s.starts_with("--")) long_spellings.insert(s);
      EXPECT_EQ(find_option(s), &spec) << s;
    }
    if (!spec.env.empty()) {
      EXPECT_TRUE(envs.insert(spec.env).second) << spec.env;
    }
    EXPECT_EQ(spec.neg_spellings.empty(), spec.kind != OptionKind::kBoolPair) << spec.spellings;
    EXPECT_FALSE(spec.help.empty()) << spec.spellings;
  }
  EXPECT_EQ(spellings.size(), n_spellings);
  EXPECT_EQ(long_spellings.size(), 323u);  // cli.md section 1
  EXPECT_EQ(envs.size(), 136u);
}

TEST(OptionTableTest, StatesCarryTheirDetails) {
  for (const OptionSpec& spec : option_table()) {
    SCOPED_TRACE(std::string(option_name(spec)));
    if (spec.state == OptionState::kDeferred) {
      // An open issue that delivers it (listed in pin.json, checked by the manifest test).
      EXPECT_GE(spec.issue, 34);
    } else {
      EXPECT_EQ(spec.issue, 0);
    }
    bool needs_reason = is_refused_state(spec.state) ||
                        spec.state == OptionState::kAcceptedNoEffect ||
                        spec.state == OptionState::kRemoved;
    EXPECT_EQ(!spec.reason.empty(), needs_reason);
    if (!is_refused_state(spec.state)) {
      EXPECT_TRUE(spec.accepted.empty());
    }
  }
}

TEST(OptionTableTest, EverySupportedOptionCarriesItsHandler) {
  for (const OptionSpec& spec : option_table()) {
    SCOPED_TRACE(std::string(option_name(spec)));
    const bool needs_handler =
        spec.state == OptionState::kSupported ||
        (spec.state == OptionState::kAcceptedNoEffect &&
         (spec.kind == OptionKind::kValue || spec.kind == OptionKind::kTwoValues));
    if (needs_handler) {
      EXPECT_NE(spec.handler, nullptr);
    }
    // Refused and removed options never reach a handler.
    if (is_refused_state(spec.state) || spec.state == OptionState::kRemoved) {
      EXPECT_EQ(spec.handler, nullptr);
      EXPECT_EQ(spec.parsed_default, nullptr);
    }
  }
}

// The leading value of a default as written ("-1 (= auto)" -> "-1", "0.80" -> "0.80").
std::string leading_value(std::string_view text) {
  std::string value(text.substr(0, text.find(" (")));
  if (value == "\"\"" || value == "none" || value == "disabled" || value == "off" ||
      value == "false") {
    return value == "\"\"" || value == "none" ? "" : "disabled";
  }
  if (value == "enabled" || value == "on" || value == "true") return "enabled";
  return value;
}

bool same_default(const std::string& parsed, std::string_view reference) {
  const std::string want = leading_value(reference);
  const std::string got = leading_value(parsed);
  if (want == got) return true;
  char* end_want = nullptr;
  char* end_got = nullptr;
  const double a = std::strtod(want.c_str(), &end_want);
  const double b = std::strtod(got.c_str(), &end_got);
  return !want.empty() && *end_want == '\0' && *end_got == '\0' && a == b;
}

// --help prints each option's parsed default; it is what parsing no option at all gives, and
// it is the reference's default (cli.md section 9, kept in default_text).
TEST(OptionTableTest, HelpDefaultsAreTheParsedDefaults) {
  ParseOutcome outcome = parse_args(std::vector<std::string>{},
                                    [](std::string_view) { return std::optional<std::string>(); });
  ASSERT_EQ(outcome.action, ParseAction::kRun);
  // Long entries wrap at column 40: join the lines back.
  std::string help = help_text();
  const std::string wrap = "\n" + std::string(40, ' ');
  for (size_t at; (at = help.find(wrap)) != std::string::npos;) help.replace(at, wrap.size(), " ");
  int compared = 0;
  for (const OptionSpec& spec : option_table()) {
    if (spec.parsed_default == nullptr) continue;
    SCOPED_TRACE(std::string(option_name(spec)));
    const std::string parsed = spec.parsed_default(outcome.args);
    EXPECT_EQ(parsed, spec.parsed_default(ServerArgs{}));
    EXPECT_TRUE(same_default(parsed, spec.default_text))
        << "parsed " << parsed << ", reference " << spec.default_text;
    const std::string shown = default_shown(spec);
    EXPECT_EQ(shown.rfind(parsed.empty() ? "\"\"" : parsed, 0), 0u) << shown;
    EXPECT_NE(help.find("(default: " + shown + ")"), std::string::npos) << shown;
    ++compared;
  }
  EXPECT_GE(compared, 60);
}

}  // namespace

// A valid value for every value-taking supported (or no-effect) option, other than the
// option's default (options_test_util.h).
std::map<std::string_view, std::string> test::sample_values(const std::string& dir) {
  return {
      {"--threads", "4"},
      {"--threads-batch", "4"},
      {"--ctx-size", "1024"},
      {"--predict", "16"},
      {"--batch-size", "256"},
      {"--ubatch-size", "128"},
      {"--pooling", "mean"},
      {"--embd-normalize", "1"},
      {"--keep", "4"},
      {"--cache-type-k", "q8_0"},
      {"--cache-type-v", "bf16"},
      {"--load-mode", "mmap"},
      {"--model", "model.gguf"},
      {"--log-file", dir + "/log.txt"},
      {"--log-prompts-dir", dir + "/prompts"},
      {"--log-colors", "on"},
      {"--verbosity", "4"},
      {"--seed", "42"},
      {"--temp", "0.5"},
      {"--top-k", "10"},
      {"--top-p", "0.9"},
      {"--min-p", "0.1"},
      {"--logit-bias", "15043+1"},
      {"--samplers", "top_k;temperature"},
      {"--sampler-seq", "kt"},
      {"--top-nsigma", "1.5"},
      {"--xtc-probability", "0.5"},
      {"--xtc-threshold", "0.2"},
      {"--typical", "0.9"},
      {"--repeat-last-n", "32"},
      {"--repeat-penalty", "1.1"},
      {"--presence-penalty", "0.5"},
      {"--frequency-penalty", "0.5"},
      {"--dry-multiplier", "0.8"},
      {"--dry-base", "2"},
      {"--dry-allowed-length", "3"},
      {"--dry-penalty-last-n", "128"},
      {"--dry-sequence-breaker", "none"},
      {"--adaptive-target", "0.5"},
      {"--adaptive-decay", "0.5"},
      {"--dynatemp-range", "0.5"},
      {"--dynatemp-exp", "2"},
      {"--mirostat", "2"},
      {"--mirostat-lr", "0.2"},
      {"--mirostat-ent", "4"},
      {"--grammar", "root ::= \"a\""},
      {"--grammar-file", dir + "/keys.txt"},
      {"--json-schema", "{\"type\": \"integer\"}"},
      {"--json-schema-file", dir + "/keys.txt"},
      {"--cache-ram", "1024"},
      {"--reverse-prompt", "User:"},
      {"--parallel", "2"},
      {"--alias", "a,b"},
      {"--tags", "chat,small"},
      {"--host", "0.0.0.0"},
      {"--port", "9000"},
      {"--cors-origins", "localhost"},
      {"--cors-methods", "GET"},
      {"--cors-headers", "X-A"},
      {"--api-prefix", "/api"},
      {"--api-key", "k1"},
      {"--api-key-file", dir + "/keys.txt"},
      // Read when the server listens, not when parsing: any path parses.
      {"--ssl-key-file", dir + "/key.pem"},
      {"--ssl-cert-file", dir + "/cert.pem"},
      {"--timeout", "60"},
      {"--sse-ping-interval", "10"},
      {"--threads-http", "8"},
      {"--slot-save-path", dir},
      {"--media-path", dir},
      {"--mmproj", dir + "/mmproj.gguf"},
      {"--mmproj-url", "http://127.0.0.1:9/mmproj.gguf"},
      {"--image-min-tokens", "64"},
      {"--image-max-tokens", "256"},
      {"--mtmd-batch-max-tokens", "512"},
      {"--mmproj-device", "none"},
      {"--slot-prompt-similarity", "0.5"},
      {"--cpu-mask", "ff"},
      {"--cpu-range", "0-3"},
      {"--cpu-strict", "1"},
      {"--prio", "2"},
      {"--poll", "10"},
      {"--cpu-mask-batch", "0xf"},
      {"--cpu-range-batch", "0-1"},
      {"--cpu-strict-batch", "0"},
      {"--prio-batch", "1"},
      {"--poll-batch", "0"},
      {"--flash-attn", "on"},
      {"--defrag-thold", "0.1"},
      {"--rpc", "host:50052"},
      {"--numa", "distribute"},
      {"--device", "none"},
      {"--override-tensor", "blk\\..*=CPU"},
      {"--n-cpu-moe", "2"},
      {"--gpu-layers", "99"},
      {"--split-mode", "layer"},
      {"--tensor-split", "3,1"},
      {"--main-gpu", "0"},
      {"--fit", "off"},
      {"--fit-target", "512"},
      {"--fit-ctx", "2048"},
      {"--hf-token", "token"},
      {"--hf-repo", "ggml-org/stories-GGUF:Q8_0"},
      {"--hf-file", "stories-Q8_0.gguf"},
      {"--model-url", "http://127.0.0.1:9/model.gguf"},
      {"--spec-draft-hf", "ggml-org/draft-GGUF"},
      {"--path", dir},
      {"--ui-config", "{\"theme\": \"dark\"}"},
      {"--ui-config-file", dir + "/ui.json"},
      {"--ctx-checkpoints", "8"},
      {"--checkpoint-min-step", "0"},
      {"--chat-template", "chatml"},
      {"--chat-template-file", dir + "/keys.txt"},
      {"--chat-template-kwargs", "{\"a\": 1}"},
      {"--reasoning-format", "deepseek"},
      {"--reasoning", "off"},
      {"--reasoning-effort", "high"},
      {"--reasoning-budget", "16"},
      {"--reasoning-budget-message", "Enough."},
      {"--spec-type", "ngram-simple"},
      {"--spec-ngram-simple-size-n", "4"},
      {"--spec-ngram-simple-size-m", "16"},
      {"--spec-ngram-simple-min-hits", "2"},
      {"--spec-ngram-mod-n-min", "8"},
      {"--spec-draft-cpu-mask", "ff"},
      {"--spec-draft-type-k", "q8_0"},
      {"--spec-draft-type-v", "f32"},
      {"--spec-draft-threads", "2"},
      {"--spec-draft-threads-batch", "-1"},
      {"--spec-draft-n-max", "8"},
      {"--spec-draft-n-min", "2"},
      {"--spec-draft-p-split", "0.2"},
      {"--spec-draft-p-min", "0.5"},
      {"--spec-draft-model", "draft.gguf"},
      {"--spec-draft-cpu-range", "0-3"},
      {"--spec-draft-cpu-strict", "1"},
      {"--spec-draft-prio", "2"},
      {"--spec-draft-poll", "10"},
      {"--spec-draft-cpu-mask-batch", "ff"},
      {"--spec-draft-cpu-strict-batch", "1"},
      {"--spec-draft-prio-batch", "1"},
      {"--spec-draft-poll-batch", "10"},
      {"--spec-draft-override-tensor", "blk\\..*=CPU"},
      {"--spec-draft-n-cpu-moe", "2"},
      {"--spec-draft-device", "none"},
      {"--spec-draft-ngl", "99"},
      {"--spec-ngram-mod-n-max", "16"},
      {"--spec-ngram-mod-n-match", "12"},
      {"--spec-ngram-map-k-size-n", "4"},
      {"--spec-ngram-map-k-size-m", "16"},
      {"--spec-ngram-map-k-min-hits", "2"},
      {"--spec-ngram-map-k4v-size-n", "4"},
      {"--spec-ngram-map-k4v-size-m", "16"},
      {"--spec-ngram-map-k4v-min-hits", "2"},
      {"--lookup-cache-static", dir + "/keys.txt"},
      {"--lookup-cache-dynamic", dir + "/keys.txt"},
  };
}

namespace {

TEST(OptionTableTest, EverySupportedOptionParses) {
  std::string dir = hearth::test::make_temp_dir("options_table");
  test::write_sample_files(dir);
  auto samples = test::sample_values(dir);
  for (const OptionSpec& spec : option_table()) {
    if (spec.state != OptionState::kSupported && spec.state != OptionState::kAcceptedNoEffect) {
      continue;
    }
    std::string name(option_name(spec));
    bool takes_value = spec.kind == OptionKind::kValue;
    ASSERT_TRUE(!takes_value || samples.count(name)) << "no sample value for " << name;
    for (std::string_view spelling : all_spellings(spec)) {
      std::vector<std::string> args{std::string(spelling)};
      if (takes_value) args.push_back(samples[name]);
      ParseOutcome out = parse(args);
      bool prints = name == "--help" || name == "--version" || name == "--list-devices" ||
                    name == "--completion-bash" || name == "--cache-list";
      EXPECT_EQ(out.action, prints ? ParseAction::kPrintAndExit : ParseAction::kRun)
          << spelling << ": " << out.text;
      if (spec.state == OptionState::kAcceptedNoEffect && !prints) {
        EXPECT_TRUE(test::has_warning(out, "has no effect")) << spelling;
      }
    }
  }
  std::filesystem::remove_all(dir);
}

// A refused option given a non-default value fails, naming the spelling used.
TEST(OptionTableTest, EveryRefusedOptionIsRefused) {
  for (const OptionSpec& spec : option_table()) {
    if (!is_refused_state(spec.state)) continue;
    std::string accepted(spec.accepted);
    for (std::string_view spelling : all_spellings(spec)) {
      std::vector<std::string> args{std::string(spelling)};
      if (spec.kind == OptionKind::kValue) args.push_back("7");
      if (spec.kind == OptionKind::kTwoValues) args.insert(args.end(), {"1", "2"});
      if (spec.kind == OptionKind::kFlag || spec.kind == OptionKind::kBoolPair) {
        std::string form = is_negative_spelling(spec, spelling) ? "off" : "on";
        if (accepted.find(form) != std::string::npos) continue;
      }
      ParseOutcome out = parse(args);
      ASSERT_EQ(out.action, ParseAction::kError) << spelling;
      EXPECT_EQ(out.exit_code, 1);
      std::string expected =
          "error: option '" + std::string(spelling) + "' is not supported by hearth-server";
      EXPECT_EQ(out.text.rfind(expected, 0), 0u) << out.text;
      if (spec.state == OptionState::kDeferred) {
        EXPECT_NE(out.text.find("deferred to issue " + std::to_string(spec.issue)),
                  std::string::npos)
            << out.text;
      } else {
        EXPECT_NE(out.text.find(spec.reason), std::string::npos) << out.text;
      }
    }
  }
}

// Given the value that equals Hearth's default, a refused option is accepted.
TEST(OptionTableTest, EveryRefusedOptionAcceptsItsDefault) {
  int n_checked = 0;
  for (const OptionSpec& spec : option_table()) {
    if (!is_refused_state(spec.state) || spec.accepted.empty()) continue;
    for (std::string_view spelling : all_spellings(spec)) {
      std::vector<std::string> args{std::string(spelling)};
      if (spec.kind == OptionKind::kValue) {
        args.emplace_back(spec.accepted.substr(0, spec.accepted.find('|')));
      } else {
        std::string form = is_negative_spelling(spec, spelling) ? "off" : "on";
        if (std::string(spec.accepted).find(form) == std::string::npos) continue;
      }
      ParseOutcome out = parse(args);
      EXPECT_EQ(out.action, ParseAction::kRun) << spelling << ": " << out.text;
      ++n_checked;
    }
  }
  EXPECT_GT(n_checked, 15);
}

}  // namespace
}  // namespace hearth::server::options
