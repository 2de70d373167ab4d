// Helpers for the template engine's tests: parse and render a template over a JSON context,
// getting the output or "PARSE ERROR: <message>" / "RENDER ERROR: <message>", and a table
// format for cases whose expected output was produced by Python's Jinja2 (3.1.2, configured as
// Hugging Face configures it).
#pragma once

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

#include "jinja/template.h"

namespace hearth::jinja::testing {

inline std::string render(std::string_view source, std::string_view context = "{}",
                          const RenderOptions& options = {}) {
  Result<Template> parsed = Template::parse(source);
  if (!parsed.is_ok()) return "PARSE ERROR: " + parsed.status().message();
  Result<std::string> output = parsed->render(nlohmann::ordered_json::parse(context), options);
  if (!output.is_ok()) return "RENDER ERROR: " + output.status().message();
  return *output;
}

// The failure of parsing or rendering (ok when both succeed).
inline Status failure(std::string_view source, std::string_view context = "{}",
                      const RenderOptions& options = {}) {
  Result<Template> parsed = Template::parse(source);
  if (!parsed.is_ok()) return parsed.status();
  return parsed->render(nlohmann::ordered_json::parse(context), options).status();
}

// One template, its context (a JSON object) and the output Jinja2 renders for it.
struct OracleCase {
  const char* name;
  const char* source;
  const char* context;
  const char* expected;
};

inline std::string case_name(const ::testing::TestParamInfo<OracleCase>& info) {
  return info.param.name;
}

}  // namespace hearth::jinja::testing
