// JSON conventions of llama-server's responses: keys keep insertion order, invalid UTF-8
// becomes U+FFFD when serialized, single-precision values are echoed widened to double
// (0.8 -> 0.800000011920929), non-finite numbers become null.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

namespace hearth::server {

using Json = nlohmann::ordered_json;

std::string dump_json(const Json& value);
// A float echoed as the reference does; NaN and infinities become null.
Json float_json(float value);
// `message` without the JSON library's "[json.exception.<kind>.<n>] " tags, which mean
// nothing to a client, and at most `max_bytes` long (a message may quote the request).
std::string without_library_tags(std::string message, size_t max_bytes = 1024);

}  // namespace hearth::server
