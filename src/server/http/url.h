// Request-target parsing: splits "/path?query" and percent-decodes both parts the way
// llama-server's HTTP library does (path: %XX only; query: %XX and '+' as space). Also the
// ASCII case-insensitive comparison header names and tokens use.
#pragma once

#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace hearth::server::http {

// Decodes %XX escapes; `plus_is_space` also turns '+' into ' ' (query strings). A malformed
// escape ("%4", "%zz") is kept literally rather than rejected, like common servers do.
std::string percent_decode(std::string_view text, bool plus_is_space);

// Splits "a=1&b=x%20y&flag" into decoded pairs; a key without '=' gets an empty value.
std::vector<std::pair<std::string, std::string>> parse_query(std::string_view query);

struct Target {
  std::string path;  // decoded
  std::vector<std::pair<std::string, std::string>> query;
};

// Parses an origin-form ("/p?q") or absolute-form ("http://host/p?q") request target; the
// fragment, if a client sends one, is dropped.
Target parse_target(std::string_view target);

// ASCII case-insensitive equality (header names, Connection/Expect tokens).
bool iequals(std::string_view a, std::string_view b);

}  // namespace hearth::server::http
