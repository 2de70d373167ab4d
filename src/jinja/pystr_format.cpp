// Python's format(value, spec) (the format-spec mini-language) and str.format as Jinja2's
// sandboxed formatter runs it: fields are looked up with the environment's getattr/getitem.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>

#include "jinja/builtins.h"
#include "jinja/pystr.h"
#include "jinja/value.h"

namespace hearth::jinja::pystr {

namespace {

// Width and precision beyond this are refused (Python's limit is far larger, but no chat
// template needs megabytes of padding).
constexpr int64_t kMaxFormatDigits = 100000;

// printf of one double in %e, %E or %f style ('#' keeps the point), into a string of any size.
std::string printf_double(char style, bool alternate, int precision, double value) {
  const auto print = [&](char* buffer, size_t size) {
    switch (style) {
      case 'e':
        return alternate ? std::snprintf(buffer, size, "%#.*e", precision, value)
                         : std::snprintf(buffer, size, "%.*e", precision, value);
      case 'E':
        return alternate ? std::snprintf(buffer, size, "%#.*E", precision, value)
                         : std::snprintf(buffer, size, "%.*E", precision, value);
      default:
        return alternate ? std::snprintf(buffer, size, "%#.*f", precision, value)
                         : std::snprintf(buffer, size, "%.*f", precision, value);
    }
  };
  const int size = print(nullptr, 0);
  std::string out(static_cast<size_t>(size) + 1, '\0');
  print(out.data(), out.size());
  out.resize(static_cast<size_t>(size));
  return out;
}

// Drops trailing zeros of the fraction (and a bare point) in "123.4500" or "1.500e+07".
std::string strip_fraction_zeros(std::string text) {
  const size_t point = text.find('.');
  if (point == std::string::npos) return text;
  size_t exponent = text.find_first_of("eE");
  if (exponent == std::string::npos) exponent = text.size();
  size_t last = exponent;
  while (last > point + 1 && text[last - 1] == '0') --last;
  if (last == point + 1) last = point;
  return text.substr(0, last) + text.substr(exponent);
}

std::string general_digits(double magnitude, char type, int64_t precision, bool alternate,
                           bool add_dot_0) {
  const int digits = static_cast<int>(precision == 0 ? 1 : precision);
  const std::string scientific = printf_double('e', alternate, digits - 1, magnitude);
  const int exponent = std::atoi(scientific.c_str() + scientific.find('e') + 1);
  // Python's omitted type switches to exponent notation one digit earlier than 'g' does.
  const int threshold = add_dot_0 ? digits - 1 : digits;
  std::string out;
  if (exponent < -4 || exponent >= threshold) {
    out = alternate ? scientific : strip_fraction_zeros(scientific);
  } else {
    const std::string fixed = printf_double('f', alternate, digits - 1 - exponent, magnitude);
    out = alternate ? fixed : strip_fraction_zeros(fixed);
    if (add_dot_0 && out.find('.') == std::string::npos) out += ".0";
  }
  if (type == 'G') {
    for (char& c : out) {
      if (c == 'e') c = 'E';
    }
  }
  return out;
}

}  // namespace

std::string float_digits(double magnitude, char type, int64_t precision, bool alternate,
                         bool add_dot_0) {
  const bool upper = type == 'E' || type == 'F' || type == 'G';
  if (std::isnan(magnitude)) return std::string(upper ? "NAN" : "nan") + (type == '%' ? "%" : "");
  if (std::isinf(magnitude)) return std::string(upper ? "INF" : "inf") + (type == '%' ? "%" : "");
  if (precision < 0) precision = 6;
  const int digits = static_cast<int>(precision);
  switch (type) {
    case 'e':
    case 'E':
      return printf_double(type, alternate, digits, magnitude);
    case 'f':
    case 'F':
      return printf_double('f', alternate, digits, magnitude);
    case '%':
      return printf_double('f', alternate, digits, magnitude * 100) + "%";
    default:
      return general_digits(magnitude, type, precision, alternate, add_dot_0);
  }
}

std::string integer_digits(uint64_t magnitude, int base, bool upper) {
  static constexpr char kLower[] = "0123456789abcdef";
  static constexpr char kUpper[] = "0123456789ABCDEF";
  const uint64_t divisor = base == 2 ? 2 : base == 8 ? 8 : base == 16 ? 16 : 10;
  const char* const alphabet = upper ? kUpper : kLower;
  std::string digits;
  uint64_t rest = magnitude;
  do {
    const uint64_t quotient = rest / divisor;
    digits.push_back(alphabet[rest - quotient * divisor]);
    rest = quotient;
  } while (rest > 0);
  std::reverse(digits.begin(), digits.end());
  return digits;
}

std::string ascii_escape(std::string_view repr_text) {
  std::string out;
  out.reserve(repr_text.size());
  size_t pos = 0;
  static constexpr char kHex[] = "0123456789abcdef";
  while (pos < repr_text.size()) {
    const char32_t cp = decode_one(repr_text, pos);
    if (cp < 0x80) {
      out.push_back(static_cast<char>(cp));
      continue;
    }
    const int digits = cp <= 0xFF ? 2 : cp <= 0xFFFF ? 4 : 8;
    out.push_back('\\');
    out.push_back(digits == 2 ? 'x' : digits == 4 ? 'u' : 'U');
    for (int shift = (digits - 1) * 4; shift >= 0; shift -= 4)
      out.push_back(kHex[(cp >> shift) & 0xF]);
  }
  return out;
}

// --- format(value, spec) ---

namespace {

struct Spec {
  std::string fill = " ";
  bool fill_specified = false;
  char align = 0;  // < > ^ =, 0 = the type's default
  char sign = 0;   // + - space
  bool alternate = false;
  bool zero = false;
  int64_t width = -1;
  char grouping = 0;  // , _
  int64_t precision = -1;
  char type = 0;
};

bool is_align(char c) {
  return c == '<' || c == '>' || c == '^' || c == '=';
}

Result<int64_t> parse_count(std::string_view spec, size_t& pos) {
  int64_t value = 0;
  while (pos < spec.size() && spec[pos] >= '0' && spec[pos] <= '9') {
    value = value * 10 + (spec[pos++] - '0');
    if (value > kMaxFormatDigits) return render_error("Too many decimal digits in format string");
  }
  return value;
}

Result<Spec> parse_spec(std::string_view spec) {
  Spec out;
  size_t pos = 0;
  // A fill is any one code point, but only when an alignment follows it.
  size_t after_first = 0;
  if (!spec.empty()) decode_one(spec, after_first);
  if (after_first < spec.size() && is_align(spec[after_first])) {
    out.fill = std::string(spec.substr(0, after_first));
    out.fill_specified = true;
    out.align = spec[after_first];
    pos = after_first + 1;
  } else if (!spec.empty() && is_align(spec[0])) {
    out.align = spec[0];
    pos = 1;
  }
  if (pos < spec.size() && (spec[pos] == '+' || spec[pos] == '-' || spec[pos] == ' ')) {
    out.sign = spec[pos++];
  }
  if (pos < spec.size() && spec[pos] == '#') {
    out.alternate = true;
    ++pos;
  }
  // '0' before the width means zero fill, unless a fill was given (then it starts the width).
  if (!out.fill_specified && pos < spec.size() && spec[pos] == '0') {
    out.zero = true;
    out.fill = "0";
    ++pos;
  }
  const size_t width_start = pos;
  HEARTH_ASSIGN_OR_RETURN(const int64_t width, parse_count(spec, pos));
  if (pos > width_start) out.width = width;
  if (pos < spec.size() && (spec[pos] == ',' || spec[pos] == '_')) out.grouping = spec[pos++];
  if (pos < spec.size() && spec[pos] == '.') {
    ++pos;
    const size_t precision_start = pos;
    HEARTH_ASSIGN_OR_RETURN(const int64_t precision, parse_count(spec, pos));
    if (pos == precision_start) return render_error("Format specifier missing precision");
    out.precision = precision;
  }
  if (pos + 1 < spec.size()) return render_error("Invalid format specifier");
  if (pos < spec.size()) out.type = spec[pos];
  return out;
}

// Pads `body` (already carrying sign and prefix) to the spec's width; '=' puts the padding
// between the first `sign_length` bytes and the rest.
std::string pad_to_width(std::string body, size_t sign_length, const Spec& spec,
                         char default_align) {
  const auto length = static_cast<int64_t>(code_point_count(body));
  if (spec.width <= length) return body;
  const int64_t padding = spec.width - length;
  const char align = spec.align ? spec.align : default_align;
  int64_t left = 0;
  if (align == '>' || align == '=') left = padding;
  if (align == '^') left = padding / 2;
  std::string out;
  out.reserve(body.size() + static_cast<size_t>(padding) * spec.fill.size());
  if (align == '=') out.append(body, 0, sign_length);
  for (int64_t i = 0; i < left; ++i) out += spec.fill;
  out.append(body, align == '=' ? sign_length : 0);
  for (int64_t i = left; i < padding; ++i) out += spec.fill;
  return out;
}

// Inserts `separator` every `every` digits from the right of the integer part; with zero
// padding the digits are first widened so the grouped number fills `min_width`.
std::string group_digits(std::string digits, char separator, int every, int64_t min_width) {
  const auto grouped_length = [&](size_t n) { return static_cast<int64_t>(n + (n - 1) / every); };
  while (grouped_length(digits.size()) < min_width) digits.insert(digits.begin(), '0');
  std::string out;
  out.reserve(digits.size() * 2);
  for (size_t i = 0; i < digits.size(); ++i) {
    if (i > 0 && (digits.size() - i) % every == 0) out.push_back(separator);
    out.push_back(digits[i]);
  }
  return out;
}

std::string sign_text(bool negative, char sign) {
  if (negative) return "-";
  if (sign == '+') return "+";
  if (sign == ' ') return " ";
  return "";
}

// Applies the '0' flag: zero fill with '=' alignment unless the spec names its own.
// The '0' flag also pads numbers after the sign when no alignment is given.
Spec with_zero_padding(Spec spec) {
  if (spec.zero && !spec.align) spec.align = '=';
  return spec;
}

// Python allows ',' with decimal and float presentations only, '_' also with b, o, x, X.
Status check_grouping(const Spec& spec, char type) {
  if (!spec.grouping) return Status::ok();
  const std::string_view allowed =
      spec.grouping == ',' ? std::string_view("deEfFgG%") : std::string_view("deEfFgG%boxX");
  if (type == 0 || allowed.find(type) != std::string_view::npos) return Status::ok();
  return render_error(std::string("Cannot specify '") + spec.grouping + "' with '" + type + "'.");
}

Result<std::string> format_string(std::string_view text, Spec spec) {
  if (spec.type && spec.type != 's') {
    return render_error(std::string("Unknown format code '") + spec.type +
                        "' for object of type 'str'");
  }
  if (spec.sign) return render_error("Sign not allowed in string format specifier");
  if (spec.grouping)
    return render_error(std::string("Cannot specify '") + spec.grouping + "' with 's'.");
  if (spec.alternate)
    return render_error("Alternate form (#) not allowed in string format specifier");
  if (spec.align == '=')
    return render_error("'=' alignment not allowed in string format specifier");
  std::string body(spec.precision >= 0 ? cp_slice(text, 0, spec.precision) : text);
  return pad_to_width(std::move(body), 0, spec, '<');
}

Result<std::string> format_float(double value, Spec spec);

Result<std::string> format_integer(int64_t value, Spec spec) {
  const char type = spec.type ? spec.type : 'd';
  if (std::string_view("eEfFgG%").find(type) != std::string_view::npos) {
    return format_float(static_cast<double>(value), spec);
  }
  if (spec.precision >= 0) return render_error("Precision not allowed in integer format specifier");
  HEARTH_RETURN_IF_ERROR(check_grouping(spec, spec.type));
  if (type == 'c') {
    if (spec.sign) return render_error("Sign not allowed with integer format specifier 'c'");
    if (spec.alternate) {
      return render_error("Alternate form (#) not allowed with integer format specifier 'c'");
    }
    if (value < 0 || value > 0x10FFFF) return render_error("%c arg not in range(0x110000)");
    std::string text;
    append_utf8(text, static_cast<char32_t>(value));
    spec.type = 0;
    return pad_to_width(std::move(text), 0, spec, '>');
  }
  int base = 10;
  std::string prefix;
  switch (type) {
    case 'd':
    case 'n':
      break;
    case 'b':
      base = 2, prefix = "0b";
      break;
    case 'o':
      base = 8, prefix = "0o";
      break;
    case 'x':
      base = 16, prefix = "0x";
      break;
    case 'X':
      base = 16, prefix = "0X";
      break;
    default:
      return render_error(std::string("Unknown format code '") + type +
                          "' for object of type 'int'");
  }
  if (!spec.alternate) prefix.clear();
  spec = with_zero_padding(spec);
  const bool negative = value < 0;
  const uint64_t magnitude =
      negative ? 0 - static_cast<uint64_t>(value) : static_cast<uint64_t>(value);
  std::string digits = integer_digits(magnitude, base, type == 'X');
  const std::string sign = sign_text(negative, spec.sign);
  if (spec.grouping) {
    const int64_t room = (spec.fill == "0" && spec.align == '=')
                             ? spec.width - static_cast<int64_t>(sign.size() + prefix.size())
                             : 0;
    digits = group_digits(std::move(digits), spec.grouping, base == 10 ? 3 : 4, room);
  }
  return pad_to_width(sign + prefix + digits, sign.size() + prefix.size(), spec, '>');
}

Result<std::string> format_float(double value, Spec spec) {
  const bool omitted_type = spec.type == 0;
  char type = spec.type;
  if (type == 'n') type = 'g';
  if (std::string_view("eEfFgG%").find(type) == std::string_view::npos && !omitted_type) {
    return render_error(std::string("Unknown format code '") + spec.type +
                        "' for object of type 'float'");
  }
  HEARTH_RETURN_IF_ERROR(check_grouping(spec, spec.type));
  spec = with_zero_padding(spec);
  const bool negative = std::signbit(value) && !std::isnan(value);
  const double magnitude = std::fabs(value);
  std::string digits;
  if (omitted_type && spec.precision < 0) {
    digits = repr_float(magnitude);
    // '#' keeps a decimal point even in exponent form: format(1e-07, '#') == '1.e-07'.
    const size_t exponent = digits.find('e');
    if (spec.alternate && exponent != std::string::npos && digits.find('.') == std::string::npos) {
      digits.insert(exponent, ".");
    }
  } else {
    digits = float_digits(magnitude, omitted_type ? 'g' : type, spec.precision, spec.alternate,
                          omitted_type);
  }
  const std::string sign = sign_text(negative, spec.sign);
  if (spec.grouping && std::isfinite(magnitude)) {
    const size_t integer_end = digits.find_first_not_of("0123456789");
    const int64_t room =
        (spec.fill == "0" && spec.align == '=')
            ? spec.width - static_cast<int64_t>(sign.size() + digits.size() -
                                                std::min(integer_end, digits.size()))
            : 0;
    const std::string tail = integer_end == std::string::npos ? "" : digits.substr(integer_end);
    digits = group_digits(digits.substr(0, integer_end), spec.grouping, 3, room) + tail;
  }
  return pad_to_width(sign + digits, sign.size(), spec, '>');
}

}  // namespace

Result<std::string> format_value(const Value& value, std::string_view spec_text) {
  if (spec_text.empty()) return to_str(value);
  HEARTH_ASSIGN_OR_RETURN(const Spec spec, parse_spec(spec_text));
  switch (value.kind()) {
    case Kind::kString:
      return format_string(value.as_string(), spec);
    case Kind::kBool:
    case Kind::kInt:
      return format_integer(value.as_int(), spec);
    case Kind::kFloat:
      return format_float(value.as_float(), spec);
    default:
      return render_error("unsupported format string passed to " + type_name(value) +
                          ".__format__");
  }
}

// --- str.format ---

namespace {

using Keywords = std::vector<std::pair<std::string, Value>>;

struct FormatState {
  const std::vector<Value>& args;
  const Keywords& kwargs;
  int64_t auto_index = 0;
  bool used_auto = false;
  bool used_manual = false;
};

bool all_digits(std::string_view text) {
  if (text.empty()) return false;
  for (char c : text) {
    if (c < '0' || c > '9') return false;
  }
  return true;
}

Result<Value> lookup_first(std::string_view first, FormatState& state) {
  if (all_digits(first)) {
    const int64_t index = std::strtoll(std::string(first).c_str(), nullptr, 10);
    if (index >= static_cast<int64_t>(state.args.size())) {
      return render_error("Replacement index " + std::string(first) +
                          " out of range for positional args tuple");
    }
    return state.args[static_cast<size_t>(index)];
  }
  for (const auto& [name, value] : state.kwargs) {
    if (name == first) return value;
  }
  return render_error("KeyError: " + repr_string(first));
}

// Resolves "0.name[key].x": the first part from the arguments, then attributes and items
// through the environment's lookups, as the sandboxed formatter does.
Result<Value> resolve_field(std::string_view field, FormatState& state) {
  const size_t first_end = std::min(field.find('.'), field.find('['));
  std::string_view first = field.substr(0, std::min(first_end, field.size()));
  std::string numbered;
  if (first.empty()) {
    if (state.used_manual) {
      return render_error(
          "cannot switch from manual field specification to automatic field numbering");
    }
    state.used_auto = true;
    numbered = std::to_string(state.auto_index++);
    first = numbered;
  } else if (all_digits(field)) {
    if (state.used_auto) {
      return render_error(
          "cannot switch from automatic field numbering to manual field specification");
    }
    state.used_manual = true;
  }
  HEARTH_ASSIGN_OR_RETURN(Value current, lookup_first(first, state));
  size_t pos = first_end;
  while (pos < field.size()) {
    if (field[pos] == '.') {
      const size_t end = std::min(field.find_first_of(".[", pos + 1), field.size());
      if (end == pos + 1) return render_error("Empty attribute in format string");
      HEARTH_ASSIGN_OR_RETURN(current, get_attr(current, field.substr(pos + 1, end - pos - 1)));
      pos = end;
    } else if (field[pos] == '[') {
      const size_t close = field.find(']', pos);
      if (close == std::string_view::npos) return render_error("Missing ']' in format string");
      const std::string_view key = field.substr(pos + 1, close - pos - 1);
      if (key.empty()) return render_error("Empty attribute in format string");
      const Value key_value =
          all_digits(key)
              ? Value(static_cast<int64_t>(std::strtoll(std::string(key).c_str(), nullptr, 10)))
              : Value(key);
      HEARTH_ASSIGN_OR_RETURN(current, get_item(current, key_value));
      pos = close + 1;
      if (pos < field.size() && field[pos] != '.' && field[pos] != '[') {
        return render_error("Only '.' or '[' may follow ']' in format field specifier");
      }
    } else {
      return render_error("Only '.' or '[' may follow ']' in format field specifier");
    }
  }
  return current;
}

Result<std::string> vformat(std::string_view fmt, FormatState& state, int depth);

// One replacement field's text between the braces: name[!conversion][:spec].
Result<std::string> format_field(std::string_view field, FormatState& state, int depth) {
  size_t name_end = 0;
  // The name may hold [..] with any characters; '!' and ':' end it only outside brackets.
  bool in_bracket = false;
  for (; name_end < field.size(); ++name_end) {
    const char c = field[name_end];
    if (c == '[') in_bracket = true;
    if (c == ']') in_bracket = false;
    if (!in_bracket && (c == '!' || c == ':')) break;
  }
  const std::string_view name = field.substr(0, name_end);
  char conversion = 0;
  std::string_view spec;
  size_t pos = name_end;
  if (pos < field.size() && field[pos] == '!') {
    if (pos + 1 >= field.size())
      return render_error("end of string while looking for conversion specifier");
    conversion = field[pos + 1];
    pos += 2;
    if (pos < field.size() && field[pos] != ':')
      return render_error("expected ':' after conversion specifier");
  }
  if (pos < field.size()) spec = field.substr(pos + 1);
  HEARTH_ASSIGN_OR_RETURN(const Value value, resolve_field(name, state));
  HEARTH_ASSIGN_OR_RETURN(const std::string expanded_spec, vformat(spec, state, depth + 1));
  switch (conversion) {
    case 0:
      return format_value(value, expanded_spec);
    case 's':
      return format_value(Value(to_str(value)), expanded_spec);
    case 'r':
      return format_value(Value(repr(value)), expanded_spec);
    case 'a':
      return format_value(Value(ascii_escape(repr(value))), expanded_spec);
    default:
      return render_error(std::string("Unknown conversion specifier ") + conversion);
  }
}

Result<std::string> vformat(std::string_view fmt, FormatState& state, int depth) {
  if (depth > 2) return render_error("Max string recursion exceeded");
  std::string out;
  out.reserve(fmt.size());
  size_t pos = 0;
  while (pos < fmt.size()) {
    const char c = fmt[pos];
    if (c == '}') {
      if (pos + 1 < fmt.size() && fmt[pos + 1] == '}') {
        out.push_back('}');
        pos += 2;
        continue;
      }
      return render_error("Single '}' encountered in format string");
    }
    if (c != '{') {
      out.push_back(c);
      ++pos;
      continue;
    }
    if (pos + 1 < fmt.size() && fmt[pos + 1] == '{') {
      out.push_back('{');
      pos += 2;
      continue;
    }
    // The field runs to the matching '}' (a spec may nest one level of fields).
    int nesting = 1;
    size_t end = pos + 1;
    for (; end < fmt.size(); ++end) {
      if (fmt[end] == '{') ++nesting;
      if (fmt[end] == '}' && --nesting == 0) break;
    }
    if (end >= fmt.size()) {
      return render_error(nesting > 1 ? "unmatched '{' in format spec"
                                      : "expected '}' before end of string");
    }
    HEARTH_ASSIGN_OR_RETURN(const std::string piece,
                            format_field(fmt.substr(pos + 1, end - pos - 1), state, depth));
    out += piece;
    pos = end + 1;
  }
  return out;
}

}  // namespace

Result<std::string> format(std::string_view fmt, const std::vector<Value>& args,
                           const std::vector<std::pair<std::string, Value>>& kwargs) {
  FormatState state{args, kwargs};
  return vformat(fmt, state, 0);
}

}  // namespace hearth::jinja::pystr
