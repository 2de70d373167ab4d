// The builtins' contract with the evaluator: filters, tests and methods are plain functions
// looked up by name; what they need from the running template (calling a macro or a caller(),
// applying another filter or test by name, charging output against the limits, the clock)
// goes through Interp.
#pragma once

#include <ctime>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "base/status.h"
#include "jinja/value.h"

namespace hearth::jinja {

struct CallArgs {
  std::vector<Value> positional;
  std::vector<std::pair<std::string, Value>> keyword;  // in call order
};

// Errors raised while rendering; the evaluator prefixes the template position. The message
// reads like Python's ("'int' object is not iterable", "unexpected keyword argument 'x'").
inline Status render_error(std::string message) {
  return Status(ErrorCode::kInvalidArgument, std::move(message));
}

class Interp {
 public:
  virtual ~Interp() = default;
  // Calls a callable value (macro, caller, global, bound method); TypeError for others.
  virtual Result<Value> call(const Value& callee, CallArgs args) = 0;
  // Applies a filter or test by name (for map('upper'), select('odd'), selectattr(...)).
  virtual Result<Value> apply_filter(std::string_view name, const Value& input, CallArgs args) = 0;
  virtual Result<bool> apply_test(std::string_view name, const Value& input, CallArgs args) = 0;
  // Any builtin that builds a string or list bigger than its inputs (`*`, indent, join,
  // center, ...) asks first; an error here is the output-size limit.
  virtual Status charge(size_t bytes) = 0;
  // Current time for strftime_now (the render options may pin it).
  virtual std::time_t now() const = 0;
};

using FilterFn = Result<Value> (*)(const Value& input, CallArgs& args, Interp& interp);
using TestFn = Result<bool> (*)(const Value& input, CallArgs& args, Interp& interp);
using MethodFn = Result<Value> (*)(const Value& self, CallArgs& args, Interp& interp);

// nullptr when the name is unknown (the evaluator reports "No filter named 'x'." at parse
// time, as Jinja2 does for filters, and "No test named 'x'." for tests).
FilterFn find_filter(std::string_view name);
TestFn find_test(std::string_view name);
// Methods of str, list and dict values (`s.strip()`, `d.items()`, `l.append(x)`); nullptr
// when that kind has no such method.
MethodFn find_method(Kind kind, std::string_view name);

// Binds Python-style arguments to named parameters with defaults, in declaration order.
// `parameters` = {{"indent", Value::none()}, {"first", false}}; a parameter whose default is
// a plain undefined (Value()) is required. Errors: too many positional arguments, an unknown
// or repeated keyword, a missing required argument — each naming `function`.
struct Param {
  std::string_view name;
  Value default_value;
  bool required = false;
};
Result<std::vector<Value>> bind_args(std::string_view function, CallArgs& args,
                                     std::initializer_list<Param> parameters);

}  // namespace hearth::jinja
