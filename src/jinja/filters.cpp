// The filter registry (Jinja2's FILTERS table with Hugging Face's tojson) and the helpers the
// builtins share: attribute paths, Python ordering, escaping.
#include <algorithm>
#include <array>
#include <utility>

#include "jinja/filters_common.h"
#include "jinja/pystr.h"

namespace hearth::jinja {

namespace builtins {

Status undefined_error(const Value& value) {
  const std::string& hint = value.undefined_hint();
  return render_error(hint.empty() ? "undefined value" : hint);
}

Result<int64_t> to_integer(const Value& value) {
  if (value.is_int() || value.is_bool()) return value.as_int();
  if (value.is_undefined()) return undefined_error(value);
  return render_error("'" + type_name(value) + "' object cannot be interpreted as an integer");
}

Result<std::string> to_string_arg(const Value& value, std::string_view function,
                                  std::string_view parameter) {
  if (value.is_string()) return value.as_string();
  if (value.is_undefined()) return undefined_error(value);
  return render_error(std::string(function) + "() argument '" + std::string(parameter) +
                      "' must be str, not " + type_name(value));
}

Value ignore_case(const Value& value) {
  if (!value.is_string()) return value;
  return Value(pystr::lower(value.as_string()));
}

Value make_pair(Value first, Value second) {
  return Value::tuple({std::move(first), std::move(second)});
}

Value python_iterable(std::vector<Value> items, std::string_view python_type) {
  Value list = Value::list(std::move(items));
  list.list_data().python_type = python_type;
  return list;
}

std::string_view python_type_of(const Value& value) {
  return value.is_list() ? value.list_data().python_type : std::string_view();
}

bool is_iterator(const Value& value) {
  const std::string_view type = python_type_of(value);
  return !type.empty() && type.substr(0, 5) != "dict_";
}

std::string html_escape(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (char c : text) {
    switch (c) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '\'':
        out += "&#39;";
        break;
      case '"':
        out += "&#34;";
        break;
      default:
        out.push_back(c);
        break;
    }
  }
  return out;
}

Value escape_value(const Value& value) {
  if (value.is_safe()) return value;
  return Value::safe_string(html_escape(to_str(value)));
}

Result<AttributePath> AttributePath::parse(const Value& attribute) {
  AttributePath path;
  if (attribute.is_none() || attribute.is_undefined()) return path;
  if (attribute.is_string()) {
    // Jinja2 splits on dots and turns all-digit parts (str.isdigit) into indexes.
    for (std::string_view part : pystr::split(attribute.as_string(), std::string_view("."))) {
      if (pystr::isdigit(part) && pystr::is_ascii(part) && part.size() < 19) {
        path.parts_.emplace_back(static_cast<int64_t>(std::stoll(std::string(part))));
      } else {
        path.parts_.emplace_back(part);
      }
    }
    return path;
  }
  path.parts_.push_back(attribute);
  return path;
}

Result<Value> AttributePath::lookup(Value item, const Value& fallback) const {
  for (const Value& part : parts_) {
    HEARTH_ASSIGN_OR_RETURN(item, get_item(item, part));
    if (!fallback.is_none() && item.is_undefined()) item = fallback;
  }
  return item;
}

Result<std::vector<AttributePath>> parse_multi_attribute(const Value& attribute) {
  std::vector<AttributePath> paths;
  if (attribute.is_string()) {
    for (std::string_view piece : pystr::split(attribute.as_string(), std::string_view(","))) {
      HEARTH_ASSIGN_OR_RETURN(AttributePath path, AttributePath::parse(Value(piece)));
      paths.push_back(std::move(path));
    }
    return paths;
  }
  HEARTH_ASSIGN_OR_RETURN(AttributePath path, AttributePath::parse(attribute));
  paths.push_back(std::move(path));
  return paths;
}

Result<bool> python_less(const Value& a, const Value& b) {
  if (a.is_undefined()) return undefined_error(a);
  if (b.is_undefined()) return undefined_error(b);
  return less_than(a, b);
}

Result<bool> keys_less(const std::vector<Value>& a, const std::vector<Value>& b) {
  const size_t n = std::min(a.size(), b.size());
  for (size_t i = 0; i < n; ++i) {
    if (!equals(a[i], b[i])) return python_less(a[i], b[i]);
  }
  return a.size() < b.size();
}

Status sort_by_keys(std::vector<Value>& items, std::vector<std::vector<Value>> keys, bool reverse) {
  std::vector<size_t> order(items.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  Status failure;
  std::stable_sort(order.begin(), order.end(), [&](size_t x, size_t y) {
    if (!failure.is_ok()) return false;
    // Reversed sorting stays stable: equal keys keep their original order.
    auto less = reverse ? keys_less(keys[y], keys[x]) : keys_less(keys[x], keys[y]);
    if (!less.is_ok()) {
      failure = less.status();
      return false;
    }
    return *less;
  });
  HEARTH_RETURN_IF_ERROR(failure);
  std::vector<Value> sorted;
  sorted.reserve(items.size());
  for (size_t index : order) sorted.push_back(std::move(items[index]));
  items = std::move(sorted);
  return Status::ok();
}

}  // namespace builtins

namespace {

using namespace builtins;  // NOLINT(google-build-using-namespace): the table names them all

struct FilterEntry {
  std::string_view name;
  FilterFn fn;
};

// Sorted by name for binary search.
constexpr std::array kFilters = {
    FilterEntry{"abs", filter_abs},
    FilterEntry{"attr", filter_attr},
    FilterEntry{"batch", filter_batch},
    FilterEntry{"capitalize", filter_capitalize},
    FilterEntry{"center", filter_center},
    FilterEntry{"count", filter_length},
    FilterEntry{"d", filter_default},
    FilterEntry{"default", filter_default},
    FilterEntry{"dictsort", filter_dictsort},
    FilterEntry{"e", filter_escape},
    FilterEntry{"escape", filter_escape},
    FilterEntry{"filesizeformat", filter_filesizeformat},
    FilterEntry{"first", filter_first},
    FilterEntry{"float", filter_float},
    FilterEntry{"forceescape", filter_forceescape},
    FilterEntry{"format", filter_format},
    FilterEntry{"groupby", filter_groupby},
    FilterEntry{"indent", filter_indent},
    FilterEntry{"int", filter_int},
    FilterEntry{"items", filter_items},
    FilterEntry{"join", filter_join},
    FilterEntry{"last", filter_last},
    FilterEntry{"length", filter_length},
    FilterEntry{"list", filter_list},
    FilterEntry{"lower", filter_lower},
    FilterEntry{"map", filter_map},
    FilterEntry{"max", filter_max},
    FilterEntry{"min", filter_min},
    FilterEntry{"pprint", filter_pprint},
    FilterEntry{"random", filter_random},
    FilterEntry{"reject", filter_reject},
    FilterEntry{"rejectattr", filter_rejectattr},
    FilterEntry{"replace", filter_replace},
    FilterEntry{"reverse", filter_reverse},
    FilterEntry{"round", filter_round},
    FilterEntry{"safe", filter_safe},
    FilterEntry{"select", filter_select},
    FilterEntry{"selectattr", filter_selectattr},
    FilterEntry{"slice", filter_slice},
    FilterEntry{"sort", filter_sort},
    FilterEntry{"string", filter_string},
    FilterEntry{"striptags", filter_striptags},
    FilterEntry{"sum", filter_sum},
    FilterEntry{"title", filter_title},
    FilterEntry{"tojson", filter_tojson},
    FilterEntry{"trim", filter_trim},
    FilterEntry{"truncate", filter_truncate},
    FilterEntry{"unique", filter_unique},
    FilterEntry{"upper", filter_upper},
    FilterEntry{"urlencode", filter_urlencode},
    FilterEntry{"wordcount", filter_wordcount},
    FilterEntry{"wordwrap", filter_wordwrap},
    FilterEntry{"xmlattr", filter_xmlattr},
};

}  // namespace

FilterFn find_filter(std::string_view name) {
  const auto* it =
      std::lower_bound(kFilters.begin(), kFilters.end(), name,
                       [](const FilterEntry& e, std::string_view n) { return e.name < n; });
  if (it == kFilters.end() || it->name != name) return nullptr;
  return it->fn;
}

}  // namespace hearth::jinja
