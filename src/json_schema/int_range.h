// Integer bounds (spec 5.8): a GBNF body accepting exactly the canonical decimal integers in
// a range, with the reference's digit caps on unbounded sides and its `-0` quirk.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

namespace hearth::json_schema::detail {

// `min`/`max` are inclusive; INT64_MIN / INT64_MAX count as absent (the reference uses them
// as "no bound" sentinels). Returns nullopt when the range is empty.
std::optional<std::string> integer_range_body(std::optional<int64_t> min,
                                              std::optional<int64_t> max);

}  // namespace hearth::json_schema::detail
