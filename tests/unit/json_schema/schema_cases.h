// Shared helpers for the JSON Schema converter tests: convert, load the grammar with the
// GBNF parser, and check whole-text acceptance.
#pragma once

#include <gtest/gtest.h>

#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "grammar/grammar.h"
#include "json_schema/json_schema.h"

namespace hearth::json_schema::testing {

struct SchemaCase {
  std::string name;
  std::string schema;
  std::vector<std::string> accept;
  std::vector<std::string> reject;
};

inline Result<Conversion> convert_text(const std::string& schema_text) {
  return convert(nlohmann::ordered_json::parse(schema_text));
}

// Converts and loads; fails the test (and returns null) when either step fails.
inline std::shared_ptr<const grammar::Grammar> load(const std::string& schema_text,
                                                    std::string* gbnf_out = nullptr) {
  auto converted = convert_text(schema_text);
  EXPECT_TRUE(converted.is_ok()) << schema_text << "\n" << converted.status().message();
  if (!converted.is_ok()) return nullptr;
  if (gbnf_out != nullptr) *gbnf_out = converted->gbnf;
  auto parsed = grammar::parse(converted->gbnf);
  EXPECT_TRUE(parsed.is_ok()) << schema_text << "\n"
                              << parsed.status().message() << "\n"
                              << converted->gbnf;
  if (!parsed.is_ok()) return nullptr;
  return *parsed;
}

inline void check_case(const SchemaCase& c) {
  SCOPED_TRACE(c.name);
  std::string gbnf;
  auto g = load(c.schema, &gbnf);
  if (g == nullptr) return;
  for (const auto& text : c.accept) {
    EXPECT_TRUE(grammar::accepts(g, text)) << "should accept: " << text << "\n" << gbnf;
  }
  for (const auto& text : c.reject) {
    EXPECT_FALSE(grammar::accepts(g, text)) << "should reject: " << text << "\n" << gbnf;
  }
}

// The error message of a conversion that must fail.
inline std::string conversion_error(const std::string& schema_text) {
  auto converted = convert_text(schema_text);
  EXPECT_FALSE(converted.is_ok()) << schema_text << "\n"
                                  << (converted.is_ok() ? converted->gbnf : "");
  if (converted.is_ok()) return "";
  EXPECT_EQ(converted.status().code(), ErrorCode::kInvalidArgument);
  return converted.status().message();
}

}  // namespace hearth::json_schema::testing
