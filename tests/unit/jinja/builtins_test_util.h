// Helpers for the builtins' unit tests: a fake Interp that applies filters and tests by name
// from the builtin tables, and calls that print a result the way `{{ ... }}` would, or
// "ERROR: <message>".
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <vector>

#include "jinja/builtins.h"
#include "jinja/value.h"

namespace hearth::jinja::testing {

class FakeInterp : public Interp {
 public:
  Result<Value> call(const Value& callee, CallArgs args) override {
    if (!callee.is_callable())
      return render_error("'" + type_name(callee) + "' object is not callable");
    return callee.callable_ref().fn(args, *this);
  }
  Result<Value> apply_filter(std::string_view name, const Value& input, CallArgs args) override {
    const FilterFn fn = find_filter(name);
    if (!fn) return render_error("No filter named '" + std::string(name) + "'.");
    return fn(input, args, *this);
  }
  Result<bool> apply_test(std::string_view name, const Value& input, CallArgs args) override {
    const TestFn fn = find_test(name);
    if (!fn) return render_error("No test named '" + std::string(name) + "'.");
    return fn(input, args, *this);
  }
  Status charge(size_t bytes) override {
    charged += bytes;
    if (charged > limit) return Status(ErrorCode::kResourceExhausted, "output limit");
    return Status::ok();
  }
  std::time_t now() const override { return 0; }

  size_t charged = 0;
  size_t limit = size_t{1} << 30;
};

// A value from JSON text: `J(R"({"a": [1, 2.5, null]})")`.
inline Value J(std::string_view json) {
  return from_json(nlohmann::ordered_json::parse(json));
}

inline std::string printed(const Result<Value>& result) {
  if (!result.is_ok()) return "ERROR: " + result.status().message();
  return to_str(*result);
}

inline std::string printed(const Result<bool>& result) {
  if (!result.is_ok()) return "ERROR: " + result.status().message();
  return *result ? "True" : "False";
}

// Arguments from JSON: a list of positionals and an object of keywords.
inline CallArgs make_args(std::string_view positional_json = "[]",
                          std::string_view keyword_json = "{}") {
  CallArgs args;
  const nlohmann::ordered_json positional = nlohmann::ordered_json::parse(positional_json);
  const nlohmann::ordered_json keywords = nlohmann::ordered_json::parse(keyword_json);
  for (size_t i = 0; i < positional.size(); ++i)
    args.positional.push_back(from_json(positional[i]));
  for (auto it = keywords.begin(); it != keywords.end(); ++it) {
    args.keyword.emplace_back(it.key(), from_json(it.value()));
  }
  return args;
}

// `{{ input|name(*positional, **keywords) }}`, printed.
inline std::string filter(std::string_view name, const Value& input,
                          std::string_view positional_json = "[]",
                          std::string_view keyword_json = "{}") {
  const FilterFn fn = find_filter(name);
  if (!fn) return "ERROR: no filter " + std::string(name);
  FakeInterp interp;
  CallArgs args = make_args(positional_json, keyword_json);
  return printed(fn(input, args, interp));
}

// `{{ input is name(*positional) }}`, printed.
inline std::string test(std::string_view name, const Value& input,
                        std::string_view positional_json = "[]") {
  const TestFn fn = find_test(name);
  if (!fn) return "ERROR: no test " + std::string(name);
  FakeInterp interp;
  CallArgs args = make_args(positional_json);
  return printed(fn(input, args, interp));
}

// `{{ self.name(*positional, **keywords) }}`, printed.
inline std::string method(const Value& self, std::string_view name,
                          std::string_view positional_json = "[]",
                          std::string_view keyword_json = "{}") {
  const MethodFn fn = find_method(self.kind(), name);
  if (!fn) return "ERROR: no method " + std::string(name);
  FakeInterp interp;
  CallArgs args = make_args(positional_json, keyword_json);
  return printed(fn(self, args, interp));
}

inline bool is_error(const std::string& printed_result) {
  return printed_result.rfind("ERROR: ", 0) == 0;
}

}  // namespace hearth::jinja::testing
