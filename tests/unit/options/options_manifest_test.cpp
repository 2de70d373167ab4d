// compat/llama-server/b10621/options.json must describe the same 249 options with the same
// states as the C++ table, and every test it names must exist.
#include <gtest/gtest.h>

#include <filesystem>
#include <nlohmann/json.hpp>
#include <set>
#include <string>

#include "server/options/option_table.h"
#include "support/test_paths.h"
#include "unit/options/options_manifest.h"
#include "unit/options/options_test_util.h"

namespace hearth::server::options {
namespace {

std::string source_path(const std::string& relative) {
  return std::string(HEARTH_SOURCE_DIR) + "/" + relative;
}

nlohmann::json load_manifest() {
  return nlohmann::json::parse(
      hearth::test::read_file(source_path("compat/llama-server/b10621/options.json")));
}

TEST(OptionsManifestTest, AgreesWithTable) {
  nlohmann::json manifest = load_manifest();
  EXPECT_EQ(manifest["area"], "options");
  EXPECT_EQ(manifest["reference"], "llama-server b10621");
  ASSERT_EQ(manifest["entries"].size(), 249u);
  const std::string dir = hearth::test::make_temp_dir("options_manifest");
  test::write_sample_files(dir);
  const auto samples = test::sample_values(dir);
  for (const std::string& problem : test::manifest_problems(option_table(), manifest, samples)) {
    ADD_FAILURE() << problem;
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
