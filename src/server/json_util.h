// JSON conventions of llama-server's responses: keys keep insertion order, invalid UTF-8
// becomes U+FFFD when serialized, single-precision values are echoed widened to double
// (0.8 -> 0.800000011920929), non-finite numbers become null.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

#include "base/json_parse.h"

namespace hearth::server {

using Json = nlohmann::ordered_json;

std::string dump_json(const Json& value);
// A float echoed as the reference does; NaN and infinities become null.
Json float_json(float value);

}  // namespace hearth::server
