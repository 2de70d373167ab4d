// The request-field table the server parses with is the one fields.json records: same
// names in the same order, same aliases, same states and issues.
#include <gtest/gtest.h>

#include <fstream>

#include <nlohmann/json.hpp>

#include "server/fields/completion_fields.h"

namespace hearth::server {
namespace {

const char* state_name(FieldState state) {
  switch (state) {
    case FieldState::kSupported:
      return "supported";
    case FieldState::kDeferred:
      return "deferred";
    case FieldState::kNotApplicable:
      return "not_applicable";
  }
  return "?";
}

TEST(CompletionFieldsTest, AgreeWithTheManifest) {
  std::ifstream in(std::string(HEARTH_SOURCE_DIR) + "/compat/llama-server/b10621/fields.json");
  ASSERT_TRUE(in) << "fields.json not found";
  const nlohmann::json manifest = nlohmann::json::parse(in);
  const nlohmann::json& entries = manifest["entries"];
  const std::vector<CompletionField>& table = completion_fields();
  ASSERT_EQ(kNativeFieldCount, entries.size());
  // After the native fields, only response_format: the chat routes' member the native
  // routes honour too (differences.json, native-response-format).
  ASSERT_EQ(table.size(), kNativeFieldCount + 1);
  EXPECT_EQ(table.back().name, "response_format");
  for (size_t i = 0; i < kNativeFieldCount; ++i) {
    const CompletionField& field = table[i];
    const nlohmann::json& entry = entries[i];
    SCOPED_TRACE(std::string(field.name));
    EXPECT_EQ(entry["name"], std::string(field.name));
    EXPECT_EQ(entry["state"], state_name(field.state));
    std::vector<std::string> aliases;
    for (std::string_view alias : field.aliases) {
      if (!alias.empty()) aliases.emplace_back(alias);
    }
    EXPECT_EQ(entry.value("aliases", std::vector<std::string>{}), aliases);
    if (field.state == FieldState::kDeferred) {
      EXPECT_EQ(entry["issue"], field.issue);
    }
  }
}

}  // namespace
}  // namespace hearth::server
