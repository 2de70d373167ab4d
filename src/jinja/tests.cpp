// Jinja2's builtin tests (`x is odd`, `x is defined`, ...), with Python's type facts: bool is
// an int for `number` but not for `integer`; an undefined value is iterable, a sequence and
// (as Jinja2 defines it) callable.
#include <algorithm>
#include <array>
#include <cmath>

#include "jinja/filters_common.h"
#include "jinja/pystr.h"

namespace hearth::jinja {

namespace {

using builtins::undefined_error;

Status no_extra(std::string_view test, CallArgs& args) {
  HEARTH_ASSIGN_OR_RETURN(auto bound, bind_args(test, args, {}));
  (void)bound;
  return Status::ok();
}

Result<Value> one_argument(std::string_view test, CallArgs& args) {
  HEARTH_ASSIGN_OR_RETURN(auto bound, bind_args(test, args, {{"other", Value()}}));
  return bound[0];
}

// Python's value % divisor == expected, for the numeric tests.
Result<bool> modulo_is(const Value& value, const Value& divisor, int64_t expected) {
  if (value.is_undefined()) return undefined_error(value);
  if (divisor.is_undefined()) return undefined_error(divisor);
  if (value.is_string()) {
    // str % x is string formatting in Python; a formatted string never equals a number.
    auto formatted = pystr::percent_format(value.as_string(), divisor);
    if (!formatted.is_ok()) return formatted.status();
    return false;
  }
  if (!value.is_number() || !divisor.is_number()) {
    return render_error("unsupported operand type(s) for %: '" + type_name(value) + "' and '" +
                        type_name(divisor) + "'");
  }
  if (value.is_float() || divisor.is_float()) {
    const double d = divisor.as_float();
    if (d == 0) return render_error("float modulo");
    double r = std::fmod(value.as_float(), d);
    if (r != 0 && ((r < 0) != (d < 0))) r += d;  // Python's result takes the divisor's sign
    return r == static_cast<double>(expected);
  }
  const int64_t d = divisor.as_int();
  if (d == 0) return render_error("integer modulo by zero");
  if (d == -1) return expected == 0;
  int64_t r = value.as_int() % d;
  if (r != 0 && ((r < 0) != (d < 0))) r += d;
  return r == expected;
}

Result<bool> test_odd(const Value& input, CallArgs& args, Interp&) {
  HEARTH_RETURN_IF_ERROR(no_extra("test_odd", args));
  return modulo_is(input, Value(2), 1);
}

Result<bool> test_even(const Value& input, CallArgs& args, Interp&) {
  HEARTH_RETURN_IF_ERROR(no_extra("test_even", args));
  return modulo_is(input, Value(2), 0);
}

Result<bool> test_divisibleby(const Value& input, CallArgs& args, Interp&) {
  HEARTH_ASSIGN_OR_RETURN(auto bound, bind_args("test_divisibleby", args, {{"num", Value()}}));
  return modulo_is(input, bound[0], 0);
}

Result<bool> test_defined(const Value& input, CallArgs& args, Interp&) {
  HEARTH_RETURN_IF_ERROR(no_extra("test_defined", args));
  return !input.is_undefined();
}

Result<bool> test_undefined(const Value& input, CallArgs& args, Interp&) {
  HEARTH_RETURN_IF_ERROR(no_extra("test_undefined", args));
  return input.is_undefined();
}

Result<bool> test_none(const Value& input, CallArgs& args, Interp&) {
  HEARTH_RETURN_IF_ERROR(no_extra("test_none", args));
  return input.is_none();
}

Result<bool> test_boolean(const Value& input, CallArgs& args, Interp&) {
  HEARTH_RETURN_IF_ERROR(no_extra("test_boolean", args));
  return input.is_bool();
}

Result<bool> test_true(const Value& input, CallArgs& args, Interp&) {
  HEARTH_RETURN_IF_ERROR(no_extra("test_true", args));
  return input.is_bool() && input.as_bool();
}

Result<bool> test_false(const Value& input, CallArgs& args, Interp&) {
  HEARTH_RETURN_IF_ERROR(no_extra("test_false", args));
  return input.is_bool() && !input.as_bool();
}

Result<bool> test_integer(const Value& input, CallArgs& args, Interp&) {
  HEARTH_RETURN_IF_ERROR(no_extra("test_integer", args));
  return input.is_int();
}

Result<bool> test_float(const Value& input, CallArgs& args, Interp&) {
  HEARTH_RETURN_IF_ERROR(no_extra("test_float", args));
  return input.is_float();
}

Result<bool> test_number(const Value& input, CallArgs& args, Interp&) {
  HEARTH_RETURN_IF_ERROR(no_extra("test_number", args));
  return input.is_number();
}

Result<bool> test_string(const Value& input, CallArgs& args, Interp&) {
  HEARTH_RETURN_IF_ERROR(no_extra("test_string", args));
  return input.is_string();
}

Result<bool> test_mapping(const Value& input, CallArgs& args, Interp&) {
  HEARTH_RETURN_IF_ERROR(no_extra("test_mapping", args));
  return input.is_dict();
}

Result<bool> test_sequence(const Value& input, CallArgs& args, Interp&) {
  HEARTH_RETURN_IF_ERROR(no_extra("test_sequence", args));
  // Anything with len() and [] : str, list, tuple, dict, and the undefined value.
  // Iterators and dict views have no [].
  return input.is_string() || (input.is_list() && builtins::python_type_of(input).empty()) ||
         input.is_dict() || input.is_undefined();
}

bool is_iterable_object(const Value& value) {
  return value.is_object() && value.object_ref().type_name() == "LoopContext";
}

Result<bool> test_iterable(const Value& input, CallArgs& args, Interp&) {
  HEARTH_RETURN_IF_ERROR(no_extra("test_iterable", args));
  return input.is_string() || input.is_list() || input.is_dict() || input.is_undefined() ||
         is_iterable_object(input);
}

Result<bool> test_callable(const Value& input, CallArgs& args, Interp&) {
  HEARTH_RETURN_IF_ERROR(no_extra("callable", args));
  if (input.is_object()) {
    // The loop object has __call__ (for recursive loops); namespace() and cycler() do not.
    return input.object_ref().type_name() == "LoopContext";
  }
  // Jinja2's Undefined defines __call__ (to raise), so callable() says yes.
  return input.is_callable() || input.is_undefined();
}

Result<bool> test_escaped(const Value& input, CallArgs& args, Interp&) {
  HEARTH_RETURN_IF_ERROR(no_extra("test_escaped", args));
  return input.is_safe();
}

Result<bool> test_lower(const Value& input, CallArgs& args, Interp&) {
  HEARTH_RETURN_IF_ERROR(no_extra("test_lower", args));
  return pystr::islower(input.is_string() ? input.as_string() : to_str(input));
}

Result<bool> test_upper(const Value& input, CallArgs& args, Interp&) {
  HEARTH_RETURN_IF_ERROR(no_extra("test_upper", args));
  return pystr::isupper(input.is_string() ? input.as_string() : to_str(input));
}

Result<bool> name_lookup_test(const Value& input, bool filters) {
  if (!input.is_string()) {
    if (!is_hashable(input)) return render_error("unhashable type: '" + type_name(input) + "'");
    return false;
  }
  return filters ? find_filter(input.as_string()) != nullptr
                 : find_test(input.as_string()) != nullptr;
}

Result<bool> test_filter(const Value& input, CallArgs& args, Interp&) {
  HEARTH_RETURN_IF_ERROR(no_extra("test_filter", args));
  return name_lookup_test(input, true);
}

Result<bool> test_test(const Value& input, CallArgs& args, Interp&) {
  HEARTH_RETURN_IF_ERROR(no_extra("test_test", args));
  return name_lookup_test(input, false);
}

// Python's `is`: singletons by value, CPython's cached small ints, containers by identity.
// Strings are the same object when they share a buffer; one-character strings are cached.
bool same_object(const Value& a, const Value& b) {
  if (a.kind() != b.kind()) return false;
  switch (a.kind()) {
    case Kind::kNone:
      return true;
    case Kind::kBool:
      return a.as_bool() == b.as_bool();
    case Kind::kInt:
      return a.as_int() == b.as_int() && a.as_int() >= -5 && a.as_int() <= 256;
    case Kind::kString:
      return a.as_string() == b.as_string() &&
             (pystr::code_point_count(a.as_string()) <= 1 || a.identity() == b.identity());
    case Kind::kUndefined:
    case Kind::kFloat:
      return false;
    default:
      return a.identity() == b.identity();
  }
}

Result<bool> test_sameas(const Value& input, CallArgs& args, Interp&) {
  HEARTH_ASSIGN_OR_RETURN(const Value other, one_argument("test_sameas", args));
  return same_object(input, other);
}

Result<bool> test_in(const Value& input, CallArgs& args, Interp&) {
  HEARTH_ASSIGN_OR_RETURN(const Value container, one_argument("test_in", args));
  return contains(container, input);
}

Result<bool> test_eq(const Value& input, CallArgs& args, Interp&) {
  HEARTH_ASSIGN_OR_RETURN(const Value other, one_argument("eq", args));
  return equals(input, other);
}

Result<bool> test_ne(const Value& input, CallArgs& args, Interp&) {
  HEARTH_ASSIGN_OR_RETURN(const Value other, one_argument("ne", args));
  return !equals(input, other);
}

Result<bool> test_lt(const Value& input, CallArgs& args, Interp&) {
  HEARTH_ASSIGN_OR_RETURN(const Value other, one_argument("lt", args));
  return builtins::python_less(input, other);
}

Result<bool> test_gt(const Value& input, CallArgs& args, Interp&) {
  HEARTH_ASSIGN_OR_RETURN(const Value other, one_argument("gt", args));
  return builtins::python_less(other, input);
}

// a <= b as Python answers it for the types templates compare: less, or equal.
Result<bool> less_or_equal(const Value& a, const Value& b) {
  HEARTH_ASSIGN_OR_RETURN(const bool less, builtins::python_less(a, b));
  return less || equals(a, b);
}

Result<bool> test_le(const Value& input, CallArgs& args, Interp&) {
  HEARTH_ASSIGN_OR_RETURN(const Value other, one_argument("le", args));
  return less_or_equal(input, other);
}

Result<bool> test_ge(const Value& input, CallArgs& args, Interp&) {
  HEARTH_ASSIGN_OR_RETURN(const Value other, one_argument("ge", args));
  return less_or_equal(other, input);
}

struct TestEntry {
  std::string_view name;
  TestFn fn;
};

// Sorted by name (byte order) for binary search.
constexpr std::array kTests = {
    TestEntry{"!=", test_ne},
    TestEntry{"<", test_lt},
    TestEntry{"<=", test_le},
    TestEntry{"==", test_eq},
    TestEntry{">", test_gt},
    TestEntry{">=", test_ge},
    TestEntry{"boolean", test_boolean},
    TestEntry{"callable", test_callable},
    TestEntry{"defined", test_defined},
    TestEntry{"divisibleby", test_divisibleby},
    TestEntry{"eq", test_eq},
    TestEntry{"equalto", test_eq},
    TestEntry{"escaped", test_escaped},
    TestEntry{"even", test_even},
    TestEntry{"false", test_false},
    TestEntry{"filter", test_filter},
    TestEntry{"float", test_float},
    TestEntry{"ge", test_ge},
    TestEntry{"greaterthan", test_gt},
    TestEntry{"gt", test_gt},
    TestEntry{"in", test_in},
    TestEntry{"integer", test_integer},
    TestEntry{"iterable", test_iterable},
    TestEntry{"le", test_le},
    TestEntry{"lessthan", test_lt},
    TestEntry{"lower", test_lower},
    TestEntry{"lt", test_lt},
    TestEntry{"mapping", test_mapping},
    TestEntry{"ne", test_ne},
    TestEntry{"none", test_none},
    TestEntry{"number", test_number},
    TestEntry{"odd", test_odd},
    TestEntry{"sameas", test_sameas},
    TestEntry{"sequence", test_sequence},
    TestEntry{"string", test_string},
    TestEntry{"test", test_test},
    TestEntry{"true", test_true},
    TestEntry{"undefined", test_undefined},
    TestEntry{"upper", test_upper},
};

}  // namespace

TestFn find_test(std::string_view name) {
  const auto* it =
      std::lower_bound(kTests.begin(), kTests.end(), name,
                       [](const TestEntry& e, std::string_view n) { return e.name < n; });
  if (it == kTests.end() || it->name != name) return nullptr;
  return it->fn;
}

}  // namespace hearth::jinja
