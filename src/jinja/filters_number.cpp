// Number filters: abs, int, float, round, filesizeformat (and random, refused). int() and
// float() parse strings by Python's rules: surrounding whitespace, a sign, '_' between
// digits, any Unicode decimal digit, base prefixes, inf/nan.
#include <unicode/uchar.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <limits>

#include "jinja/filters_common.h"
#include "jinja/pystr.h"

namespace hearth::jinja::builtins {

namespace {

// Python first maps Unicode decimal digits to ASCII and whitespace to spaces, then strips.
std::string normalize_number_text(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  size_t pos = 0;
  while (pos < text.size()) {
    const char32_t cp = pystr::decode_one(text, pos);
    if (cp >= 0x80 && pystr::is_decimal(cp)) {
      out.push_back(static_cast<char>('0' + u_charDigitValue(static_cast<UChar32>(cp))));
    } else if (cp >= 0x80 && pystr::is_space(cp)) {
      out.push_back(' ');
    } else {
      pystr::append_utf8(out, cp);
    }
  }
  return std::string(pystr::strip(out));
}

int digit_value(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'z') return c - 'a' + 10;
  if (c >= 'A' && c <= 'Z') return c - 'A' + 10;
  return 99;
}

enum class IntParse { kOk, kInvalid, kOverflow };

// int(text, base): returns kInvalid where Python raises ValueError.
IntParse parse_python_int(std::string_view raw, int64_t base, int64_t& out) {
  if (base != 0 && (base < 2 || base > 36)) return IntParse::kInvalid;
  const std::string text = normalize_number_text(raw);
  size_t pos = 0;
  bool negative = false;
  if (pos < text.size() && (text[pos] == '+' || text[pos] == '-')) negative = text[pos++] == '-';
  const auto has_prefix = [&](char letter) {
    return pos + 1 < text.size() && text[pos] == '0' && (text[pos + 1] | 0x20) == letter;
  };
  bool prefixed = false;
  if ((base == 0 || base == 16) && has_prefix('x')) {
    base = 16, prefixed = true;
  } else if ((base == 0 || base == 8) && has_prefix('o')) {
    base = 8, prefixed = true;
  } else if ((base == 0 || base == 2) && has_prefix('b')) {
    base = 2, prefixed = true;
  }
  const bool auto_decimal = base == 0;
  if (base == 0) base = 10;
  if (prefixed) pos += 2;
  const size_t digits_start = pos;
  uint64_t magnitude = 0;
  bool overflow = false;
  bool previous_underscore = prefixed;  // "0x_1f" is valid: an underscore may follow the prefix
  bool any_nonzero = false;
  for (; pos < text.size(); ++pos) {
    if (text[pos] == '_') {
      if (previous_underscore && pos != digits_start) return IntParse::kInvalid;
      if (pos == digits_start && !prefixed) return IntParse::kInvalid;
      previous_underscore = true;
      continue;
    }
    const int digit = digit_value(text[pos]);
    if (digit >= base) return IntParse::kInvalid;
    previous_underscore = false;
    any_nonzero = any_nonzero || digit != 0;
    if (magnitude > (std::numeric_limits<uint64_t>::max() - digit) / base) overflow = true;
    magnitude = magnitude * base + digit;
  }
  if (pos == digits_start || previous_underscore || text.size() == digits_start) {
    return IntParse::kInvalid;
  }
  // Base 0 refuses leading zeros in a nonzero decimal ("010").
  if (auto_decimal && !prefixed && text[digits_start] == '0' && any_nonzero)
    return IntParse::kInvalid;
  const uint64_t limit = negative ? uint64_t{1} << 63 : (uint64_t{1} << 63) - 1;
  if (overflow || magnitude > limit) return IntParse::kOverflow;
  out = negative ? static_cast<int64_t>(0 - magnitude) : static_cast<int64_t>(magnitude);
  return IntParse::kOk;
}

// float(text): nullopt where Python raises ValueError.
std::optional<double> parse_python_float(std::string_view raw) {
  const std::string text = normalize_number_text(raw);
  std::string cleaned;
  size_t pos = 0;
  if (pos < text.size() && (text[pos] == '+' || text[pos] == '-')) cleaned.push_back(text[pos++]);
  const std::string lowered = pystr::lower(text.substr(pos));
  if (lowered == "inf" || lowered == "infinity" || lowered == "nan") {
    return std::strtod((cleaned + lowered).c_str(), nullptr);
  }
  bool any_digit = false;
  bool in_exponent = false;
  bool seen_point = false;
  for (; pos < text.size(); ++pos) {
    const char c = text[pos];
    const bool digit_before =
        !cleaned.empty() && std::isdigit(static_cast<unsigned char>(cleaned.back()));
    if (c == '_') {
      // Only between two digits.
      if (!digit_before || pos + 1 >= text.size() ||
          !std::isdigit(static_cast<unsigned char>(text[pos + 1]))) {
        return std::nullopt;
      }
      continue;
    }
    if (std::isdigit(static_cast<unsigned char>(c))) {
      any_digit = true;
    } else if (c == '.' && !seen_point && !in_exponent) {
      seen_point = true;
    } else if ((c == 'e' || c == 'E') && any_digit && !in_exponent) {
      in_exponent = true;
      cleaned.push_back(c);
      if (pos + 1 < text.size() && (text[pos + 1] == '+' || text[pos + 1] == '-')) {
        cleaned.push_back(text[++pos]);
      }
      if (pos + 1 >= text.size() || !std::isdigit(static_cast<unsigned char>(text[pos + 1]))) {
        return std::nullopt;
      }
      continue;
    } else {
      return std::nullopt;
    }
    cleaned.push_back(c);
  }
  if (!any_digit) return std::nullopt;
  return std::strtod(cleaned.c_str(), nullptr);
}

Status int_too_large() {
  return render_error("integer out of range: Hearth's integers are 64-bit");
}

}  // namespace

