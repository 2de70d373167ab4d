// What a client would receive for a Response returned by a dispatch function, without a
// socket: a pending response is waited for and rendered, a streamed body is read to its end.
#pragma once

#include <chrono>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "server/http/http.h"

namespace hearth::test {

struct SettledResponse {
  int status = 0;
  std::string content_type;
  std::vector<std::pair<std::string, std::string>> headers;
  std::string body;  // the whole body; a stream's chunks joined
  bool streamed = false;
};

// nullopt when the answer did not come, or the stream did not end, within `timeout`.
std::optional<SettledResponse> settle(server::http::Response response,
                                      std::chrono::milliseconds timeout);

}  // namespace hearth::test
