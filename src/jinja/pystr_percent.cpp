// printf-style formatting, `fmt % args`, with Python's rules for which argument feeds which
// conversion and which types each conversion accepts.
#include <cmath>

#include "jinja/builtins.h"
#include "jinja/pystr.h"
#include "jinja/value.h"

namespace hearth::jinja::pystr {

namespace {

constexpr int64_t kMaxPercentDigits = 100000;

// Where conversions take their arguments from: a tuple's items in turn, a mapping's keys for
// %(name)s, or the one value itself.
class ArgumentSource {
 public:
  explicit ArgumentSource(const Value& args) : args_(args) {
    if (args.is_tuple()) {
      items_ = &args.list_data().items;
    }
    // Python treats anything with __getitem__ that is not a tuple or str as a mapping: a dict,
    // but also a list (then '%s' % [1] still prints the list itself).
    is_mapping_ = args.is_dict() || (args.is_list() && !args.is_tuple());
  }

  Result<Value> next() {
    if (!items_) {
      if (single_used_) return render_error("not enough arguments for format string");
      single_used_ = true;
      return args_;
    }
    if (index_ >= items_->size()) return render_error("not enough arguments for format string");
    return (*items_)[index_++];
  }

  Result<Value> by_key(std::string_view key) {
    if (!is_mapping_) return render_error("format requires a mapping");
    if (!args_.is_dict()) {
      return render_error("list indices must be integers or slices, not str");
    }
    const Value* found = args_.dict_data().find(Value(key));
    if (!found) return render_error("KeyError: " + repr_string(key));
    return *found;
  }

  // After the format string: arguments left over are an error, except for mappings.
  Status finish() const {
    const bool leftover = items_ ? index_ < items_->size() : !single_used_;
    if (leftover && !is_mapping_) {
      return render_error("not all arguments converted during string formatting");
    }
    return Status::ok();
  }

