// JSON over the test HTTP client, shared by the model-backed and the fake server fixtures.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

#include "server/harness.h"

namespace hearth::test {

using Json = nlohmann::ordered_json;

inline Json parse_or_null(const std::string& text) {
  return Json::parse(text, nullptr, /*allow_exceptions=*/false);
}

// POST a JSON body and parse the reply (null when the body is not JSON).
inline Json post_json(int port, const std::string& path, const Json& body, int* status = nullptr) {
  HttpReply reply = http_request(port, "POST", path, body.dump());
  if (status != nullptr) *status = reply.status;
  return parse_or_null(reply.body);
}

}  // namespace hearth::test
