// Sequence filters: picking (first, last, attr, default), reshaping (batch, slice, list,
// items, reverse), ordering (sort, dictsort, unique, min, max, groupby), joining and summing.
// Jinja2 returns generators for several of these; Hearth returns lists (printing a generator
// shows a memory address, which no template can rely on).
#include <cmath>
#include <limits>

#include "jinja/filters_common.h"
#include "jinja/pystr.h"

namespace hearth::jinja::builtins {

namespace {

// Keys for sorting: the attribute paths of each item, lower-cased unless case-sensitive.
Result<std::vector<std::vector<Value>>> sort_keys_for(const std::vector<Value>& items,
                                                      const std::vector<AttributePath>& paths,
                                                      bool case_sensitive) {
  std::vector<std::vector<Value>> keys;
  keys.reserve(items.size());
  for (const Value& item : items) {
    std::vector<Value> key;
    key.reserve(paths.size());
    for (const AttributePath& path : paths) {
      HEARTH_ASSIGN_OR_RETURN(Value part, path.lookup(item));
      key.push_back(case_sensitive ? std::move(part) : ignore_case(part));
    }
    keys.push_back(std::move(key));
  }
  return keys;
}

Result<Value> single_key(const Value& item, const AttributePath& path, bool case_sensitive,
                         const Value& fallback = Value::none()) {
  HEARTH_ASSIGN_OR_RETURN(Value key, path.lookup(item, fallback));
  return case_sensitive ? key : ignore_case(key);
}

}  // namespace

Result<Value> filter_attr(const Value& input, CallArgs& args, Interp&) {
  HEARTH_ASSIGN_OR_RETURN(auto bound, bind_args("attr", args, {{"name", Value()}}));
  if (!bound[0].is_string()) {
    return render_error("attribute name must be string, not '" + type_name(bound[0]) + "'");
  }
  const std::string& name = bound[0].as_string();
  // Only real attributes: methods of str/list/dict, an object's attributes; never dict keys.
  if (input.is_object()) {
    if (!name.empty() && name[0] == '_') return Value::undefined();
    return input.object_ref().get_attr(name);
  }
  if (find_method(input.kind(), name) != nullptr) return get_attr(input, name);
  if (input.is_undefined()) return undefined_error(input);
  return Value::undefined("'" + type_name(input) + " object' has no attribute '" + name + "'");
}

Result<Value> filter_default(const Value& input, CallArgs& args, Interp&) {
  HEARTH_ASSIGN_OR_RETURN(auto bound,
                          bind_args("default", args, {{"default_value", ""}, {"boolean", false}}));
  if (input.is_undefined() || (truthy(bound[1]) && !truthy(input))) return bound[0];
  return input;
}

Result<Value> filter_first(const Value& input, CallArgs& args, Interp&) {
  HEARTH_ASSIGN_OR_RETURN(auto bound, bind_args("first", args, {}));
  (void)bound;
  if (input.is_list()) {
    const auto& items = input.list_data().items;
    if (!items.empty()) return items.front();
  } else {
    HEARTH_ASSIGN_OR_RETURN(std::vector<Value> items, iterate(input));
    if (!items.empty()) return items.front();
  }
  return Value::undefined("No first item, sequence was empty.");
}

Result<Value> filter_last(const Value& input, CallArgs& args, Interp&) {
  HEARTH_ASSIGN_OR_RETURN(auto bound, bind_args("last", args, {}));
  (void)bound;
  if (is_iterator(input)) {
    return render_error("'" + std::string(python_type_of(input)) + "' object is not reversible");
  }
  if (!input.is_list() && !input.is_dict() && !input.is_string() && !input.is_undefined()) {
    return render_error("'" + type_name(input) + "' object is not reversible");
  }
  HEARTH_ASSIGN_OR_RETURN(std::vector<Value> items, iterate(input));
  if (items.empty()) return Value::undefined("No last item, sequence was empty.");
  return items.back();
}

Result<Value> filter_length(const Value& input, CallArgs& args, Interp&) {
  HEARTH_ASSIGN_OR_RETURN(auto bound, bind_args("length", args, {}));
  (void)bound;
  if (is_iterator(input)) {
    return render_error("object of type '" + std::string(python_type_of(input)) + "' has no len()");
  }
  HEARTH_ASSIGN_OR_RETURN(const int64_t n, length(input));
  return Value(n);
}

Result<Value> filter_list(const Value& input, CallArgs& args, Interp&) {
  HEARTH_ASSIGN_OR_RETURN(auto bound, bind_args("list", args, {}));
  (void)bound;
  HEARTH_ASSIGN_OR_RETURN(std::vector<Value> items, iterate(input));
  return Value::list(std::move(items));
}

Result<Value> filter_items(const Value& input, CallArgs& args, Interp&) {
  HEARTH_ASSIGN_OR_RETURN(auto bound, bind_args("items", args, {}));
  (void)bound;
  if (input.is_undefined()) return python_iterable({}, "generator");
  if (!input.is_dict()) return render_error("Can only get item pairs from a mapping.");
  std::vector<Value> pairs;
  pairs.reserve(input.dict_data().entries.size());
  for (const auto& [key, value] : input.dict_data().entries) pairs.push_back(make_pair(key, value));
  return python_iterable(std::move(pairs), "generator");
}

Result<Value> filter_reverse(const Value& input, CallArgs& args, Interp&) {
  HEARTH_ASSIGN_OR_RETURN(auto bound, bind_args("reverse", args, {}));
  (void)bound;
  if (input.is_string()) {
    std::u32string code_points = pystr::decode(input.as_string());
    std::reverse(code_points.begin(), code_points.end());
    return Value(pystr::encode(code_points));
  }
  auto items = iterate(input);
  if (!items.is_ok()) return render_error("argument must be iterable");
  std::reverse(items->begin(), items->end());
  // reversed() gives an iterator; for an iterator Jinja2 falls back to a reversed list.
  if (is_iterator(input)) return Value::list(std::move(*items));
  std::string_view type = "reversed";
  if (input.is_dict()) type = "dict_reversekeyiterator";
  if (input.is_list() && !input.is_tuple() && python_type_of(input).empty()) {
    type = "list_reverseiterator";
  }
  return python_iterable(std::move(*items), type);
}

Result<Value> filter_batch(const Value& input, CallArgs& args, Interp&) {
  HEARTH_ASSIGN_OR_RETURN(
      auto bound, bind_args("batch", args, {{"linecount", Value()}, {"fill_with", Value::none()}}));
  HEARTH_ASSIGN_OR_RETURN(const int64_t linecount, to_integer(bound[0]));
  HEARTH_ASSIGN_OR_RETURN(std::vector<Value> items, iterate(input));
  std::vector<Value> batches;
  std::vector<Value> current;
  for (Value& item : items) {
    if (static_cast<int64_t>(current.size()) == linecount) {
      batches.push_back(Value::list(std::move(current)));
      current.clear();
    }
    current.push_back(std::move(item));
  }
  if (!current.empty()) {
    if (!bound[1].is_none()) {
      while (static_cast<int64_t>(current.size()) < linecount) current.push_back(bound[1]);
    }
    batches.push_back(Value::list(std::move(current)));
  }
  return python_iterable(std::move(batches), "generator");
}

Result<Value> filter_slice(const Value& input, CallArgs& args, Interp&) {
  HEARTH_ASSIGN_OR_RETURN(
      auto bound, bind_args("slice", args, {{"slices", Value()}, {"fill_with", Value::none()}}));
  HEARTH_ASSIGN_OR_RETURN(const int64_t slices, to_integer(bound[0]));
  HEARTH_ASSIGN_OR_RETURN(const std::vector<Value> items, iterate(input));
  if (slices == 0) return render_error("integer division or modulo by zero");
  if (slices < 0 || slices > 1000000) return render_error("slice count out of range");
  const auto n = static_cast<int64_t>(items.size());
  // Python floor division and modulo (slices > 0 here).
  const int64_t per_slice = n / slices;
  const int64_t with_extra = n % slices;
  std::vector<Value> out;
  int64_t offset = 0;
  for (int64_t i = 0; i < slices; ++i) {
    const int64_t start = offset + i * per_slice;
    if (i < with_extra) ++offset;
    const int64_t end = offset + (i + 1) * per_slice;
    std::vector<Value> part(items.begin() + start, items.begin() + end);
    if (!bound[1].is_none() && i >= with_extra) part.push_back(bound[1]);
    out.push_back(Value::list(std::move(part)));
  }
  return python_iterable(std::move(out), "generator");
}

Result<Value> filter_sort(const Value& input, CallArgs& args, Interp&) {
  HEARTH_ASSIGN_OR_RETURN(
      auto bound,
      bind_args("sort", args,
                {{"reverse", false}, {"case_sensitive", false}, {"attribute", Value::none()}}));
  HEARTH_ASSIGN_OR_RETURN(std::vector<Value> items, iterate(input));
  HEARTH_ASSIGN_OR_RETURN(const std::vector<AttributePath> paths, parse_multi_attribute(bound[2]));
  HEARTH_ASSIGN_OR_RETURN(auto keys, sort_keys_for(items, paths, truthy(bound[1])));
  HEARTH_RETURN_IF_ERROR(sort_by_keys(items, std::move(keys), truthy(bound[0])));
  return Value::list(std::move(items));
}

Result<Value> filter_dictsort(const Value& input, CallArgs& args, Interp&) {
  HEARTH_ASSIGN_OR_RETURN(
      auto bound,
      bind_args("dictsort", args, {{"case_sensitive", false}, {"by", "key"}, {"reverse", false}}));
  size_t position = 0;
  if (bound[1].is_string() && bound[1].as_string() == "value") {
    position = 1;
  } else if (!bound[1].is_string() || bound[1].as_string() != "key") {
    return render_error("You can only sort by either \"key\" or \"value\"");
  }
  if (!input.is_dict()) {
    if (input.is_undefined()) return undefined_error(input);
    return render_error("'" + type_name(input) + "' object has no attribute 'items'");
  }
  const bool case_sensitive = truthy(bound[0]);
  std::vector<Value> pairs;
  std::vector<std::vector<Value>> keys;
  for (const auto& [key, value] : input.dict_data().entries) {
    pairs.push_back(make_pair(key, value));
    const Value& sort_on = position == 0 ? key : value;
    keys.push_back({case_sensitive ? sort_on : ignore_case(sort_on)});
  }
  HEARTH_RETURN_IF_ERROR(sort_by_keys(pairs, std::move(keys), truthy(bound[2])));
  return Value::list(std::move(pairs));
}

Result<Value> filter_unique(const Value& input, CallArgs& args, Interp&) {
  HEARTH_ASSIGN_OR_RETURN(
      auto bound,
      bind_args("unique", args, {{"case_sensitive", false}, {"attribute", Value::none()}}));
  HEARTH_ASSIGN_OR_RETURN(const AttributePath path, AttributePath::parse(bound[1]));
  HEARTH_ASSIGN_OR_RETURN(std::vector<Value> items, iterate(input));
  const bool case_sensitive = truthy(bound[0]);
  std::vector<Value> seen;
  std::vector<Value> out;
  for (Value& item : items) {
    HEARTH_ASSIGN_OR_RETURN(const Value key, single_key(item, path, case_sensitive));
    if (!is_hashable(key)) return render_error("unhashable type: '" + type_name(key) + "'");
    bool found = false;
    for (const Value& earlier : seen) {
      if (equals(earlier, key)) {
        found = true;
        break;
      }
    }
    if (found) continue;
    seen.push_back(key);
    out.push_back(std::move(item));
  }
  return python_iterable(std::move(out), "generator");
}

namespace {

// min()/max() with Jinja2's key (attribute path, case folding); the first of equals wins.
Result<Value> extreme(const char* function, const Value& input, CallArgs& args, bool want_max) {
  HEARTH_ASSIGN_OR_RETURN(
      auto bound,
      bind_args(function, args, {{"case_sensitive", false}, {"attribute", Value::none()}}));
  HEARTH_ASSIGN_OR_RETURN(std::vector<Value> items, iterate(input));
  if (items.empty()) return Value::undefined("No aggregated item, sequence was empty.");
  HEARTH_ASSIGN_OR_RETURN(const AttributePath path, AttributePath::parse(bound[1]));
  const bool case_sensitive = truthy(bound[0]);
  size_t best = 0;
  HEARTH_ASSIGN_OR_RETURN(Value best_key, single_key(items[0], path, case_sensitive));
  for (size_t i = 1; i < items.size(); ++i) {
    HEARTH_ASSIGN_OR_RETURN(Value key, single_key(items[i], path, case_sensitive));
    HEARTH_ASSIGN_OR_RETURN(const bool better,
                            want_max ? python_less(best_key, key) : python_less(key, best_key));
    if (better) {
      best = i;
      best_key = std::move(key);
    }
  }
  return items[best];
}

}  // namespace

Result<Value> filter_max(const Value& input, CallArgs& args, Interp&) {
  return extreme("max", input, args, true);
}

Result<Value> filter_min(const Value& input, CallArgs& args, Interp&) {
  return extreme("min", input, args, false);
}

Result<Value> filter_groupby(const Value& input, CallArgs& args, Interp&) {
  HEARTH_ASSIGN_OR_RETURN(
      auto bound,
      bind_args("groupby", args,
                {{"attribute", Value()}, {"default", Value::none()}, {"case_sensitive", false}}));
  HEARTH_ASSIGN_OR_RETURN(const AttributePath path, AttributePath::parse(bound[0]));
  HEARTH_ASSIGN_OR_RETURN(std::vector<Value> items, iterate(input));
  const bool case_sensitive = truthy(bound[2]);
  std::vector<std::vector<Value>> keys;
  for (const Value& item : items) {
    HEARTH_ASSIGN_OR_RETURN(Value key, single_key(item, path, case_sensitive, bound[1]));
    keys.push_back({std::move(key)});
  }
  HEARTH_RETURN_IF_ERROR(sort_by_keys(items, keys, false));
  // Recompute keys in sorted order, then group runs of equal keys (itertools.groupby).
  std::vector<Value> groups;
  size_t start = 0;
  while (start < items.size()) {
    HEARTH_ASSIGN_OR_RETURN(const Value key,
                            single_key(items[start], path, case_sensitive, bound[1]));
    size_t end = start + 1;
    while (end < items.size()) {
      HEARTH_ASSIGN_OR_RETURN(const Value next,
                              single_key(items[end], path, case_sensitive, bound[1]));
      if (!equals(key, next)) break;
      ++end;
    }
    // The group's key keeps the case of its first item.
    HEARTH_ASSIGN_OR_RETURN(const Value shown, path.lookup(items[start], bound[1]));
    std::vector<Value> members(items.begin() + start, items.begin() + end);
    groups.push_back(make_pair(shown, Value::list(std::move(members))));
    start = end;
  }
  return Value::list(std::move(groups));
}

Result<Value> filter_join(const Value& input, CallArgs& args, Interp& interp) {
  HEARTH_ASSIGN_OR_RETURN(auto bound,
                          bind_args("join", args, {{"d", ""}, {"attribute", Value::none()}}));
  HEARTH_ASSIGN_OR_RETURN(const AttributePath path, AttributePath::parse(bound[1]));
  const std::string separator = to_str(bound[0]);
  HEARTH_ASSIGN_OR_RETURN(const std::vector<Value> items, iterate(input));
  std::string out;
  for (size_t i = 0; i < items.size(); ++i) {
    if (i > 0) out += separator;
    if (path.empty()) {
      if (items[i].is_string()) {
        out += items[i].as_string();
      } else {
        out += to_str(items[i]);
      }
    } else {
      HEARTH_ASSIGN_OR_RETURN(const Value picked, path.lookup(items[i]));
      out += to_str(picked);
    }
  }
  HEARTH_RETURN_IF_ERROR(interp.charge(out.size()));
  return Value(std::move(out));
}

namespace {

Result<Value> add_values(const Value& a, const Value& b) {
  if ((a.is_int() || a.is_bool()) && (b.is_int() || b.is_bool())) {
    int64_t sum = 0;
    if (__builtin_add_overflow(a.as_int(), b.as_int(), &sum)) {
      return render_error("integer out of range: Hearth's integers are 64-bit");
    }
    return Value(sum);
  }
  if (a.is_number() && b.is_number()) return Value(a.as_float() + b.as_float());
  if (a.is_list() && b.is_list() && a.is_tuple() == b.is_tuple()) {
    std::vector<Value> joined = a.list_data().items;
    joined.insert(joined.end(), b.list_data().items.begin(), b.list_data().items.end());
    return a.is_tuple() ? Value::tuple(std::move(joined)) : Value::list(std::move(joined));
  }
  if (a.is_undefined()) return undefined_error(a);
  if (b.is_undefined()) return undefined_error(b);
  return render_error("unsupported operand type(s) for +: '" + type_name(a) + "' and '" +
                      type_name(b) + "'");
}

}  // namespace

Result<Value> filter_sum(const Value& input, CallArgs& args, Interp&) {
  HEARTH_ASSIGN_OR_RETURN(auto bound,
                          bind_args("sum", args, {{"attribute", Value::none()}, {"start", 0}}));
  HEARTH_ASSIGN_OR_RETURN(const AttributePath path, AttributePath::parse(bound[0]));
  if (bound[1].is_string())
    return render_error("sum() can't sum strings [use ''.join(seq) instead]");
  HEARTH_ASSIGN_OR_RETURN(const std::vector<Value> items, iterate(input));
  Value total = bound[1];
  for (const Value& item : items) {
    HEARTH_ASSIGN_OR_RETURN(const Value term, path.lookup(item));
    HEARTH_ASSIGN_OR_RETURN(total, add_values(total, term));
  }
  return total;
}

}  // namespace hearth::jinja::builtins