 private:
  const Value& args_;
  const std::vector<Value>* items_ = nullptr;
  size_t index_ = 0;
  bool single_used_ = false;
  bool is_mapping_ = false;
};

struct Conversion {
  bool left = false, plus = false, space = false, alternate = false, zero = false;
  int64_t width = -1;
  int64_t precision = -1;
  char type = 0;
};

std::string pad(std::string body, const Conversion& conversion, size_t sign_length, bool numeric) {
  const auto length = static_cast<int64_t>(code_point_count(body));
  if (conversion.width <= length) return body;
  const auto padding = static_cast<size_t>(conversion.width - length);
  if (conversion.left) return body.append(padding, ' ');
  if (conversion.zero && numeric) {
    body.insert(sign_length, padding, '0');
    return body;
  }
  return std::string(padding, ' ') + body;
}

std::string sign_of(bool negative, const Conversion& conversion) {
  if (negative) return "-";
  if (conversion.plus) return "+";
  if (conversion.space) return " ";
  return "";
}

Result<std::string> format_integer_conversion(const Value& arg, const Conversion& conversion) {
  const char type = conversion.type;
  const bool decimal = type == 'd' || type == 'i' || type == 'u';
  bool negative = false;
  std::string digits;
  const int base = decimal ? 10 : (type == 'o' ? 8 : 16);
  if (arg.is_int() || arg.is_bool()) {
    const int64_t value = arg.as_int();
    negative = value < 0;
    digits =
        integer_digits(negative ? 0 - static_cast<uint64_t>(value) : static_cast<uint64_t>(value),
                       base, type == 'X');
  } else if (arg.is_float() && decimal) {
    const double f = arg.as_float();
    if (std::isnan(f)) return render_error("cannot convert float NaN to integer");
    if (std::isinf(f)) return render_error("cannot convert float infinity to integer");
    // int(f) is exact in Python, however large: print the truncated value's exact digits.
    const double truncated = std::trunc(std::fabs(f));
    negative = f < 0 && truncated != 0;
    digits = float_digits(truncated, 'f', 0, false);
  } else if (decimal) {
    return render_error(std::string("%") + type + " format: a real number is required, not " +
                        type_name(arg));
  } else {
    return render_error(std::string("%") + type + " format: an integer is required, not " +
                        type_name(arg));
  }
  if (conversion.precision > static_cast<int64_t>(digits.size())) {
    digits.insert(0, static_cast<size_t>(conversion.precision) - digits.size(), '0');
  }
  std::string prefix = sign_of(negative, conversion);
  if (conversion.alternate && !decimal) prefix += type == 'o' ? "0o" : (type == 'X' ? "0X" : "0x");
  const size_t prefix_length = prefix.size();
  return pad(prefix + digits, conversion, prefix_length, true);
}

Result<std::string> format_float_conversion(const Value& arg, const Conversion& conversion) {
  if (!arg.is_number()) return render_error("must be real number, not " + type_name(arg));
  const double value = arg.as_float();
  const bool negative = std::signbit(value) && !std::isnan(value);
  const std::string sign = sign_of(negative, conversion);
  std::string digits =
      float_digits(std::fabs(value), conversion.type, conversion.precision, conversion.alternate);
  const bool finite = std::isfinite(value);
  return pad(sign + digits, conversion, sign.size(), finite);
}

Result<std::string> format_char_conversion(const Value& arg, const Conversion& conversion) {
  std::string text;
  if (arg.is_int() || arg.is_bool()) {
    const int64_t code = arg.as_int();
    if (code < 0 || code > 0x10FFFF) return render_error("%c arg not in range(0x110000)");
    append_utf8(text, static_cast<char32_t>(code));
  } else if (arg.is_string() && code_point_count(arg.as_string()) == 1) {
    text = arg.as_string();
  } else {
    return render_error("%c requires int or char");
  }
  return pad(std::move(text), conversion, 0, false);
}

Result<std::string> convert(const Value& arg, const Conversion& conversion) {
  switch (conversion.type) {
    case 's':
    case 'r':
    case 'a': {
      std::string text = conversion.type == 's'   ? to_str(arg)
                         : conversion.type == 'r' ? repr(arg)
                                                  : ascii_escape(repr(arg));
      if (conversion.precision >= 0) text = std::string(cp_slice(text, 0, conversion.precision));
      return pad(std::move(text), conversion, 0, false);
    }
    case 'd':
    case 'i':
    case 'u':
    case 'o':
    case 'x':
    case 'X':
      return format_integer_conversion(arg, conversion);
    case 'e':
    case 'E':
    case 'f':
    case 'F':
    case 'g':
    case 'G':
      return format_float_conversion(arg, conversion);
    case 'c':
      return format_char_conversion(arg, conversion);
    default:
      return render_error("unsupported format character");
  }
}

// Reads a width or precision: digits, or '*' taking an int from the arguments.
Result<int64_t> read_count(std::string_view fmt, size_t& pos, ArgumentSource& source) {
  if (pos < fmt.size() && fmt[pos] == '*') {
    ++pos;
    HEARTH_ASSIGN_OR_RETURN(const Value arg, source.next());
    if (!arg.is_int() && !arg.is_bool()) return render_error("* wants int");
    return arg.as_int();
  }
  int64_t value = -1;
  while (pos < fmt.size() && fmt[pos] >= '0' && fmt[pos] <= '9') {
    value = (value < 0 ? 0 : value * 10) + (fmt[pos++] - '0');
    if (value > kMaxPercentDigits) return render_error("width too big");
  }
  return value;
}

// Parses one conversion after its '%' (pos points past it) and formats its argument.
Result<std::string> format_one(std::string_view fmt, size_t& pos, ArgumentSource& source) {
  std::optional<std::string_view> key;
  if (pos < fmt.size() && fmt[pos] == '(') {
    int depth = 1;
    size_t end = pos + 1;
    for (; end < fmt.size() && depth > 0; ++end) {
      if (fmt[end] == '(') ++depth;
      if (fmt[end] == ')') --depth;
    }
    if (depth > 0) return render_error("incomplete format key");
    key = fmt.substr(pos + 1, end - pos - 2);
    pos = end;
  }
  Conversion conversion;
  for (; pos < fmt.size(); ++pos) {
    const char c = fmt[pos];
    if (c == '-')
      conversion.left = true;
    else if (c == '+')
      conversion.plus = true;
    else if (c == ' ')
      conversion.space = true;
    else if (c == '#')
      conversion.alternate = true;
    else if (c == '0')
      conversion.zero = true;
    else
      break;
  }
  HEARTH_ASSIGN_OR_RETURN(conversion.width, read_count(fmt, pos, source));
  if (conversion.width < -1) {
    conversion.left = true;
    conversion.width = -conversion.width;
  }
  if (pos < fmt.size() && fmt[pos] == '.') {
    ++pos;
    HEARTH_ASSIGN_OR_RETURN(conversion.precision, read_count(fmt, pos, source));
    if (conversion.precision < 0) conversion.precision = 0;
  }
  while (pos < fmt.size() && (fmt[pos] == 'h' || fmt[pos] == 'l' || fmt[pos] == 'L')) ++pos;
  if (pos >= fmt.size()) return render_error("incomplete format");
  const size_t type_at = pos;
  size_t after = pos;
  const char32_t type = decode_one(fmt, after);
  pos = after;
  if (type == '%') return std::string("%");
  if (std::string_view("sradiuoxXeEfFgGc").find(static_cast<char>(type)) ==
          std::string_view::npos ||
      type >= 0x80) {
    char hex[16];
    std::snprintf(hex, sizeof(hex), "0x%x", static_cast<unsigned>(type));
    std::string shown;
    append_utf8(shown, type);
    return render_error("unsupported format character '" + shown + "' (" + hex + ") at index " +
                        std::to_string(code_point_count(fmt.substr(0, type_at))));
  }
  conversion.type = static_cast<char>(type);
  Value arg;
  if (key) {
    HEARTH_ASSIGN_OR_RETURN(arg, source.by_key(*key));
  } else {
    HEARTH_ASSIGN_OR_RETURN(arg, source.next());
  }
  return convert(arg, conversion);
}

}  // namespace

Result<std::string> percent_format(std::string_view fmt, const Value& args) {
  ArgumentSource source(args);
  std::string out;
  out.reserve(fmt.size() + 16);
  size_t pos = 0;
  while (pos < fmt.size()) {
    const size_t percent = fmt.find('%', pos);
    if (percent == std::string_view::npos) {
      out.append(fmt.substr(pos));
      break;
    }
    out.append(fmt.substr(pos, percent - pos));
    pos = percent + 1;
    HEARTH_ASSIGN_OR_RETURN(const std::string piece, format_one(fmt, pos, source));
    out += piece;
  }
  HEARTH_RETURN_IF_ERROR(source.finish());
  return out;
}

}  // namespace hearth::jinja::pystr
