// Request bodies as JSON: one parser for every route (hearth::parse_json and its limits).
// It refuses, with a 400 that says what is wrong and where, what the reference answers
// with a 500 or a crash: invalid JSON (syntax, invalid UTF-8, NUL bytes, lone surrogates,
// NaN or Infinity), numbers a double cannot hold (1e400), nesting deeper than
// kMaxJsonDepth, objects of more than 4,096 keys and bodies of more than 4 Mi values,
// all while parsing, so a hostile body can neither exhaust the stack nor take quadratic
// time. JSON found inside a body's strings goes through parse_embedded_json, with the
// same limits.
#pragma once

#include <optional>
#include <string_view>

#include "server/api_error.h"
#include "server/json_util.h"

namespace hearth::server {

// No real request nests this deep (a chat request with tool schemas reaches a few dozen).
inline constexpr int kMaxJsonDepth = 512;

// Parses `body` as one JSON value.
std::optional<ApiError> parse_json_body(std::string_view body, Json& out);
// The same, requiring a JSON object.
std::optional<ApiError> parse_json_object(std::string_view body, Json& out);

// A JSON text held in a string field (`what` names it for the error: "tool call
// arguments"), with the body's limits.
std::optional<ApiError> parse_embedded_json(std::string_view text, std::string_view what,
                                            Json& out);

}  // namespace hearth::server
