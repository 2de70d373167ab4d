// Python arithmetic and comparison semantics (CPython's int, float, str, list and tuple
// operators), including their TypeError and ZeroDivisionError messages.
#include "jinja/evaluator_ops.h"

#include <cmath>
#include <limits>

#include "jinja/filters_common.h"
#include "jinja/pystr.h"

namespace hearth::jinja {

Status undefined_error(const Value& v) {
  const std::string& hint = v.undefined_hint();
  return render_error(hint.empty() ? "None is undefined" : hint);
}

namespace {

constexpr double kTwoPow63 = 9223372036854775808.0;

// int vs float without rounding the int: Python compares the exact values.
std::partial_ordering compare_int_float(int64_t i, double f) {
  if (std::isnan(f)) return std::partial_ordering::unordered;
  if (f >= kTwoPow63) return std::partial_ordering::less;
  if (f < -kTwoPow63) return std::partial_ordering::greater;
  const double whole = std::trunc(f);
  const auto whole_int = static_cast<int64_t>(whole);
  if (i != whole_int)
    return i < whole_int ? std::partial_ordering::less : std::partial_ordering::greater;
  const double fraction = f - whole;
  if (fraction > 0) return std::partial_ordering::less;
  if (fraction < 0) return std::partial_ordering::greater;
  return std::partial_ordering::equivalent;
}

const char* op_symbol(CompareOp op) {
  switch (op) {
    case CompareOp::kLt:
      return "<";
    case CompareOp::kLe:
      return "<=";
    case CompareOp::kGt:
      return ">";
    case CompareOp::kGe:
      return ">=";
    default:
      return "==";
  }
}

const char* op_symbol(BinaryOp op) {
  switch (op) {
    case BinaryOp::kAdd:
      return "+";
    case BinaryOp::kSub:
      return "-";
    case BinaryOp::kMul:
      return "*";
    case BinaryOp::kDiv:
      return "/";
    case BinaryOp::kFloorDiv:
      return "//";
    case BinaryOp::kMod:
      return "%";
    case BinaryOp::kPow:
      return "** or pow()";
  }
  return "?";
}

bool ordering_holds(std::partial_ordering order, CompareOp op) {
  switch (op) {
    case CompareOp::kLt:
      return order == std::partial_ordering::less;
    case CompareOp::kLe:
      return order == std::partial_ordering::less || order == std::partial_ordering::equivalent;
    case CompareOp::kGt:
      return order == std::partial_ordering::greater;
    case CompareOp::kGe:
      return order == std::partial_ordering::greater || order == std::partial_ordering::equivalent;
    default:
      return false;
  }
}

Result<bool> order_values(const Value& a, const Value& b, CompareOp op, int depth) {
  if (a.is_undefined()) return undefined_error(a);
  if (b.is_undefined()) return undefined_error(b);
  if (a.is_number() && b.is_number()) return ordering_holds(compare_numbers(a, b), op);
  if (a.is_string() && b.is_string()) {
    return ordering_holds(a.as_string().compare(b.as_string()) <=> 0, op);
  }
  if (a.is_list() && b.is_list() && a.is_tuple() == b.is_tuple() && depth < 500) {
    // Lexicographic: the first unequal pair decides, else the lengths.
    const auto& x = a.list_data().items;
    const auto& y = b.list_data().items;
    for (size_t i = 0; i < x.size() && i < y.size(); ++i) {
      if (!equals(x[i], y[i])) return order_values(x[i], y[i], op, depth + 1);
    }
    return ordering_holds(x.size() <=> y.size(), op);
  }
  return render_error(std::string("'") + op_symbol(op) + "' not supported between instances of '" +
                      type_name(a) + "' and '" + type_name(b) + "'");
}

// Python's type name, with markupsafe's Markup for safe strings.
std::string operand_type(const Value& v) {
  return v.is_safe() ? "Markup" : type_name(v);
}

Status unsupported(BinaryOp op, const Value& a, const Value& b) {
  return render_error(std::string("unsupported operand type(s) for ") + op_symbol(op) + ": '" +
                      operand_type(a) + "' and '" + operand_type(b) + "'");
}

Status integer_overflow() {
  return render_error("integer result too large (Hearth's integers are 64-bit)");
}

// Python's float divmod: the remainder takes the divisor's sign.
void float_divmod(double x, double y, double* floordiv, double* mod) {
  double m = std::fmod(x, y);
  double div = (x - m) / y;
  if (m != 0) {
    if ((y < 0) != (m < 0)) {
      m += y;
      div -= 1.0;
    }
  } else {
    m = std::copysign(0.0, y);
  }
  double floor_div;
  if (div != 0) {
    floor_div = std::floor(div);
    if (div - floor_div > 0.5) floor_div += 1.0;
  } else {
    floor_div = std::copysign(0.0, x / y);
  }
  *floordiv = floor_div;
  *mod = m;
}

Result<Value> int_pow(int64_t base, int64_t exponent) {
  if (exponent < 0) {
    if (base == 0) return render_error("0.0 cannot be raised to a negative power");
    return Value(std::pow(static_cast<double>(base), static_cast<double>(exponent)));
  }
  int64_t result = 1;
  while (exponent > 0) {
    if ((exponent & 1) != 0 && __builtin_mul_overflow(result, base, &result)) {
      return integer_overflow();
    }
    exponent >>= 1;
    if (exponent > 0 && __builtin_mul_overflow(base, base, &base)) return integer_overflow();
  }
  return Value(result);
}

Result<Value> float_pow(double base, double exponent) {
  if (base == 0 && exponent < 0) return render_error("0.0 cannot be raised to a negative power");
  if (base < 0 && std::isfinite(exponent) && exponent != std::floor(exponent)) {
    return render_error(
        "complex numbers are not supported (negative number to a fractional power)");
  }
  const double result = std::pow(base, exponent);
  if (std::isinf(result) && std::isfinite(base) && std::isfinite(exponent)) {
    return render_error("(34, 'Numerical result out of range')");
  }
  return Value(result);
}

Result<Value> numeric_op(BinaryOp op, const Value& a, const Value& b) {
  const bool both_int = !a.is_float() && !b.is_float();
  if (both_int) {
    const int64_t x = a.as_int();
    const int64_t y = b.as_int();
    int64_t r = 0;
    switch (op) {
      case BinaryOp::kAdd:
        if (__builtin_add_overflow(x, y, &r)) return integer_overflow();
        return Value(r);
      case BinaryOp::kSub:
        if (__builtin_sub_overflow(x, y, &r)) return integer_overflow();
        return Value(r);
      case BinaryOp::kMul:
        if (__builtin_mul_overflow(x, y, &r)) return integer_overflow();
        return Value(r);
      case BinaryOp::kDiv:
        if (y == 0) return render_error("division by zero");
        return Value(static_cast<double>(x) / static_cast<double>(y));
      case BinaryOp::kFloorDiv:
      case BinaryOp::kMod: {
        if (y == 0) {
          return render_error(op == BinaryOp::kMod ? "integer modulo by zero"
                                                   : "integer division or modulo by zero");
        }
        if (x == std::numeric_limits<int64_t>::min() && y == -1) {
          if (op == BinaryOp::kMod) return Value(int64_t{0});
          return integer_overflow();
        }
        int64_t q = x / y;
        int64_t m = x % y;
        if (m != 0 && ((m < 0) != (y < 0))) {
          m += y;
          q -= 1;
        }
        return Value(op == BinaryOp::kMod ? m : q);
      }
      case BinaryOp::kPow:
        return int_pow(x, y);
    }
  }
  const double x = a.as_float();
  const double y = b.as_float();
  switch (op) {
    case BinaryOp::kAdd:
      return Value(x + y);
    case BinaryOp::kSub:
      return Value(x - y);
    case BinaryOp::kMul:
      return Value(x * y);
    case BinaryOp::kDiv:
      if (y == 0) return render_error("float division by zero");
      return Value(x / y);
    case BinaryOp::kFloorDiv:
    case BinaryOp::kMod: {
      if (y == 0) {
        return render_error(op == BinaryOp::kMod ? "float modulo" : "float floor division by zero");
      }
      double floor_div = 0;
      double mod = 0;
      float_divmod(x, y, &floor_div, &mod);
      return Value(op == BinaryOp::kMod ? mod : floor_div);
    }
    case BinaryOp::kPow:
      return float_pow(x, y);
  }
  return unsupported(op, a, b);
}

Result<Value> repeat(const Value& sequence, int64_t count, Interp& interp) {
  if (count < 0) count = 0;
  if (sequence.is_string()) {
    const std::string& text = sequence.as_string();
    const auto n = static_cast<size_t>(count);
    if (!text.empty() && n > (size_t{1} << 40) / text.size()) {
      return Status(ErrorCode::kResourceExhausted, "string repetition too large");
    }
    HEARTH_RETURN_IF_ERROR(interp.charge(text.size() * n));
    std::string out;
    out.reserve(text.size() * n);
    for (size_t i = 0; i < n; ++i) out += text;
    if (sequence.is_safe()) return Value::safe_string(std::move(out));
    return Value(std::move(out));
  }
  const auto& items = sequence.list_data().items;
  const auto n = static_cast<size_t>(count);
  if (!items.empty() && n > (size_t{1} << 32) / items.size()) {
    return Status(ErrorCode::kResourceExhausted, "list repetition too large");
  }
  HEARTH_RETURN_IF_ERROR(interp.charge(items.size() * n * sizeof(Value)));
  std::vector<Value> out;
  out.reserve(items.size() * n);
  for (size_t i = 0; i < n; ++i) out.insert(out.end(), items.begin(), items.end());
  return sequence.is_tuple() ? Value::tuple(std::move(out)) : Value::list(std::move(out));
}

bool is_sequence(const Value& v) {
  return v.is_string() || v.is_list();
}

Result<Value> add_sequences(const Value& a, const Value& b, Interp& interp) {
  if (a.is_string()) {
    if (!b.is_string()) {
      return render_error("can only concatenate str (not \"" + type_name(b) + "\") to str");
    }
    HEARTH_RETURN_IF_ERROR(interp.charge(a.as_string().size() + b.as_string().size()));
    return Value(a.as_string() + b.as_string());
  }
  const std::string left = type_name(a);
  if (!b.is_list() || a.is_tuple() != b.is_tuple()) {
    return render_error("can only concatenate " + left + " (not \"" + type_name(b) + "\") to " +
                        left);
  }
  const auto& x = a.list_data().items;
  const auto& y = b.list_data().items;
  HEARTH_RETURN_IF_ERROR(interp.charge((x.size() + y.size()) * sizeof(Value)));
  std::vector<Value> out;
  out.reserve(x.size() + y.size());
  out.insert(out.end(), x.begin(), x.end());
  out.insert(out.end(), y.begin(), y.end());
  return a.is_tuple() ? Value::tuple(std::move(out)) : Value::list(std::move(out));
}

// markupsafe.Markup's + (either side): the plain str operand is HTML-escaped and the result
// stays Markup; a non-str operand is a TypeError.
Result<Value> markup_add(const Value& a, const Value& b, Interp& interp) {
  if (!a.is_string() || !b.is_string()) {
    return render_error("unsupported operand type(s) for +: '" + operand_type(a) + "' and '" +
                        operand_type(b) + "'");
  }
  std::string out = builtins::escape_value(a).as_string() + builtins::escape_value(b).as_string();
  HEARTH_RETURN_IF_ERROR(interp.charge(out.size()));
  return Value::safe_string(std::move(out));
}

// Markup % args: every argument is escaped (numbers pass through for %d/%f) and the result
// is Markup, as markupsafe's _MarkupEscapeHelper does.
Value escape_format_argument(const Value& v) {
  if (v.is_number()) return v;
  return Value(builtins::escape_value(v).as_string());
}

Result<Value> markup_format(const Value& format, const Value& args) {
  Value escaped;
  if (args.is_tuple()) {
    std::vector<Value> items;
    for (const Value& item : args.list_data().items) items.push_back(escape_format_argument(item));
    escaped = Value::tuple(std::move(items));
  } else if (args.is_dict()) {
    escaped = Value::dict();
    for (const auto& [key, value] : args.dict_data().entries) {
      escaped.dict_data().entries.emplace_back(key, escape_format_argument(value));
    }
  } else {
    escaped = escape_format_argument(args);
  }
  HEARTH_ASSIGN_OR_RETURN(std::string formatted,
                          pystr::percent_format(format.as_string(), escaped));
  return Value::safe_string(std::move(formatted));
}

}  // namespace

std::partial_ordering compare_numbers(const Value& a, const Value& b) {
  if (a.is_float() && b.is_float()) return a.as_float() <=> b.as_float();
  if (a.is_float()) return 0 <=> compare_int_float(b.as_int(), a.as_float());
  if (b.is_float()) return compare_int_float(a.as_int(), b.as_float());
  return a.as_int() <=> b.as_int();
}

Result<bool> compare_values(const Value& a, const Value& b, CompareOp op) {
  switch (op) {
    case CompareOp::kEq:
      return equals(a, b);
    case CompareOp::kNe:
      return !equals(a, b);
    case CompareOp::kIn:
      return contains(b, a);
    case CompareOp::kNotIn: {
      HEARTH_ASSIGN_OR_RETURN(bool found, contains(b, a));
      return !found;
    }
    default:
      return order_values(a, b, op, 0);
  }
}

Result<Value> binary_op(BinaryOp op, const Value& a, const Value& b, Interp& interp) {
  if (op == BinaryOp::kMod && a.is_safe()) return markup_format(a, b);
  if (op == BinaryOp::kMod && a.is_string()) {
    HEARTH_ASSIGN_OR_RETURN(std::string formatted, pystr::percent_format(a.as_string(), b));
    HEARTH_RETURN_IF_ERROR(interp.charge(formatted.size()));
    return Value(std::move(formatted));
  }
  // Jinja2's Undefined raises for every arithmetic operator, on either side.
  if (a.is_undefined()) return undefined_error(a);
  if (b.is_undefined()) return undefined_error(b);
  if (a.is_number() && b.is_number()) return numeric_op(op, a, b);
  if (op == BinaryOp::kAdd && (a.is_safe() || b.is_safe())) return markup_add(a, b, interp);
  if (op == BinaryOp::kAdd && is_sequence(a)) return add_sequences(a, b, interp);
  if (op == BinaryOp::kMul) {
    const bool a_seq = is_sequence(a);
    const bool b_seq = is_sequence(b);
    if (a_seq && (b.is_int() || b.is_bool())) return repeat(a, b.as_int(), interp);
    if (b_seq && (a.is_int() || a.is_bool())) return repeat(b, a.as_int(), interp);
    if (a_seq || b_seq) {
      const Value& other = a_seq ? b : a;
      return render_error("can't multiply sequence by non-int of type '" + type_name(other) + "'");
    }
  }
  return unsupported(op, a, b);
}

Result<Value> unary_op(UnaryOp op, const Value& v) {
  if (v.is_undefined()) return undefined_error(v);
  const char* symbol = op == UnaryOp::kNeg ? "-" : "+";
  if (v.is_float()) return Value(op == UnaryOp::kNeg ? -v.as_float() : v.as_float());
  if (v.is_int() || v.is_bool()) {
    const int64_t i = v.as_int();
    if (op == UnaryOp::kPos) return Value(i);
    if (i == std::numeric_limits<int64_t>::min()) return integer_overflow();
    return Value(-i);
  }
  return render_error(std::string("bad operand type for unary ") + symbol + ": '" + type_name(v) +
                      "'");
}

}  // namespace hearth::jinja
