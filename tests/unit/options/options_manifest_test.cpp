// compat/llama-server/b10621/options.json must describe the same 249 options with the same
// states as the C++ table, and every test it names must exist.
#include <gtest/gtest.h>

#include <filesystem>
#include <nlohmann/json.hpp>
#include <set>
#include <string>

#include "server/options/option_table.h"
#include "support/test_paths.h"

namespace hearth::server::options {
namespace {

std::string source_path(const std::string& relative) {
  return std::string(HEARTH_SOURCE_DIR) + "/" + relative;
}

nlohmann::json load_manifest() {
  return nlohmann::json::parse(
      hearth::test::read_file(source_path("compat/llama-server/b10621/options.json")));
}

std::string manifest_state(OptionState state) {
  switch (state) {
    case OptionState::kSupported:
    case OptionState::kAcceptedNoEffect:
    case OptionState::kRemoved:
      return "supported";
    case OptionState::kDeferred:
      return "deferred";
    case OptionState::kNotApplicable:
      return "not_applicable";
  }
  return "";
}

TEST(OptionsManifestTest, AgreesWithTable) {
  nlohmann::json manifest = load_manifest();
  EXPECT_EQ(manifest["area"], "options");
  EXPECT_EQ(manifest["reference"], "llama-server b10621");
  const nlohmann::json& entries = manifest["entries"];
  ASSERT_EQ(entries.size(), option_table().size());
  ASSERT_EQ(entries.size(), 249u);
  for (size_t i = 0; i < entries.size(); ++i) {
    const OptionSpec& spec = option_table()[i];
    const nlohmann::json& e = entries[i];
    SCOPED_TRACE(std::string(option_name(spec)));
    EXPECT_EQ(e["name"].get<std::string>(), option_name(spec));
    std::vector<std::string> spellings;
    for (std::string_view s : all_spellings(spec)) spellings.emplace_back(s);
    EXPECT_EQ(e["spellings"].get<std::vector<std::string>>(), spellings);
    if (spec.env.empty()) {
      EXPECT_TRUE(e["env"].is_null());
    } else {
      EXPECT_EQ(e["env"].get<std::string>(), spec.env);
    }
    EXPECT_EQ(e["section"].get<std::string>(), section_name(spec.section));
    EXPECT_EQ(e["state"].get<std::string>(), manifest_state(spec.state));
    if (spec.state == OptionState::kDeferred) {
      EXPECT_EQ(e["issue"].get<int>(), spec.issue);
    } else {
      EXPECT_FALSE(e.contains("issue"));
    }
    if (spec.state == OptionState::kNotApplicable) {
      EXPECT_EQ(e["reason"].get<std::string>(), spec.reason);
    } else {
      EXPECT_FALSE(e.contains("reason"));
    }
    if (spec.state == OptionState::kAcceptedNoEffect || spec.state == OptionState::kRemoved) {
      EXPECT_TRUE(e.contains("note"));
    }
    EXPECT_TRUE(e.contains("divergence"));
    ASSERT_TRUE(e["tests"].is_array());
    EXPECT_FALSE(e["tests"].empty());
  }
}

// "Suite.Name" for every TEST(Suite, Name) and TEST_F(Suite, Name) under tests/.
std::set<std::string> defined_tests() {
  std::set<std::string> names;
  for (const auto& file : std::filesystem::recursive_directory_iterator(source_path("tests"))) {
    if (file.path().extension() != ".cpp") continue;
    std::string text = hearth::test::read_file(file.path().string());
    for (const std::string macro : {"\nTEST(", "\nTEST_F(", "\nTEST_P("}) {
      size_t pos = 0;
      while ((pos = text.find(macro, pos)) != std::string::npos) {
        pos += macro.size();
        size_t comma = text.find(',', pos);
        size_t close = text.find(')', comma);
        std::string suite = text.substr(pos, comma - pos);
        std::string name = text.substr(comma + 1, close - comma - 1);
        name.erase(0, name.find_first_not_of(' '));
        names.insert(suite + "." + name);
      }
    }
  }
  return names;
}

TEST(OptionsManifestTest, NamedTestsExist) {
  std::set<std::string> tests = defined_tests();
  EXPECT_TRUE(tests.count("OptionsManifestTest.NamedTestsExist"));
  const nlohmann::json manifest = load_manifest();  // the loop must not outlive it
  for (const nlohmann::json& e : manifest["entries"]) {
    for (const nlohmann::json& name : e["tests"]) {
      EXPECT_TRUE(tests.count(name.get<std::string>()))
          << e["name"] << " names a missing test " << name;
    }
  }
}

}  // namespace
}  // namespace hearth::server::options
