// What compat/llama-server/b10621/options.json must record for each row of an option table,
// and the check of a manifest against a table (the real one, or a test's fixture).
#pragma once

#include <nlohmann/json.hpp>

#include <span>
#include <string>
#include <vector>

#include "server/options/option_table.h"

namespace hearth::server::options::test {

// The manifest's state of a table state: an option the reference removed or Hearth accepts
// without effect is still handled as the reference handles it.
inline std::string manifest_state(OptionState state) {
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

// The problems of one manifest entry against its row; `where` prefixes each.
inline void entry_problems(const OptionSpec& spec, const nlohmann::json& e,
                           const std::string& where, std::vector<std::string>& out) {
  const auto expect = [&](bool ok, const std::string& what) {
    if (!ok) out.push_back(where + ": " + what);
  };
  expect(e.value("name", "") == option_name(spec), "name is not " + std::string(option_name(spec)));
  std::vector<std::string> spellings;
  for (std::string_view s : all_spellings(spec)) spellings.emplace_back(s);
  expect(e.contains("spellings") && e["spellings"] == spellings, "spellings differ");
  expect(e.contains("env") &&
             (spec.env.empty() ? e["env"].is_null() : e["env"] == std::string(spec.env)),
         "env differs");
  expect(e.value("section", "") == section_name(spec.section), "section differs");
  expect(e.value("state", "") == manifest_state(spec.state), "state differs");
  if (spec.state == OptionState::kDeferred) {
    expect(e.value("issue", 0) == spec.issue, "issue differs");
  } else {
    expect(!e.contains("issue"), "has an issue but is not deferred");
  }
  if (spec.state == OptionState::kNotApplicable) {
    expect(e.value("reason", "") == spec.reason, "reason differs");
  } else {
    expect(!e.contains("reason"), "has a reason but is not refused as not applicable");
  }
  if (spec.state == OptionState::kAcceptedNoEffect || spec.state == OptionState::kRemoved) {
    expect(e.contains("note"), "has no note");
  }
  expect(e.contains("divergence"), "has no divergence");
  expect(e.contains("tests") && e["tests"].is_array() && !e["tests"].empty(), "names no test");
}

// Every row has its entry, in table order, and nothing else is recorded.
inline std::vector<std::string> manifest_problems(std::span<const OptionSpec> table,
                                                  const nlohmann::json& manifest) {
  std::vector<std::string> out;
  const nlohmann::json& entries = manifest.at("entries");
  for (size_t i = 0; i < table.size(); ++i) {
    const std::string name(option_name(table[i]));
    if (i >= entries.size()) {
      out.push_back(name + ": no entry");
      continue;
    }
    entry_problems(table[i], entries[i], name, out);
  }
  for (size_t i = table.size(); i < entries.size(); ++i) {
    out.push_back(entries[i].value("name", "?") + ": an entry without a row");
  }
  return out;
}

}  // namespace hearth::server::options::test
