// Hugging Face's `tojson` filter: Python's json.dumps(x, ensure_ascii=False, indent=indent,
// separators=separators, sort_keys=sort_keys), byte for byte.
#pragma once

#include <optional>
#include <string>

#include "base/status.h"
#include "jinja/value.h"

namespace hearth::jinja {

struct JsonDumpOptions {
  bool ensure_ascii = false;
  // Unset = one line; otherwise each level indents by this string (json.dumps takes an int n
  // as n spaces).
  std::optional<std::string> indent;
  // Unset = (", ", ": ") on one line, (",", ": ") when indenting.
  std::optional<std::string> item_separator;
  std::optional<std::string> key_separator;
  bool sort_keys = false;
};

// Errors as json.dumps raises them: "Object of type Undefined is not JSON serializable",
// "keys must be str, int, float, bool or None, not tuple", "Circular reference detected",
// and sort_keys over keys Python cannot order.
Result<std::string> json_dumps(const Value& value, const JsonDumpOptions& options = {});

}  // namespace hearth::jinja