Result<Value> filter_abs(const Value& input, CallArgs& args, Interp&) {
  HEARTH_ASSIGN_OR_RETURN(auto bound, bind_args("abs", args, {}));
  (void)bound;
  if (input.is_float()) return Value(std::fabs(input.as_float()));
  if (input.is_int() || input.is_bool()) {
    const int64_t v = input.as_int();
    if (v == std::numeric_limits<int64_t>::min()) return int_too_large();
    return Value(v < 0 ? -v : v);
  }
  if (input.is_undefined()) return render_error("bad operand type for abs(): 'Undefined'");
  return render_error("bad operand type for abs(): '" + type_name(input) + "'");
}

Result<Value> filter_int(const Value& input, CallArgs& args, Interp&) {
  HEARTH_ASSIGN_OR_RETURN(auto bound, bind_args("int", args, {{"default", 0}, {"base", 10}}));
  const Value& fallback = bound[0];
  if (input.is_undefined()) return undefined_error(input);
  if (input.is_int() || input.is_bool()) return Value(input.as_int());
  double as_double = 0;
  if (input.is_float()) {
    as_double = input.as_float();
  } else if (input.is_string()) {
    int64_t parsed = 0;
    // A base that is not an int makes int() raise TypeError; Jinja2 then tries float().
    if (bound[1].is_int() || bound[1].is_bool()) {
      switch (parse_python_int(input.as_string(), bound[1].as_int(), parsed)) {
        case IntParse::kOk:
          return Value(parsed);
        case IntParse::kOverflow:
          return int_too_large();
        case IntParse::kInvalid:
          break;
      }
    }
    // Jinja2's fallback: int(float(value)), so "42.7" gives 42.
    const auto as_float = parse_python_float(input.as_string());
    if (!as_float) return fallback;
    as_double = *as_float;
  } else {
    return fallback;
  }
  if (std::isnan(as_double)) return fallback;  // ValueError, caught by Jinja2
  if (std::isinf(as_double)) return render_error("cannot convert float infinity to integer");
  const double truncated = std::trunc(as_double);
  if (truncated >= 9.2233720368547758e18 || truncated < -9.2233720368547758e18)
    return int_too_large();
  return Value(static_cast<int64_t>(truncated));
}

Result<Value> filter_float(const Value& input, CallArgs& args, Interp&) {
  HEARTH_ASSIGN_OR_RETURN(auto bound, bind_args("float", args, {{"default", 0.0}}));
  if (input.is_undefined()) return undefined_error(input);
  if (input.is_number()) return Value(input.as_float());
  if (input.is_string()) {
    const auto parsed = parse_python_float(input.as_string());
    if (parsed) return Value(*parsed);
  }
  return bound[0];
}

