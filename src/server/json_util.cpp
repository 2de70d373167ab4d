#include "server/json_util.h"

#include <cmath>
#include <string_view>

namespace hearth::server {

std::string dump_json(const Json& value) {
  return value.dump(-1, ' ', false, Json::error_handler_t::replace);
}

std::string without_library_tags(std::string message, size_t max_bytes) {
  static constexpr std::string_view kTag = "[json.exception.";
  for (size_t at; (at = message.find(kTag)) != std::string::npos;) {
    const size_t end = message.find("] ", at);
    if (end == std::string::npos) break;
    message.erase(at, end + 2 - at);
  }
  if (message.size() > max_bytes) message = message.substr(0, max_bytes) + "...";
  return message;
}

Json float_json(float value) {
  if (!std::isfinite(value)) return nullptr;
  return static_cast<double>(value);
}

}  // namespace hearth::server
