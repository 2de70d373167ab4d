// The request-field tables the server parses with are the ones fields.json records: same
// names in the same order, same aliases, same states and issues, for the native completion
// table and for every other body's table (entries with a "route").
#include <gtest/gtest.h>

#include <fstream>
#include <set>

#include <nlohmann/json.hpp>

#include "server/fields/completion_fields.h"
#include "server/fields/route_tables.h"

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

nlohmann::json load_fields_manifest() {
  std::ifstream in(std::string(HEARTH_SOURCE_DIR) + "/compat/llama-server/b10621/fields.json");
  EXPECT_TRUE(in) << "fields.json not found";
  return in ? nlohmann::json::parse(in) : nlohmann::json::object();
}

// The entries of one route ("" : the native completion fields, which have no "route").
std::vector<nlohmann::json> entries_of_route(const nlohmann::json& manifest,
                                             std::string_view route) {
  std::vector<nlohmann::json> out;
  for (const nlohmann::json& e : manifest.value("entries", nlohmann::json::array())) {
    if (e.value("route", "") == route) out.push_back(e);
  }
  return out;
}

TEST(CompletionFieldsTest, AgreeWithTheManifest) {
  const nlohmann::json manifest = load_fields_manifest();
  const std::vector<nlohmann::json> entries = entries_of_route(manifest, "");
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

TEST(BodyFieldsTest, EveryRouteTableAgreesWithTheManifest) {
  const nlohmann::json manifest = load_fields_manifest();
  std::set<std::string> routes_in_tables;
  for (const fields::RouteFields& table : fields::body_field_tables()) {
    SCOPED_TRACE(std::string(table.route));
    routes_in_tables.insert(std::string(table.route));
    const std::vector<nlohmann::json> entries = entries_of_route(manifest, table.route);
    ASSERT_EQ(entries.size(), table.rows.size());
    for (size_t i = 0; i < entries.size(); ++i) {
      const fields::FieldInfo& row = table.rows[i];
      EXPECT_EQ(entries[i]["name"], std::string(row.name));
      EXPECT_EQ(entries[i]["state"], state_name(row.state));
      std::vector<std::string> aliases(row.aliases.begin(), row.aliases.end());
      EXPECT_EQ(entries[i].value("aliases", std::vector<std::string>{}), aliases);
    }
  }
  // No entry names a route without a table.
  for (const nlohmann::json& e : manifest.value("entries", nlohmann::json::array())) {
    if (e.contains("route")) {
      EXPECT_EQ(routes_in_tables.count(e["route"]), 1u) << e["route"];
    }
  }
}

}  // namespace
}  // namespace hearth::server
