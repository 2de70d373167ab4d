// Filters that apply another filter or test to each item: map, select, reject, selectattr,
// rejectattr. The named filter or test runs through the Interp, so user-visible lookups and
// errors ("No filter named 'x'.") are the evaluator's.
#include "jinja/filters_common.h"

namespace hearth::jinja::builtins {

Result<Value> filter_map(const Value& input, CallArgs& args, Interp& interp) {
  // Jinja2 prepares nothing for an empty (falsy) input, so bad arguments go unnoticed there.
  if (!truthy(input)) return python_iterable({}, "generator");
  HEARTH_ASSIGN_OR_RETURN(const std::vector<Value> items, iterate(input));
  const bool by_attribute = args.positional.empty() &&
                            std::any_of(args.keyword.begin(), args.keyword.end(),
                                        [](const auto& kw) { return kw.first == "attribute"; });
  std::vector<Value> out;
  out.reserve(items.size());
  if (by_attribute) {
    Value attribute;
    Value fallback = Value::none();
    for (const auto& [name, value] : args.keyword) {
      if (name == "attribute") {
        attribute = value;
      } else if (name == "default") {
        fallback = value;
      } else {
        return render_error("Unexpected keyword argument '" + name + "'");
      }
    }
    HEARTH_ASSIGN_OR_RETURN(const AttributePath path, AttributePath::parse(attribute));
    for (const Value& item : items) {
      HEARTH_ASSIGN_OR_RETURN(Value picked, path.lookup(item, fallback));
      out.push_back(std::move(picked));
    }
    return python_iterable(std::move(out), "generator");
  }
  if (args.positional.empty()) return render_error("map requires a filter argument");
  const std::string filter_name = to_str(args.positional[0]);
  CallArgs rest;
  rest.positional.assign(args.positional.begin() + 1, args.positional.end());
  rest.keyword = args.keyword;
  for (const Value& item : items) {
    HEARTH_ASSIGN_OR_RETURN(Value mapped, interp.apply_filter(filter_name, item, rest));
    out.push_back(std::move(mapped));
  }
  return python_iterable(std::move(out), "generator");
}

namespace {

// select/reject/selectattr/rejectattr: keep the items whose test (or truthiness, without a
// test name) equals `keep_when`.
Result<Value> select_or_reject(const Value& input, CallArgs& args, Interp& interp, bool keep_when,
                               bool lookup_attribute) {
  if (!truthy(input)) return python_iterable({}, "generator");
  HEARTH_ASSIGN_OR_RETURN(const std::vector<Value> items, iterate(input));
  size_t offset = 0;
  AttributePath path;
  if (lookup_attribute) {
    if (args.positional.empty()) return render_error("Missing parameter for attribute name");
    HEARTH_ASSIGN_OR_RETURN(path, AttributePath::parse(args.positional[0]));
    offset = 1;
  }
  const bool has_test = args.positional.size() > offset;
  std::string test_name;
  CallArgs test_args;
  if (has_test) {
    test_name = to_str(args.positional[offset]);
    test_args.positional.assign(args.positional.begin() + static_cast<std::ptrdiff_t>(offset) + 1,
                                args.positional.end());
    test_args.keyword = args.keyword;
  }
  std::vector<Value> out;
  for (const Value& item : items) {
    HEARTH_ASSIGN_OR_RETURN(const Value subject, path.lookup(item));
    bool passed = false;
    if (has_test) {
      HEARTH_ASSIGN_OR_RETURN(passed, interp.apply_test(test_name, subject, test_args));
    } else {
      passed = truthy(subject);
    }
    if (passed == keep_when) out.push_back(item);
  }
  return python_iterable(std::move(out), "generator");
}

}  // namespace

Result<Value> filter_select(const Value& input, CallArgs& args, Interp& interp) {
  return select_or_reject(input, args, interp, true, false);
}

Result<Value> filter_reject(const Value& input, CallArgs& args, Interp& interp) {
  return select_or_reject(input, args, interp, false, false);
}

Result<Value> filter_selectattr(const Value& input, CallArgs& args, Interp& interp) {
  return select_or_reject(input, args, interp, true, true);
}

Result<Value> filter_rejectattr(const Value& input, CallArgs& args, Interp& interp) {
  return select_or_reject(input, args, interp, false, true);
}

}  // namespace hearth::jinja::builtins
