// A hearth-server on stories260K for the end-to-end tests, with JSON helpers.
#pragma once

#include <gtest/gtest.h>

#include <sstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "server/harness.h"
#include "server/json_client.h"
#include "support/test_paths.h"

namespace hearth::test {

using Json = nlohmann::ordered_json;

inline std::string stories_model() {
  return shared_path("models/stories260K.gguf");
}

inline std::vector<std::string> stories_args(std::vector<std::string> extra = {}) {
  std::vector<std::string> args = {"-m", stories_model(), "-c", "2048", "-np", "4"};
  args.insert(args.end(), extra.begin(), extra.end());
  return args;
}

// The value of the first sample line `name` (with any labels) in a Prometheus text.
inline double metric_sample(const std::string& text, const std::string& name) {
  std::istringstream lines(text);
  std::string line;
  while (std::getline(lines, line)) {
    if (line.rfind(name, 0) != 0) continue;
    const char next = line.size() > name.size() ? line[name.size()] : '\0';
    if (next != ' ' && next != '{') continue;
    return std::stod(line.substr(line.rfind(' ') + 1));
  }
  ADD_FAILURE() << name << " not found";
  return -1;
}

class StoriesServer : public ::testing::Test {
 protected:
  void start(const std::vector<std::string>& extra = {}) {
    ASSERT_TRUE(server_.start(stories_args(extra))) << server_.log();
  }
  int port() const { return server_.port(); }
  ServerProcess server_;
};

}  // namespace hearth::test
