// Request bodies as JSON: one parser for every route. It refuses, with a 400 that says
// what is wrong and where, what the reference answers with a 500 or a crash: invalid JSON
// (syntax, invalid UTF-8, NUL bytes, lone surrogates, NaN or Infinity), numbers a double
// cannot hold (1e400), and nesting deeper than kMaxJsonDepth, which is checked before
// anything is built, so a hostile body cannot exhaust the stack.
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

// Nesting depth of a JSON text (arrays and objects outside strings), counted without
// parsing; stops counting past `limit`.
int json_depth(std::string_view text, int limit);

}  // namespace hearth::server
