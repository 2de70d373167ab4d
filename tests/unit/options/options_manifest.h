// What compat/llama-server/b10621/options.json must record for each row of an option table,
// and the check of a manifest against a table (the real one, or a test's fixture).
#pragma once

#include <nlohmann/json.hpp>

#include <map>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "server/options/option_table.h"
#include "server/options/parse_args.h"

namespace hearth::server::options::test {

// The manifest's state of a table state: an option the reference removed is handled as the
// reference handles it (an error), so it is supported.
inline std::string manifest_state(OptionState state) {
  switch (state) {
    case OptionState::kSupported:
    case OptionState::kRemoved:
      return "supported";
    case OptionState::kAcceptedNoEffect:
      return "no_effect";
    case OptionState::kDeferred:
      return "deferred";
    case OptionState::kNotApplicable:
      return "not_applicable";
  }
  return "";
}

// What giving the option shows it to be, whatever its row says: each spelling is parsed
// (with `sample` as its value) over `table` and compared with parsing nothing.
// "supported": some spelling changes the parsed arguments, prints and exits, or fails as a
// removed option; for a bool pair, the two forms parse differently. "no_effect": every
// spelling is accepted and changes nothing. "deferred" / "not_applicable": refused, with the
// refusal of that state. So a handler that stores nothing cannot be recorded as supported.
inline std::string derived_state(std::span<const OptionSpec> table, const OptionSpec& spec,
                                 const std::string& sample) {
  const EnvLookup no_env = [](std::string_view) { return std::optional<std::string>(); };
  const ParseOutcome nothing = parse_args(table, std::vector<std::string>{}, no_env);
  bool changed = false;
  std::vector<ServerArgs> positive;
  std::vector<ServerArgs> negative;
  for (std::string_view spelling : all_spellings(spec)) {
    std::vector<std::string> argv{std::string(spelling)};
    if (spec.kind == OptionKind::kValue) argv.push_back(sample);
    if (spec.kind == OptionKind::kTwoValues) argv.insert(argv.end(), {"1", "2"});
    const ParseOutcome out = parse_args(table, argv, no_env);
    if (out.action == ParseAction::kError) {
      if (out.text.find("is not supported by hearth-server yet: ") != std::string::npos) {
        return "deferred";
      }
      if (out.text.find("is not supported by hearth-server: ") != std::string::npos) {
        return "not_applicable";
      }
      if (spec.state == OptionState::kRemoved) return "supported";
      return "error: " + out.text;  // a sample the option does not take
    }
    if (out.action == ParseAction::kPrintAndExit || !(out.args == nothing.args)) changed = true;
    (is_negative_spelling(spec, spelling) ? negative : positive).push_back(out.args);
  }
  if (!positive.empty() && !negative.empty() && !(positive.front() == negative.front())) {
    changed = true;
  }
  return changed ? "supported" : "no_effect";
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
  if (spec.state == OptionState::kNotApplicable || spec.state == OptionState::kDeferred) {
    expect(e.value("reason", "") == spec.reason, "reason differs");
  } else {
    expect(!e.contains("reason"), "has a reason but is not refused");
  }
  if (spec.state == OptionState::kAcceptedNoEffect || spec.state == OptionState::kRemoved) {
    expect(e.contains("note"), "has no note");
  }
  expect(e.contains("divergence"), "has no divergence");
  expect(e.contains("tests") && e["tests"].is_array() && !e["tests"].empty(), "names no test");
}

// Every row has its entry, in table order, and nothing else is recorded; each entry's state
// is what giving the option shows (derived_state, value options given their `samples`).
inline std::vector<std::string> manifest_problems(
    std::span<const OptionSpec> table, const nlohmann::json& manifest,
    const std::map<std::string_view, std::string>& samples) {
  std::vector<std::string> out;
  const nlohmann::json& entries = manifest.at("entries");
  for (size_t i = 0; i < table.size(); ++i) {
    const std::string name(option_name(table[i]));
    if (i >= entries.size()) {
      out.push_back(name + ": no entry");
      continue;
    }
    entry_problems(table[i], entries[i], name, out);
    const bool needs_sample = table[i].kind == OptionKind::kValue &&
                              !is_refused_state(table[i].state) &&
                              table[i].state != OptionState::kRemoved;
    const auto sample = samples.find(option_name(table[i]));
    if (needs_sample && sample == samples.end()) {
      out.push_back(name + ": no sample value to find what it does");
      continue;
    }
    const std::string derived =
        derived_state(table, table[i], sample == samples.end() ? "7" : sample->second);
    if (entries[i].value("state", "") != derived) {
      out.push_back(name + ": recorded " + entries[i].value("state", "?") +
                    " but giving it shows " + derived);
    }
  }
  for (size_t i = table.size(); i < entries.size(); ++i) {
    out.push_back(entries[i].value("name", "?") + ": an entry without a row");
  }
  return out;
}

}  // namespace hearth::server::options::test
