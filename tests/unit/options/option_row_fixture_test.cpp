// What adding a flag takes: one option row naming its member in the final configuration.
// The fixture is the real table plus one row for --max-connections, whose target
// (ServerSettings::http.max_connections, which the server's configuration inherits) no real
// option sets; with no other edit the row is parsed from argv and the environment, takes
// the member's initializer as its default, appears in --help with that default, and is
// checked against the compatibility manifest like every real row.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include <map>
#include <string>
#include <vector>

#include "server/options/option_handlers.h"
#include "server/options/parse_args.h"
#include "support/test_paths.h"
#include "unit/options/options_manifest.h"
#include "unit/options/options_test_util.h"

namespace hearth::server::options {
namespace {

constexpr auto kTarget = set_member<&ServerSettings::http, &http::ServerOptions::max_connections>;
constexpr auto kShown = show_member<&ServerSettings::http, &http::ServerOptions::max_connections>;

// The one new row, as it would be written in option_table_example.cpp.
constexpr OptionSpec kNewRow = {"--max-connections",
                                "",
                                "N",
                                "HEARTH_TEST_MAX_CONNECTIONS",
                                "0 (from the descriptor limit)",
                                "Open connections at most",
                                OptionKind::kValue,
                                OptionState::kSupported,
                                "",
                                "",
                                0,
                                false,
                                kTarget,
                                kShown,
                                OptionSection::kExample};

std::vector<OptionSpec> fixture_table() {
  std::vector<OptionSpec> rows(option_table().begin(), option_table().end());
  rows.push_back(kNewRow);
  return rows;
}

ParseOutcome parse_fixture(const std::vector<std::string>& args, test::Env env = {}) {
  return parse_args(fixture_table(), args, test::fake_env(std::move(env)));
}

TEST(OptionRowFixtureTest, ParsedFromArgvAndEnvironment) {
  ParseOutcome given = parse_fixture({"--max-connections", "64"});
  ASSERT_EQ(given.action, ParseAction::kRun) << given.text;
  EXPECT_EQ(given.args.http.max_connections, 64);
  ParseOutcome from_env = parse_fixture({}, {{"HEARTH_TEST_MAX_CONNECTIONS", "32"}});
  ASSERT_EQ(from_env.action, ParseAction::kRun) << from_env.text;
  EXPECT_EQ(from_env.args.http.max_connections, 32);
  // The command line wins over the environment, as for every row.
  ParseOutcome both =
      parse_fixture({"--max-connections", "8"}, {{"HEARTH_TEST_MAX_CONNECTIONS", "32"}});
  EXPECT_EQ(both.args.http.max_connections, 8);
  EXPECT_TRUE(test::has_warning(both, "HEARTH_TEST_MAX_CONNECTIONS environment variable is set"));
  // A bad value is the usual argument error, with the row's help entry.
  ParseOutcome bad = parse_fixture({"--max-connections", "many"});
  ASSERT_EQ(bad.action, ParseAction::kError);
  EXPECT_NE(bad.text.find("error while handling argument \"--max-connections\""), std::string::npos)
      << bad.text;
  // The real table does not know the option.
  EXPECT_EQ(test::parse({"--max-connections", "64"}).action, ParseAction::kError);
}

TEST(OptionRowFixtureTest, DefaultIsTheMembersInitializer) {
  ParseOutcome absent = parse_fixture({});
  ASSERT_EQ(absent.action, ParseAction::kRun) << absent.text;
  EXPECT_EQ(absent.args.http.max_connections, http::ServerOptions{}.max_connections);
  EXPECT_EQ(default_shown(kNewRow), "0 (from the descriptor limit)");
}

TEST(OptionRowFixtureTest, ShownInHelp) {
  const std::string entry = option_help_entry(kNewRow);
  EXPECT_EQ(entry,
            "--max-connections N                     Open connections at most (default: 0 (from "
            "the descriptor limit))\n"
            "                                        (env: HEARTH_TEST_MAX_CONNECTIONS)\n");
  ParseOutcome help = parse_fixture({"--help"});
  ASSERT_EQ(help.action, ParseAction::kPrintAndExit);
  EXPECT_EQ(help.text, help_text(fixture_table()));
  // In its section, after the real rows of that section.
  EXPECT_TRUE(help.text.ends_with(entry)) << help.text.substr(help.text.size() - 400);
  EXPECT_EQ(help_text().find("--max-connections"), std::string::npos);
  EXPECT_NE(completion_bash_text(fixture_table()).find(" --max-connections"), std::string::npos);
}

nlohmann::json real_manifest() {
  return nlohmann::json::parse(hearth::test::read_file(std::string(HEARTH_SOURCE_DIR) +
                                                       "/compat/llama-server/b10621/options.json"));
}

// The real options' sample values, and one for the new row.
std::map<std::string_view, std::string> fixture_samples(const std::string& dir) {
  test::write_sample_files(dir);
  auto samples = test::sample_values(dir);
  samples["--max-connections"] = "64";
  return samples;
}

// The entry a contributor adds to options.json with the row.
nlohmann::json new_row_entry() {
  return nlohmann::json::parse(R"({
    "name": "--max-connections",
    "spellings": ["--max-connections"],
    "env": "HEARTH_TEST_MAX_CONNECTIONS",
    "section": "example-specific params",
    "state": "supported",
    "divergence": null,
    "tests": ["OptionRowFixtureTest.ParsedFromArgvAndEnvironment"]
  })");
}

TEST(OptionRowFixtureTest, RecordedInTheManifest) {
  nlohmann::json manifest = real_manifest();
  const std::vector<OptionSpec> table = fixture_table();
  const auto samples = fixture_samples(hearth::test::make_temp_dir("option_row_fixture"));
  // Without its entry the row is reported, and only it.
  EXPECT_EQ(test::manifest_problems(table, manifest, samples),
            std::vector<std::string>{"--max-connections: no entry"});
  manifest["entries"].push_back(new_row_entry());
  EXPECT_EQ(test::manifest_problems(table, manifest, samples), std::vector<std::string>{});
  // An entry that misstates the row is caught.
  manifest["entries"].back()["env"] = nullptr;
  EXPECT_EQ(test::manifest_problems(table, manifest, samples),
            std::vector<std::string>{"--max-connections: env differs"});
}

// The manifest records what an option does, not what its row claims: the same row with a
// handler that only validates its value (as a no-effect option's does) but still marked
// supported is reported, because giving it changes nothing that is parsed.
TEST(OptionRowFixtureTest, ANoOpRowMarkedSupportedIsCaught) {
  nlohmann::json manifest = real_manifest();
  manifest["entries"].push_back(new_row_entry());
  std::vector<OptionSpec> table = fixture_table();
  table.back().handler = check_int;  // mislabelled: validates, stores nothing
  const auto samples = fixture_samples(hearth::test::make_temp_dir("option_row_noop"));
  EXPECT_EQ(test::manifest_problems(table, manifest, samples),
            std::vector<std::string>{
                "--max-connections: recorded supported but giving it shows no_effect"});
  // Recorded honestly (a no-effect row, its note in the manifest), it passes.
  table.back().state = OptionState::kAcceptedNoEffect;
  table.back().reason = "the test says so";
  manifest["entries"].back()["state"] = "no_effect";
  manifest["entries"].back()["note"] = "the test says so";
  EXPECT_EQ(test::manifest_problems(table, manifest, samples), std::vector<std::string>{});
  // And the real handler under a no-effect label is caught the other way round.
  table.back().handler = kTarget;
  EXPECT_EQ(test::manifest_problems(table, manifest, samples),
            std::vector<std::string>{
                "--max-connections: recorded no_effect but giving it shows supported"});
}

}  // namespace
}  // namespace hearth::server::options
