// Text-level helpers for emitting GBNF: escaping literals and class members, rule-name
// sanitizing, UTF-8 decoding, and a dry run of the GBNF parser's size limits.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"
#include "json_schema/json_schema.h"

namespace hearth::json_schema::detail {

// Decodes UTF-8; an invalid byte becomes U+FFFD so that emitted text is always valid.
std::vector<uint32_t> decode_utf8(std::string_view text);
void append_utf8(std::string& out, uint32_t cp);

// `"..."` matching exactly `text` (UTF-8).
std::string gbnf_literal(std::string_view text);
std::string gbnf_literal_cp(uint32_t cp);
// One member of a `[...]` class, escaped so that it never acts as `-`, `^` or `]`.
std::string gbnf_class_member(uint32_t cp);

// Runs of characters outside [a-zA-Z0-9-] become '-'.
std::string sanitize_rule_name(std::string_view name);

// Checks `gbnf` (this converter's output: one rule per line) against the limits the GBNF
// parser enforces: nesting, repetition counts, rule-explosion guard, rule and element counts
// after expansion, and text size. The message names the limit that was exceeded.
Status check_grammar_cost(std::string_view gbnf, const Limits& limits);

}  // namespace hearth::json_schema::detail
