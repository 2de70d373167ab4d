#include "server/request_body.h"

#include <string>

namespace hearth::server {

namespace {

JsonLimits body_limits() {
  JsonLimits limits;
  limits.max_depth = kMaxJsonDepth;
  return limits;
}

}  // namespace

std::optional<ApiError> parse_json_body(std::string_view body, Json& out) {
  auto parsed = parse_json(body, body_limits());
  if (!parsed.is_ok()) {
    return invalid_request("Invalid JSON in request body: " + parsed.status().message());
  }
  out = std::move(parsed.value());
  return std::nullopt;
}

std::optional<ApiError> parse_json_object(std::string_view body, Json& out) {
  if (auto err = parse_json_body(body, out)) return err;
  if (!out.is_object()) {
    return invalid_request(std::string("The request body must be a JSON object, but is ") +
                           out.type_name());
  }
  return std::nullopt;
}

std::optional<ApiError> parse_embedded_json(std::string_view text, std::string_view what,
                                            Json& out) {
  auto parsed = parse_json(text, body_limits());
  if (!parsed.is_ok()) {
    return invalid_request("Invalid JSON in " + std::string(what) + ": " +
                           parsed.status().message());
  }
  out = std::move(parsed.value());
  return std::nullopt;
}

}  // namespace hearth::server