namespace {

// round(x, n) for n < 0: half-even at the 10^-n place of the exact decimal value of x.
double round_float_to_tens(double value, int64_t ndigits) {
  if (ndigits < -308) return 0.0 * value;
  const size_t places = static_cast<size_t>(-ndigits);
  char buffer[400];
  std::snprintf(buffer, sizeof(buffer), "%.0f", std::trunc(std::fabs(value)));
  std::string digits = buffer;
  const bool has_fraction = std::fabs(value) != std::trunc(std::fabs(value));
  if (digits.size() < places) digits.insert(0, places - digits.size() + 1, '0');
  const std::string dropped = digits.substr(digits.size() - places);
  std::string kept = digits.substr(0, digits.size() - places);
  const bool above_half =
      dropped[0] > '5' || (dropped[0] == '5' && (has_fraction || dropped.find_first_not_of(
                                                                     '0', 1) != std::string::npos));
  const bool tie = dropped[0] == '5' && !above_half;
  const bool odd = (kept.back() - '0') % 2 == 1;
  if (above_half || (tie && odd)) {
    size_t i = kept.size();
    while (i > 0 && kept[i - 1] == '9') kept[--i] = '0';
    if (i == 0) {
      kept.insert(kept.begin(), '1');
    } else {
      ++kept[i - 1];
    }
  }
  const double magnitude = std::strtod((kept + "e" + std::to_string(places)).c_str(), nullptr);
  return std::copysign(magnitude, value);
}

Result<Value> round_common(const Value& value, int64_t precision) {
  if (value.is_int() || value.is_bool()) {
    const int64_t v = value.as_int();
    if (precision >= 0) return Value(v);
    if (precision < -18) return Value(int64_t{0});
    int64_t unit = 1;
    for (int64_t i = 0; i < -precision; ++i) unit *= 10;
    int64_t remainder = v % unit;
    if (remainder < 0) remainder += unit;
    int64_t base = v - remainder;
    const bool odd_quotient = ((base / unit) % 2) != 0;
    if (2 * remainder > unit || (2 * remainder == unit && odd_quotient)) base += unit;
    return Value(base);
  }
  const double x = value.as_float();
  if (!std::isfinite(x) || precision > 323) return Value(x);
  if (precision < 0) return Value(round_float_to_tens(x, precision));
  char buffer[512];
  std::snprintf(buffer, sizeof(buffer), "%.*f", static_cast<int>(precision), x);
  return Value(std::strtod(buffer, nullptr));
}

}  // namespace

Result<Value> filter_round(const Value& input, CallArgs& args, Interp&) {
  HEARTH_ASSIGN_OR_RETURN(auto bound,
                          bind_args("round", args, {{"precision", 0}, {"method", "common"}}));
  const std::string method = bound[1].is_string() ? bound[1].as_string() : "";
  if (method != "common" && method != "ceil" && method != "floor") {
    return render_error("method must be common, ceil or floor");
  }
  if (!input.is_number()) {
    return render_error("type " + type_name(input) + " doesn't define __round__ method");
  }
  HEARTH_ASSIGN_OR_RETURN(const int64_t precision, to_integer(bound[0]));
  if (method == "common") return round_common(input, precision);
  // Jinja2: math.ceil/floor(value * 10**precision) / 10**precision, a float.
  if (input.is_int() || input.is_bool()) {
    if (precision >= 0) return Value(static_cast<double>(input.as_int()));
  }
  const double scale = std::pow(10.0, static_cast<double>(precision));
  const double scaled = input.as_float() * scale;
  if (std::isinf(scaled)) return render_error("cannot convert float infinity to integer");
  if (std::isnan(scaled)) return render_error("cannot convert float NaN to integer");
  const double whole = method == "ceil" ? std::ceil(scaled) : std::floor(scaled);
  return Value(whole / scale);
}

Result<Value> filter_filesizeformat(const Value& input, CallArgs& args, Interp&) {
  HEARTH_ASSIGN_OR_RETURN(auto bound, bind_args("filesizeformat", args, {{"binary", false}}));
  double bytes = 0;
  if (input.is_number()) {
    bytes = input.as_float();
  } else if (input.is_string()) {
    const auto parsed = parse_python_float(input.as_string());
    if (!parsed) return render_error("could not convert string to float: " + repr(input));
    bytes = *parsed;
  } else if (input.is_undefined()) {
    return undefined_error(input);
  } else {
    return render_error("float() argument must be a string or a real number, not '" +
                        type_name(input) + "'");
  }
  const bool binary = truthy(bound[0]);
  const double base = binary ? 1024 : 1000;
  static constexpr const char* kDecimal[] = {"kB", "MB", "GB", "TB", "PB", "EB", "ZB", "YB"};
  static constexpr const char* kBinary[] = {"KiB", "MiB", "GiB", "TiB", "PiB", "EiB", "ZiB", "YiB"};
  if (bytes == 1) return Value("1 Byte");
  if (bytes < base) {
    if (std::isnan(bytes)) return render_error("cannot convert float NaN to integer");
    return Value(std::to_string(static_cast<int64_t>(std::trunc(bytes))) + " Bytes");
  }
  double unit = base;
  const char* prefix = "";
  for (int i = 0; i < 8; ++i) {
    unit = std::pow(base, i + 2);
    prefix = binary ? kBinary[i] : kDecimal[i];
    if (bytes < unit) break;
  }
  char buffer[512];
  std::snprintf(buffer, sizeof(buffer), "%.1f %s", base * bytes / unit, prefix);
  return Value(std::string(buffer));
}

Result<Value> filter_random(const Value&, CallArgs&, Interp&) {
  return render_error(
      "the 'random' filter is not supported: chat templates must render deterministically");
}

}  // namespace hearth::jinja::builtins
