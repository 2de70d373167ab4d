// A hearth-server on stories260K for the end-to-end tests, with JSON helpers.
#pragma once

#include <gtest/gtest.h>

#include <sstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "server/harness.h"
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

inline Json parse_or_null(const std::string& text) {
  return Json::parse(text, nullptr, /*allow_exceptions=*/false);
}

// POST a JSON body and parse the reply (null when the body is not JSON).
inline Json post_json(int port, const std::string& path, const Json& body, int* status = nullptr) {
  HttpReply reply = http_request(port, "POST", path, body.dump());
  if (status != nullptr) *status = reply.status;
  return parse_or_null(reply.body);
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
