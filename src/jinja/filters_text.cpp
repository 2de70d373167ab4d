// String filters: case, padding, indentation, replacing, trimming, truncation, escaping and
// Hugging Face's tojson.
#include <cmath>

#include "jinja/filters_common.h"
#include "jinja/pystr.h"
#include "jinja/tojson.h"

namespace hearth::jinja::builtins {

namespace {

// A filter's input as Jinja2's soft_str sees it: str() of anything (undefined prints "").
std::string text_of(const Value& value) {
  if (value.is_string()) return value.as_string();
  return to_str(value);
}

// Markup stays Markup through str methods (markupsafe wraps them).
Value like_input(const Value& input, std::string text) {
  return input.is_safe() ? Value::safe_string(std::move(text)) : Value(std::move(text));
}

Status no_arguments(std::string_view function, CallArgs& args) {
  HEARTH_ASSIGN_OR_RETURN(auto bound, bind_args(function, args, {}));
  (void)bound;
  return Status::ok();
}

}  // namespace

Result<Value> filter_capitalize(const Value& input, CallArgs& args, Interp&) {
  HEARTH_RETURN_IF_ERROR(no_arguments("capitalize", args));
  return like_input(input, pystr::capitalize(text_of(input)));
}

Result<Value> filter_lower(const Value& input, CallArgs& args, Interp&) {
  HEARTH_RETURN_IF_ERROR(no_arguments("lower", args));
  return like_input(input, pystr::lower(text_of(input)));
}

Result<Value> filter_upper(const Value& input, CallArgs& args, Interp&) {
  HEARTH_RETURN_IF_ERROR(no_arguments("upper", args));
  return like_input(input, pystr::upper(text_of(input)));
}

Result<Value> filter_center(const Value& input, CallArgs& args, Interp& interp) {
  HEARTH_ASSIGN_OR_RETURN(auto bound, bind_args("center", args, {{"width", 80}}));
  HEARTH_ASSIGN_OR_RETURN(const int64_t width, to_integer(bound[0]));
  const std::string text = text_of(input);
  if (width > 0) HEARTH_RETURN_IF_ERROR(interp.charge(static_cast<size_t>(width)));
  return like_input(input, pystr::center(text, width));
}

Result<Value> filter_escape(const Value& input, CallArgs& args, Interp&) {
  HEARTH_RETURN_IF_ERROR(no_arguments("escape", args));
  return escape_value(input);
}

Result<Value> filter_forceescape(const Value& input, CallArgs& args, Interp&) {
  HEARTH_RETURN_IF_ERROR(no_arguments("forceescape", args));
  return Value::safe_string(html_escape(text_of(input)));
}

Result<Value> filter_safe(const Value& input, CallArgs& args, Interp&) {
  HEARTH_RETURN_IF_ERROR(no_arguments("safe", args));
  if (input.is_safe()) return input;
  return Value::safe_string(text_of(input));
}

Result<Value> filter_string(const Value& input, CallArgs& args, Interp&) {
  HEARTH_RETURN_IF_ERROR(no_arguments("string", args));
  if (input.is_string()) return input;
  return Value(to_str(input));
}

Result<Value> filter_format(const Value& input, CallArgs& args, Interp&) {
  if (!args.positional.empty() && !args.keyword.empty()) {
    return render_error("can't handle positional and keyword arguments at the same time");
  }
  Value format_args;
  if (!args.keyword.empty()) {
    format_args = Value::dict();
    for (auto& [name, value] : args.keyword) format_args.dict_data().set(Value(name), value);
  } else {
    std::vector<Value> items = args.positional;
    // Markup % args escapes the arguments (markupsafe's escape helper).
    if (input.is_safe()) {
      for (Value& item : items) {
        if (item.is_string() && !item.is_safe()) item = escape_value(item);
      }
    }
    format_args = Value::tuple(std::move(items));
  }
  HEARTH_ASSIGN_OR_RETURN(std::string out, pystr::percent_format(text_of(input), format_args));
  return like_input(input, std::move(out));
}

Result<Value> filter_indent(const Value& input, CallArgs& args, Interp& interp) {
  HEARTH_ASSIGN_OR_RETURN(
      auto bound, bind_args("indent", args, {{"width", 4}, {"first", false}, {"blank", false}}));
  if (input.is_undefined()) return undefined_error(input);
  if (!input.is_string()) {
    return render_error("unsupported operand type(s) for +=: '" + type_name(input) + "' and 'str'");
  }
  std::string indentation;
  if (bound[0].is_string()) {
    indentation = bound[0].as_string();
  } else if (bound[0].is_int() || bound[0].is_bool()) {
    indentation.assign(static_cast<size_t>(std::max<int64_t>(0, bound[0].as_int())), ' ');
  } else {
    return render_error("can't multiply sequence by non-int of type '" + type_name(bound[0]) + "'");
  }
  const bool first = truthy(bound[1]);
  const bool blank = truthy(bound[2]);
  // Jinja2 appends a newline before splitlines() so that a trailing newline keeps its line.
  const std::string text = input.as_string() + "\n";
  const std::vector<std::string_view> lines = pystr::splitlines(text);
  HEARTH_RETURN_IF_ERROR(interp.charge(text.size() + lines.size() * indentation.size()));
  std::string out;
  out.reserve(text.size() + lines.size() * indentation.size());
  if (first) out += indentation;
  for (size_t i = 0; i < lines.size(); ++i) {
    if (i > 0) {
      out.push_back('\n');
      if (blank || !lines[i].empty()) out += indentation;
    }
    out.append(lines[i]);
  }
  return like_input(input, std::move(out));
}

Result<Value> filter_replace(const Value& input, CallArgs& args, Interp& interp) {
  HEARTH_ASSIGN_OR_RETURN(
      auto bound,
      bind_args("replace", args, {{"old", Value()}, {"new", Value()}, {"count", Value::none()}}));
  int64_t count = -1;
  if (!bound[2].is_none()) {
    HEARTH_ASSIGN_OR_RETURN(count, to_integer(bound[2]));
  }
  const std::string old_text = text_of(bound[0]);
  const std::string new_text = text_of(bound[1]);
  std::string out = pystr::replace(text_of(input), old_text, new_text, count);
  HEARTH_RETURN_IF_ERROR(interp.charge(out.size()));
  return Value(std::move(out));
}

Result<Value> filter_trim(const Value& input, CallArgs& args, Interp&) {
  HEARTH_ASSIGN_OR_RETURN(auto bound, bind_args("trim", args, {{"chars", Value::none()}}));
  const std::string text = text_of(input);
  if (bound[0].is_none()) return like_input(input, std::string(pystr::strip(text)));
  if (!bound[0].is_string()) return render_error("strip arg must be None or str");
  return like_input(input, std::string(pystr::strip(text, std::string_view(bound[0].as_string()))));
}

Result<Value> filter_title(const Value& input, CallArgs& args, Interp&) {
  HEARTH_RETURN_IF_ERROR(no_arguments("title", args));
  // Jinja2's rule, not str.title(): words start after runs of whitespace, '-', '(', '{', '['
  // or '<'; each word is its first character upper-cased plus the rest lower-cased.
  const std::string text = text_of(input);
  std::string out;
  out.reserve(text.size());
  size_t pos = 0;
  while (pos < text.size()) {
    const size_t start = pos;
    size_t next = pos;
    const char32_t cp = pystr::decode_one(text, next);
    const auto is_separator = [](char32_t c) {
      return c == '-' || c == '(' || c == '{' || c == '[' || c == '<' || pystr::is_space(c);
    };
    if (is_separator(cp)) {
      pos = next;
      while (pos < text.size()) {
        size_t after = pos;
        if (!is_separator(pystr::decode_one(text, after))) break;
        pos = after;
      }
      out.append(text, start, pos - start);
      continue;
    }
    pos = next;
    while (pos < text.size()) {
      size_t after = pos;
      if (is_separator(pystr::decode_one(text, after))) break;
      pos = after;
    }
    pystr::append_upper(out, cp);
    out += pystr::lower(std::string_view(text).substr(next, pos - next));
  }
  return like_input(input, std::move(out));
}

Result<Value> filter_truncate(const Value& input, CallArgs& args, Interp&) {
  HEARTH_ASSIGN_OR_RETURN(
      auto bound,
      bind_args(
          "truncate", args,
          {{"length", 255}, {"killwords", false}, {"end", "..."}, {"leeway", Value::none()}}));
  HEARTH_ASSIGN_OR_RETURN(const int64_t max_length, to_integer(bound[0]));
  const bool killwords = truthy(bound[1]);
  HEARTH_ASSIGN_OR_RETURN(const std::string end, to_string_arg(bound[2], "truncate", "end"));
  int64_t leeway = 5;  // Jinja2's default policy truncate.leeway
  if (!bound[3].is_none()) {
    HEARTH_ASSIGN_OR_RETURN(leeway, to_integer(bound[3]));
  }
  const auto end_length = static_cast<int64_t>(pystr::code_point_count(end));
  if (max_length < end_length) {
    return render_error("expected length >= " + std::to_string(end_length) + ", got " +
                        std::to_string(max_length));
  }
  if (leeway < 0) return render_error("expected leeway >= 0, got " + std::to_string(leeway));
  if (input.is_undefined()) return input;
  if (!input.is_string() && !input.is_list() && !input.is_dict()) {
    return render_error("object of type '" + type_name(input) + "' has no len()");
  }
  HEARTH_ASSIGN_OR_RETURN(const int64_t input_length, jinja::length(input));
  if (input_length <= max_length + leeway) return input;
  if (!input.is_string()) return render_error("unsupported truncation of " + type_name(input));
  const std::string_view kept = pystr::cp_slice(input.as_string(), 0, max_length - end_length);
  if (killwords) return Value(std::string(kept) + end);
  // Drop the last (possibly cut) word: everything from the last space on.
  const size_t space = kept.rfind(' ');
  const std::string_view words = space == std::string_view::npos ? kept : kept.substr(0, space);
  return Value(std::string(words) + end);
}

Result<Value> filter_wordcount(const Value& input, CallArgs& args, Interp&) {
  HEARTH_RETURN_IF_ERROR(no_arguments("wordcount", args));
  const std::string text = text_of(input);
  int64_t words = 0;
  bool in_word = false;
  size_t pos = 0;
  while (pos < text.size()) {
    const bool word_char = pystr::is_word_char(pystr::decode_one(text, pos));
    if (word_char && !in_word) ++words;
    in_word = word_char;
  }
  return Value(words);
}

Result<Value> filter_tojson(const Value& input, CallArgs& args, Interp& interp) {
  HEARTH_ASSIGN_OR_RETURN(auto bound, bind_args("tojson", args,
                                                {{"ensure_ascii", false},
                                                 {"indent", Value::none()},
                                                 {"separators", Value::none()},
                                                 {"sort_keys", false}}));
  JsonDumpOptions options;
  options.ensure_ascii = truthy(bound[0]);
  const Value& indent = bound[1];
  if (indent.is_string()) {
    options.indent = indent.as_string();
  } else if (indent.is_int() || indent.is_bool()) {
    options.indent = std::string(static_cast<size_t>(std::max<int64_t>(0, indent.as_int())), ' ');
  } else if (!indent.is_none()) {
    return render_error("can't multiply sequence by non-int of type '" + type_name(indent) + "'");
  }
  const Value& separators = bound[2];
  if (!separators.is_none()) {
    HEARTH_ASSIGN_OR_RETURN(std::vector<Value> parts, iterate(separators));
    if (parts.size() != 2) {
      return render_error("not enough values to unpack (expected 2, got " +
                          std::to_string(parts.size()) + ")");
    }
    if (!parts[0].is_string() || !parts[1].is_string()) {
      return render_error("separators must be a pair of strings");
    }
    options.item_separator = parts[0].as_string();
    options.key_separator = parts[1].as_string();
  }
  options.sort_keys = truthy(bound[3]);
  HEARTH_ASSIGN_OR_RETURN(std::string json, json_dumps(input, options));
  HEARTH_RETURN_IF_ERROR(interp.charge(json.size()));
  return Value(std::move(json));
}

}  // namespace hearth::jinja::builtins
