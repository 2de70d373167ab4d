// Value conversions with the C library semantics llama-server inherits (stoi, stof,
// stoul), its tri-state and boolean vocabularies, and its list splitters.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"
#include "server/options/server_args.h"

namespace hearth::server::options {

// std::stoi: leading whitespace, optional sign, decimal digits; trailing garbage is
// ignored ("12abc" = 12); no digits or out of int range is an error.
Result<int32_t> parse_int(std::string_view text);
// std::stof: decimal, hex, inf, nan, exponent; trailing garbage ignored; ERANGE is an error.
Result<float> parse_float(std::string_view text);
// std::stoul: like parse_int but unsigned long; a leading '-' wraps ("-1" = ULONG_MAX).
Result<unsigned long> parse_ulong(std::string_view text);

// on/enabled/true/1, off/disabled/false/0 (exact, case-sensitive).
bool is_truthy(std::string_view text);
bool is_falsey(std::string_view text);
// Tri-state values: truthy, falsey or auto/-1; anything else is an error.
Result<TriState> parse_tristate(std::string_view text);

// Comma-separated fields with double-quote quoting ("a,b" is one field, "" inside quotes
// is a literal quote); no trimming.
Result<std::vector<std::string>> split_csv(std::string_view text);
// Split on ',', trim every item, drop empty ones (--alias).
std::vector<std::string> split_trimmed(std::string_view text);
// Split on any of `separators`, keeping empty items.
std::vector<std::string> split_any(std::string_view text, std::string_view separators);

// Processes \n \r \t \' \" \\ and \xHH; other backslashes are kept as they are.
std::string process_escapes(std::string_view text);

}  // namespace hearth::server::options
