// Helpers shared by the option tests: a fake environment and a parse shorthand.
#pragma once

#include <gtest/gtest.h>

#include <fstream>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "server/options/parse_args.h"

namespace hearth::server::options::test {

using Env = std::map<std::string, std::string>;

inline EnvLookup fake_env(Env vars) {
  return [vars = std::move(vars)](std::string_view name) -> std::optional<std::string> {
    auto it = vars.find(std::string(name));
    if (it == vars.end()) return std::nullopt;
    return it->second;
  };
}

// Parses; texts are printed as they are, so each ends with a newline, which is checked
// and stripped here to keep the expectations readable.
inline ParseOutcome parse(const std::vector<std::string>& args, Env env = {}) {
  ParseOutcome out = parse_args(args, fake_env(std::move(env)));
  if (out.action != ParseAction::kRun) {
    EXPECT_TRUE(!out.text.empty() && out.text.back() == '\n') << out.text;
    if (!out.text.empty() && out.text.back() == '\n') out.text.pop_back();
  }
  return out;
}

// Parses and expects the server to run; returns the arguments.
inline ServerArgs parse_ok(const std::vector<std::string>& args, Env env = {}) {
  ParseOutcome out = parse(args, std::move(env));
  EXPECT_EQ(out.action, ParseAction::kRun) << out.text;
  return out.args;
}

// A valid value for every value-taking supported (or no-effect) option, other than the
// option's default; files it names are made in `dir` by the caller (option_table_test.cpp).
std::map<std::string_view, std::string> sample_values(const std::string& dir);
// The files the sample values name.
inline void write_sample_files(const std::string& dir) {
  std::ofstream(dir + "/keys.txt") << "key-a\n";
  std::ofstream(dir + "/ui.json") << "{\"theme\": \"dark\"}";
}

inline bool has_warning(const ParseOutcome& out, const std::string& part) {
  for (const std::string& w : out.warnings) {
    if (w.find(part) != std::string::npos) return true;
  }
  return false;
}

}  // namespace hearth::server::options::test
