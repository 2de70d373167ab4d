// str methods callable from templates (`s.strip()`, `s.split(',')`, `'{}'.format(x)`), with
// Python's argument rules: most are positional-only; split/rsplit/splitlines/expandtabs
// take keywords.
#include <algorithm>
#include <array>

#include "jinja/filters_common.h"
#include "jinja/pystr.h"

namespace hearth::jinja::builtins {

namespace {

const std::string& self_text(const Value& self) {
  return self.as_string();
}

Status positional_only(std::string_view method, const CallArgs& args) {
  if (!args.keyword.empty())
    return render_error("str." + std::string(method) + "() takes no keyword arguments");
  return Status::ok();
}

// Binds positional-only parameters.
Result<std::vector<Value>> bind_positional(std::string_view method, CallArgs& args,
                                           std::initializer_list<Param> parameters) {
  HEARTH_RETURN_IF_ERROR(positional_only(method, args));
  return bind_args("str." + std::string(method), args, parameters);
}

Result<std::string> str_argument(const Value& value) {
  if (value.is_string()) return value.as_string();
  if (value.is_undefined()) return undefined_error(value);
  return render_error("must be str, not " + type_name(value));
}

// start/end of find & co: an int or None.
Result<std::optional<int64_t>> slice_index(const Value& value) {
  if (value.is_none() || value.is_undefined()) return std::optional<int64_t>();
  if (value.is_int() || value.is_bool()) return std::optional<int64_t>(value.as_int());
  return render_error("slice indices must be integers or None or have an __index__ method");
}

Value string_list(const std::vector<std::string_view>& pieces) {
  std::vector<Value> items;
  items.reserve(pieces.size());
  for (std::string_view piece : pieces) items.emplace_back(piece);
  return Value::list(std::move(items));
}

Result<Value> no_argument_method(std::string_view method, CallArgs& args, const Value& result) {
  if (!args.keyword.empty() || !args.positional.empty()) {
    return render_error("str." + std::string(method) + "() takes no arguments (" +
                        std::to_string(args.positional.size() + args.keyword.size()) + " given)");
  }
  return result;
}

#define HEARTH_STR_TRANSFORM(name, expression)                           \
  Result<Value> str_##name(const Value& self, CallArgs& args, Interp&) { \
    if (!args.positional.empty() || !args.keyword.empty()) {             \
      return no_argument_method(#name, args, Value());                   \
    }                                                                    \
    const std::string& text = self_text(self);                           \
    return Value(expression);                                            \
  }

HEARTH_STR_TRANSFORM(upper, pystr::upper(text))
HEARTH_STR_TRANSFORM(lower, pystr::lower(text))
HEARTH_STR_TRANSFORM(title, pystr::title(text))
HEARTH_STR_TRANSFORM(capitalize, pystr::capitalize(text))
HEARTH_STR_TRANSFORM(swapcase, pystr::swapcase(text))
HEARTH_STR_TRANSFORM(casefold, pystr::casefold(text))
HEARTH_STR_TRANSFORM(isdigit, pystr::isdigit(text))
HEARTH_STR_TRANSFORM(isdecimal, pystr::isdecimal(text))
HEARTH_STR_TRANSFORM(isnumeric, pystr::isnumeric(text))
HEARTH_STR_TRANSFORM(isalpha, pystr::isalpha(text))
HEARTH_STR_TRANSFORM(isalnum, pystr::isalnum(text))
HEARTH_STR_TRANSFORM(isspace, pystr::isspace(text))
HEARTH_STR_TRANSFORM(isupper, pystr::isupper(text))
HEARTH_STR_TRANSFORM(islower, pystr::islower(text))
HEARTH_STR_TRANSFORM(istitle, pystr::istitle(text))
HEARTH_STR_TRANSFORM(isascii, pystr::isascii_method(text))
HEARTH_STR_TRANSFORM(isidentifier, pystr::isidentifier(text))
HEARTH_STR_TRANSFORM(isprintable, pystr::isprintable(text))
#undef HEARTH_STR_TRANSFORM

Result<Value> strip_like(std::string_view method, const Value& self, CallArgs& args,
                         std::string_view (*strip_fn)(std::string_view,
                                                      std::optional<std::string_view>)) {
  HEARTH_ASSIGN_OR_RETURN(auto bound, bind_positional(method, args, {{"chars", Value::none()}}));
  if (bound[0].is_none()) return Value(strip_fn(self_text(self), std::nullopt));
  if (!bound[0].is_string()) return render_error(std::string(method) + " arg must be None or str");
  return Value(strip_fn(self_text(self), std::string_view(bound[0].as_string())));
}

Result<Value> str_strip(const Value& self, CallArgs& args, Interp&) {
  return strip_like("strip", self, args, pystr::strip);
}
Result<Value> str_lstrip(const Value& self, CallArgs& args, Interp&) {
  return strip_like("lstrip", self, args, pystr::lstrip);
}
Result<Value> str_rstrip(const Value& self, CallArgs& args, Interp&) {
  return strip_like("rstrip", self, args, pystr::rstrip);
}

Result<Value> split_like(std::string_view method, const Value& self, CallArgs& args,
                         bool from_right) {
  HEARTH_ASSIGN_OR_RETURN(auto bound, bind_args("str." + std::string(method), args,
                                                {{"sep", Value::none()}, {"maxsplit", -1}}));
  HEARTH_ASSIGN_OR_RETURN(const int64_t maxsplit, to_integer(bound[1]));
  std::optional<std::string_view> separator;
  if (!bound[0].is_none()) {
    if (!bound[0].is_string())
      return render_error("must be str or None, not " + type_name(bound[0]));
    if (bound[0].as_string().empty()) return render_error("empty separator");
    separator = bound[0].as_string();
  }
  const std::string& text = self_text(self);
  return string_list(from_right ? pystr::rsplit(text, separator, maxsplit)
                                : pystr::split(text, separator, maxsplit));
}

Result<Value> str_split(const Value& self, CallArgs& args, Interp&) {
  return split_like("split", self, args, false);
}
Result<Value> str_rsplit(const Value& self, CallArgs& args, Interp&) {
  return split_like("rsplit", self, args, true);
}

Result<Value> str_splitlines(const Value& self, CallArgs& args, Interp&) {
  HEARTH_ASSIGN_OR_RETURN(auto bound, bind_args("str.splitlines", args, {{"keepends", false}}));
  return string_list(pystr::splitlines(self_text(self), truthy(bound[0])));
}

// startswith/endswith: a str or a tuple of str, within text[start:end].
Result<Value> affix_test(std::string_view method, const Value& self, CallArgs& args,
                         bool at_start) {
  HEARTH_ASSIGN_OR_RETURN(
      auto bound,
      bind_positional(method, args,
                      {{"affix", Value()}, {"start", Value::none()}, {"end", Value::none()}}));
  HEARTH_ASSIGN_OR_RETURN(const auto start, slice_index(bound[1]));
  HEARTH_ASSIGN_OR_RETURN(const auto end, slice_index(bound[2]));
  std::vector<Value> candidates;
  if (bound[0].is_string()) {
    candidates.push_back(bound[0]);
  } else if (bound[0].is_tuple()) {
    candidates = bound[0].list_data().items;
  } else {
    return render_error(std::string(method) + " first arg must be str or a tuple of str, not " +
                        type_name(bound[0]));
  }
  const std::string& text = self_text(self);
  for (const Value& candidate : candidates) {
    if (!candidate.is_string()) {
      return render_error("tuple for " + std::string(method) + " must only contain str, not " +
                          type_name(candidate));
    }
    const bool hit = at_start ? pystr::startswith(text, candidate.as_string(), start, end)
                              : pystr::endswith(text, candidate.as_string(), start, end);
    if (hit) return Value(true);
  }
  return Value(false);
}

Result<Value> str_startswith(const Value& self, CallArgs& args, Interp&) {
  return affix_test("startswith", self, args, true);
}
Result<Value> str_endswith(const Value& self, CallArgs& args, Interp&) {
  return affix_test("endswith", self, args, false);
}

enum class Search { kFind, kRfind, kIndex, kRindex, kCount };

Result<Value> search(std::string_view method, const Value& self, CallArgs& args, Search kind) {
  HEARTH_ASSIGN_OR_RETURN(
      auto bound,
      bind_positional(method, args,
                      {{"sub", Value()}, {"start", Value::none()}, {"end", Value::none()}}));
  HEARTH_ASSIGN_OR_RETURN(const std::string sub, str_argument(bound[0]));
  HEARTH_ASSIGN_OR_RETURN(const auto start, slice_index(bound[1]));
  HEARTH_ASSIGN_OR_RETURN(const auto end, slice_index(bound[2]));
  const std::string& text = self_text(self);
  if (kind == Search::kCount) return Value(pystr::count(text, sub, start, end));
  const bool reverse = kind == Search::kRfind || kind == Search::kRindex;
  const int64_t found =
      reverse ? pystr::rfind(text, sub, start, end) : pystr::find(text, sub, start, end);
  if (found < 0 && (kind == Search::kIndex || kind == Search::kRindex)) {
    return render_error("substring not found");
  }
  return Value(found);
}

Result<Value> str_find(const Value& self, CallArgs& args, Interp&) {
  return search("find", self, args, Search::kFind);
}
Result<Value> str_rfind(const Value& self, CallArgs& args, Interp&) {
  return search("rfind", self, args, Search::kRfind);
}
Result<Value> str_index(const Value& self, CallArgs& args, Interp&) {
  return search("index", self, args, Search::kIndex);
}
Result<Value> str_rindex(const Value& self, CallArgs& args, Interp&) {
  return search("rindex", self, args, Search::kRindex);
}
Result<Value> str_count(const Value& self, CallArgs& args, Interp&) {
  return search("count", self, args, Search::kCount);
}

Result<Value> str_replace(const Value& self, CallArgs& args, Interp& interp) {
  HEARTH_ASSIGN_OR_RETURN(
      auto bound,
      bind_positional("replace", args, {{"old", Value()}, {"new", Value()}, {"count", -1}}));
  for (int i = 0; i < 2; ++i) {
    if (!bound[i].is_string()) {
      return render_error("replace() argument " + std::to_string(i + 1) + " must be str, not " +
                          type_name(bound[i]));
    }
  }
  HEARTH_ASSIGN_OR_RETURN(const int64_t count, to_integer(bound[2]));
  std::string out =
      pystr::replace(self_text(self), bound[0].as_string(), bound[1].as_string(), count);
  HEARTH_RETURN_IF_ERROR(interp.charge(out.size()));
  return Value(std::move(out));
}

Result<Value> affix_remove(std::string_view method, const Value& self, CallArgs& args,
                           bool prefix) {
  HEARTH_ASSIGN_OR_RETURN(auto bound, bind_positional(method, args, {{"affix", Value()}}));
  HEARTH_ASSIGN_OR_RETURN(const std::string affix, str_argument(bound[0]));
  const std::string& text = self_text(self);
  return Value(prefix ? pystr::removeprefix(text, affix) : pystr::removesuffix(text, affix));
}

Result<Value> str_removeprefix(const Value& self, CallArgs& args, Interp&) {
  return affix_remove("removeprefix", self, args, true);
}
Result<Value> str_removesuffix(const Value& self, CallArgs& args, Interp&) {
  return affix_remove("removesuffix", self, args, false);
}

Result<Value> partition_like(std::string_view method, const Value& self, CallArgs& args,
                             bool from_right) {
  HEARTH_ASSIGN_OR_RETURN(auto bound, bind_positional(method, args, {{"sep", Value()}}));
  HEARTH_ASSIGN_OR_RETURN(const std::string separator, str_argument(bound[0]));
  if (separator.empty()) return render_error("empty separator");
  const auto parts = from_right ? pystr::rpartition(self_text(self), separator)
                                : pystr::partition(self_text(self), separator);
  return Value::tuple({Value(parts.before), Value(parts.separator), Value(parts.after)});
}

Result<Value> str_partition(const Value& self, CallArgs& args, Interp&) {
  return partition_like("partition", self, args, false);
}
Result<Value> str_rpartition(const Value& self, CallArgs& args, Interp&) {
  return partition_like("rpartition", self, args, true);
}

enum class Justify { kCenter, kLeft, kRight };

Result<Value> justify(std::string_view method, const Value& self, CallArgs& args, Justify how,
                      Interp& interp) {
  HEARTH_ASSIGN_OR_RETURN(auto bound,
                          bind_positional(method, args, {{"width", Value()}, {"fillchar", " "}}));
  HEARTH_ASSIGN_OR_RETURN(const int64_t width, to_integer(bound[0]));
  if (!bound[1].is_string()) {
    return render_error(std::string(method) + "() argument 2 must be str, not " +
                        type_name(bound[1]));
  }
  const std::u32string fill = pystr::decode(bound[1].as_string());
  if (fill.size() != 1)
    return render_error("The fill character must be exactly one character long");
  if (width > 0) HEARTH_RETURN_IF_ERROR(interp.charge(static_cast<size_t>(width) * 4));
  const std::string& text = self_text(self);
  switch (how) {
    case Justify::kCenter:
      return Value(pystr::center(text, width, fill[0]));
    case Justify::kLeft:
      return Value(pystr::ljust(text, width, fill[0]));
    case Justify::kRight:
      return Value(pystr::rjust(text, width, fill[0]));
  }
  return Value();
}

Result<Value> str_center(const Value& self, CallArgs& args, Interp& interp) {
  return justify("center", self, args, Justify::kCenter, interp);
}
Result<Value> str_ljust(const Value& self, CallArgs& args, Interp& interp) {
  return justify("ljust", self, args, Justify::kLeft, interp);
}
Result<Value> str_rjust(const Value& self, CallArgs& args, Interp& interp) {
  return justify("rjust", self, args, Justify::kRight, interp);
}

Result<Value> str_zfill(const Value& self, CallArgs& args, Interp& interp) {
  HEARTH_ASSIGN_OR_RETURN(auto bound, bind_positional("zfill", args, {{"width", Value()}}));
  HEARTH_ASSIGN_OR_RETURN(const int64_t width, to_integer(bound[0]));
  if (width > 0) HEARTH_RETURN_IF_ERROR(interp.charge(static_cast<size_t>(width)));
  return Value(pystr::zfill(self_text(self), width));
}

Result<Value> str_expandtabs(const Value& self, CallArgs& args, Interp& interp) {
  HEARTH_ASSIGN_OR_RETURN(auto bound, bind_args("str.expandtabs", args, {{"tabsize", 8}}));
  HEARTH_ASSIGN_OR_RETURN(const int64_t tabsize, to_integer(bound[0]));
  std::string out = pystr::expandtabs(self_text(self), tabsize);
  HEARTH_RETURN_IF_ERROR(interp.charge(out.size()));
  return Value(std::move(out));
}

Result<Value> str_join(const Value& self, CallArgs& args, Interp& interp) {
  HEARTH_ASSIGN_OR_RETURN(auto bound, bind_positional("join", args, {{"iterable", Value()}}));
  HEARTH_ASSIGN_OR_RETURN(const std::vector<Value> items, iterate(bound[0]));
  const std::string& separator = self_text(self);
  std::string out;
  for (size_t i = 0; i < items.size(); ++i) {
    if (!items[i].is_string()) {
      return render_error("sequence item " + std::to_string(i) + ": expected str instance, " +
                          type_name(items[i]) + " found");
    }
    if (i > 0) out += separator;
    out += items[i].as_string();
  }
  HEARTH_RETURN_IF_ERROR(interp.charge(out.size()));
  return Value(std::move(out));
}

Result<Value> str_format(const Value& self, CallArgs& args, Interp& interp) {
  HEARTH_ASSIGN_OR_RETURN(std::string out,
                          pystr::format(self_text(self), args.positional, args.keyword));
  HEARTH_RETURN_IF_ERROR(interp.charge(out.size()));
  return Value(std::move(out));
}

Result<Value> str_format_map(const Value& self, CallArgs& args, Interp& interp) {
  if (!args.keyword.empty()) return render_error("format_map() takes no keyword arguments");
  if (args.positional.size() != 1) {
    return render_error("format_map() takes exactly one argument (" +
                        std::to_string(args.positional.size()) + " given)");
  }
  if (!args.positional[0].is_dict()) return render_error("format_map() argument must be a mapping");
  std::vector<std::pair<std::string, Value>> keywords;
  for (const auto& [key, value] : args.positional[0].dict_data().entries) {
    if (key.is_string()) keywords.emplace_back(key.as_string(), value);
  }
  HEARTH_ASSIGN_OR_RETURN(std::string out, pystr::format(self_text(self), {}, keywords));
  HEARTH_RETURN_IF_ERROR(interp.charge(out.size()));
  return Value(std::move(out));
}

struct MethodEntry {
  std::string_view name;
  MethodFn fn;
};

// Sorted by name for binary search.
constexpr std::array kStrMethods = {
    MethodEntry{"capitalize", str_capitalize},
    MethodEntry{"casefold", str_casefold},
    MethodEntry{"center", str_center},
    MethodEntry{"count", str_count},
    MethodEntry{"endswith", str_endswith},
    MethodEntry{"expandtabs", str_expandtabs},
    MethodEntry{"find", str_find},
    MethodEntry{"format", str_format},
    MethodEntry{"format_map", str_format_map},
    MethodEntry{"index", str_index},
    MethodEntry{"isalnum", str_isalnum},
    MethodEntry{"isalpha", str_isalpha},
    MethodEntry{"isascii", str_isascii},
    MethodEntry{"isdecimal", str_isdecimal},
    MethodEntry{"isdigit", str_isdigit},
    MethodEntry{"isidentifier", str_isidentifier},
    MethodEntry{"islower", str_islower},
    MethodEntry{"isnumeric", str_isnumeric},
    MethodEntry{"isprintable", str_isprintable},
    MethodEntry{"isspace", str_isspace},
    MethodEntry{"istitle", str_istitle},
    MethodEntry{"isupper", str_isupper},
    MethodEntry{"join", str_join},
    MethodEntry{"ljust", str_ljust},
    MethodEntry{"lower", str_lower},
    MethodEntry{"lstrip", str_lstrip},
    MethodEntry{"partition", str_partition},
    MethodEntry{"removeprefix", str_removeprefix},
    MethodEntry{"removesuffix", str_removesuffix},
    MethodEntry{"replace", str_replace},
    MethodEntry{"rfind", str_rfind},
    MethodEntry{"rindex", str_rindex},
    MethodEntry{"rjust", str_rjust},
    MethodEntry{"rpartition", str_rpartition},
    MethodEntry{"rsplit", str_rsplit},
    MethodEntry{"rstrip", str_rstrip},
    MethodEntry{"split", str_split},
    MethodEntry{"splitlines", str_splitlines},
    MethodEntry{"startswith", str_startswith},
    MethodEntry{"strip", str_strip},
    MethodEntry{"swapcase", str_swapcase},
    MethodEntry{"title", str_title},
    MethodEntry{"upper", str_upper},
    MethodEntry{"zfill", str_zfill},
};

}  // namespace

MethodFn find_str_method(std::string_view name) {
  const auto* it =
      std::lower_bound(kStrMethods.begin(), kStrMethods.end(), name,
                       [](const MethodEntry& e, std::string_view n) { return e.name < n; });
  if (it == kStrMethods.end() || it->name != name) return nullptr;
  return it->fn;
}

}  // namespace hearth::jinja::builtins
