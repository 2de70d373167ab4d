#include "server/json_util.h"

#include <cmath>
#include <string_view>

namespace hearth::server {

std::string dump_json(const Json& value) {
  return value.dump(-1, ' ', false, Json::error_handler_t::replace);
}

Json float_json(float value) {
  if (!std::isfinite(value)) return nullptr;
  return static_cast<double>(value);
}

}  // namespace hearth::server
