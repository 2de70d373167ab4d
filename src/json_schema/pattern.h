// `pattern` (spec 5.7): the anchored regex subset the reference understands, parsed into a
// small tree and emitted as GBNF describing the raw characters between the quotes.
#pragma once

#include <functional>
#include <string>
#include <string_view>

namespace hearth::json_schema::detail {

struct PatternOutcome {
  enum class Kind { kOk, kUnsupported, kInvalid };
  Kind kind = Kind::kOk;
  std::string message;  // why, for kUnsupported (a warning) and kInvalid (an error)
  std::string body;     // kOk: GBNF for the string value, quotes included
  bool uses_dot = false;
};

// `add_sub_rule(body)` registers a helper rule and returns its name; it is only called
// once the whole pattern is known to convert. `max_repetitions` is the GBNF parser's cap:
// lower bounds at or above it are invalid, upper bounds at or above it become unbounded.
PatternOutcome convert_pattern(std::string_view pattern,
                               const std::function<std::string(const std::string&)>& add_sub_rule,
                               int max_repetitions);

}  // namespace hearth::json_schema::detail
