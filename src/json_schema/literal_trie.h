// Large enums as one alternation of literals factored by common prefixes: the same
// language as `("a" | "b" | ...)`, but the matcher follows a handful of stacks instead of
// one per value (thousands of values would exceed its stack limit).
#pragma once

#include <string>
#include <vector>

#include "json_schema/converter.h"

namespace hearth::json_schema::detail {

// GBNF matching exactly the given texts (UTF-8, at least one). Deep parts go to rules named
// after `base` so that no rule nests deeper than a few dozen groups.
std::string literal_alternation(const std::vector<std::string>& texts, Converter& converter,
                                const std::string& base);

}  // namespace hearth::json_schema::detail
