// list, tuple and dict methods callable from templates. The sandbox Hugging Face uses is not
// the immutable one, so mutating methods (append, pop, update, ...) work and are seen through
// every alias. keys()/values()/items() return lists marked as Python's views (dict_keys, ...),
// which json.dumps refuses as Python's does.
#include <algorithm>
#include <array>

#include "jinja/filters_common.h"

namespace hearth::jinja {

namespace builtins {
MethodFn find_str_method(std::string_view name);
}  // namespace builtins

namespace {

using builtins::undefined_error;

Status positional_only(std::string_view method, const CallArgs& args) {
  if (!args.keyword.empty())
    return render_error(std::string(method) + "() takes no keyword arguments");
  return Status::ok();
}

Result<std::vector<Value>> bind_positional(std::string_view method, CallArgs& args,
                                           std::initializer_list<Param> parameters) {
  HEARTH_RETURN_IF_ERROR(positional_only(method, args));
  return bind_args(method, args, parameters);
}

Status refuse_tuple(const Value& self, std::string_view method) {
  if (self.is_tuple()) {
    return render_error("'tuple object' has no attribute '" + std::string(method) + "'");
  }
  return Status::ok();
}

// Python's index normalization for pop/insert: negative counts from the end.
int64_t from_end(int64_t index, size_t size) {
  return index < 0 ? index + static_cast<int64_t>(size) : index;
}

// --- list ---

Result<Value> list_append(const Value& self, CallArgs& args, Interp&) {
  HEARTH_RETURN_IF_ERROR(refuse_tuple(self, "append"));
  HEARTH_ASSIGN_OR_RETURN(auto bound, bind_positional("list.append", args, {{"object", Value()}}));
  self.list_data().items.push_back(std::move(bound[0]));
  return Value::none();
}

Result<Value> list_extend(const Value& self, CallArgs& args, Interp&) {
  HEARTH_RETURN_IF_ERROR(refuse_tuple(self, "extend"));
  HEARTH_ASSIGN_OR_RETURN(auto bound,
                          bind_positional("list.extend", args, {{"iterable", Value()}}));
  if (bound[0].is_undefined()) return undefined_error(bound[0]);
  HEARTH_ASSIGN_OR_RETURN(std::vector<Value> items, iterate(bound[0]));
  auto& target = self.list_data().items;
  target.insert(target.end(), items.begin(), items.end());
  return Value::none();
}

Result<Value> list_insert(const Value& self, CallArgs& args, Interp&) {
  HEARTH_RETURN_IF_ERROR(refuse_tuple(self, "insert"));
  HEARTH_ASSIGN_OR_RETURN(
      auto bound, bind_positional("list.insert", args, {{"index", Value()}, {"object", Value()}}));
  HEARTH_ASSIGN_OR_RETURN(const int64_t raw_index, builtins::to_integer(bound[0]));
  auto& items = self.list_data().items;
  const int64_t index =
      std::clamp<int64_t>(from_end(raw_index, items.size()), 0, static_cast<int64_t>(items.size()));
  items.insert(items.begin() + index, std::move(bound[1]));
  return Value::none();
}

Result<Value> list_pop(const Value& self, CallArgs& args, Interp&) {
  HEARTH_RETURN_IF_ERROR(refuse_tuple(self, "pop"));
  HEARTH_ASSIGN_OR_RETURN(auto bound, bind_positional("list.pop", args, {{"index", -1}}));
  HEARTH_ASSIGN_OR_RETURN(const int64_t raw_index, builtins::to_integer(bound[0]));
  auto& items = self.list_data().items;
  if (items.empty()) return render_error("pop from empty list");
  const int64_t index = from_end(raw_index, items.size());
  if (index < 0 || index >= static_cast<int64_t>(items.size())) {
    return render_error("pop index out of range");
  }
  Value popped = std::move(items[static_cast<size_t>(index)]);
  items.erase(items.begin() + index);
  return popped;
}

Result<Value> list_remove(const Value& self, CallArgs& args, Interp&) {
  HEARTH_RETURN_IF_ERROR(refuse_tuple(self, "remove"));
  HEARTH_ASSIGN_OR_RETURN(auto bound, bind_positional("list.remove", args, {{"value", Value()}}));
  auto& items = self.list_data().items;
  for (auto it = items.begin(); it != items.end(); ++it) {
    if (equals(*it, bound[0])) {
      items.erase(it);
      return Value::none();
    }
  }
  return render_error("list.remove(x): x not in list");
}

Result<Value> list_index(const Value& self, CallArgs& args, Interp&) {
  const char* name = self.is_tuple() ? "tuple.index" : "list.index";
  HEARTH_ASSIGN_OR_RETURN(
      auto bound,
      bind_positional(name, args, {{"value", Value()}, {"start", 0}, {"stop", INT64_MAX}}));
  HEARTH_ASSIGN_OR_RETURN(int64_t start, builtins::to_integer(bound[1]));
  HEARTH_ASSIGN_OR_RETURN(int64_t stop, builtins::to_integer(bound[2]));
  const auto& items = self.list_data().items;
  const auto size = static_cast<int64_t>(items.size());
  start = std::clamp<int64_t>(from_end(start, items.size()), 0, size);
  stop = std::clamp<int64_t>(stop < 0 ? stop + size : stop, 0, size);
  for (int64_t i = start; i < stop; ++i) {
    if (equals(items[static_cast<size_t>(i)], bound[0])) return Value(i);
  }
  if (self.is_tuple()) return render_error("tuple.index(x): x not in tuple");
  return render_error(repr(bound[0]) + " is not in list");
}

Result<Value> list_count(const Value& self, CallArgs& args, Interp&) {
  HEARTH_ASSIGN_OR_RETURN(auto bound, bind_positional("count", args, {{"value", Value()}}));
  const auto& items = self.list_data().items;
  return Value(static_cast<int64_t>(std::count_if(
      items.begin(), items.end(), [&](const Value& item) { return equals(item, bound[0]); })));
}

Result<Value> list_reverse(const Value& self, CallArgs& args, Interp&) {
  HEARTH_RETURN_IF_ERROR(refuse_tuple(self, "reverse"));
  HEARTH_ASSIGN_OR_RETURN(auto bound, bind_positional("list.reverse", args, {}));
  (void)bound;
  auto& items = self.list_data().items;
  std::reverse(items.begin(), items.end());
  return Value::none();
}

Result<Value> list_sort(const Value& self, CallArgs& args, Interp&) {
  HEARTH_RETURN_IF_ERROR(refuse_tuple(self, "sort"));
  if (!args.positional.empty()) return render_error("sort() takes no positional arguments");
  HEARTH_ASSIGN_OR_RETURN(auto bound,
                          bind_args("sort", args, {{"key", Value::none()}, {"reverse", false}}));
  if (!bound[0].is_none()) {
    return render_error("list.sort(key=...) is not supported; use the sort filter's attribute=");
  }
  auto& items = self.list_data().items;
  // list.sort compares the items themselves with '<'.
  Status failure;
  const bool reverse = truthy(bound[1]);
  std::vector<Value> sorted = items;
  std::stable_sort(sorted.begin(), sorted.end(), [&](const Value& a, const Value& b) {
    if (!failure.is_ok()) return false;
    auto less = reverse ? builtins::python_less(b, a) : builtins::python_less(a, b);
    if (!less.is_ok()) {
      failure = less.status();
      return false;
    }
    return *less;
  });
  HEARTH_RETURN_IF_ERROR(failure);
  items = std::move(sorted);
  return Value::none();
}

Result<Value> list_copy(const Value& self, CallArgs& args, Interp&) {
  HEARTH_RETURN_IF_ERROR(refuse_tuple(self, "copy"));
  HEARTH_ASSIGN_OR_RETURN(auto bound, bind_positional("list.copy", args, {}));
  (void)bound;
  return Value::list(self.list_data().items);
}

Result<Value> list_clear(const Value& self, CallArgs& args, Interp&) {
  HEARTH_RETURN_IF_ERROR(refuse_tuple(self, "clear"));
  HEARTH_ASSIGN_OR_RETURN(auto bound, bind_positional("list.clear", args, {}));
  (void)bound;
  self.list_data().items.clear();
  return Value::none();
}

// --- dict ---

Status require_hashable(const Value& key) {
  if (key.is_undefined()) return undefined_error(key);
  if (!is_hashable(key)) return render_error("unhashable type: '" + type_name(key) + "'");
  return Status::ok();
}

Result<Value> dict_get(const Value& self, CallArgs& args, Interp&) {
  HEARTH_ASSIGN_OR_RETURN(
      auto bound,
      bind_positional("dict.get", args, {{"key", Value()}, {"default", Value::none()}}));
  HEARTH_RETURN_IF_ERROR(require_hashable(bound[0]));
  const Value* found = self.dict_data().find(bound[0]);
  return found ? *found : bound[1];
}

Result<Value> dict_keys(const Value& self, CallArgs& args, Interp&) {
  HEARTH_ASSIGN_OR_RETURN(auto bound, bind_positional("dict.keys", args, {}));
  (void)bound;
  std::vector<Value> keys;
  keys.reserve(self.dict_data().entries.size());
  for (const auto& entry : self.dict_data().entries) keys.push_back(entry.first);
  return builtins::python_iterable(std::move(keys), "dict_keys");
}

Result<Value> dict_values(const Value& self, CallArgs& args, Interp&) {
  HEARTH_ASSIGN_OR_RETURN(auto bound, bind_positional("dict.values", args, {}));
  (void)bound;
  std::vector<Value> values;
  values.reserve(self.dict_data().entries.size());
  for (const auto& entry : self.dict_data().entries) values.push_back(entry.second);
  return builtins::python_iterable(std::move(values), "dict_values");
}

Result<Value> dict_items(const Value& self, CallArgs& args, Interp&) {
  HEARTH_ASSIGN_OR_RETURN(auto bound, bind_positional("dict.items", args, {}));
  (void)bound;
  std::vector<Value> pairs;
  pairs.reserve(self.dict_data().entries.size());
  for (const auto& [key, value] : self.dict_data().entries) {
    pairs.push_back(builtins::make_pair(key, value));
  }
  return builtins::python_iterable(std::move(pairs), "dict_items");
}

Result<Value> dict_pop(const Value& self, CallArgs& args, Interp&) {
  HEARTH_RETURN_IF_ERROR(positional_only("pop", args));
  if (args.positional.empty() || args.positional.size() > 2) {
    return render_error("pop expected at least 1 argument, got " +
                        std::to_string(args.positional.size()));
  }
  const Value key = args.positional[0];
  HEARTH_RETURN_IF_ERROR(require_hashable(key));
  DictData& dict = self.dict_data();
  const Value* found = dict.find(key);
  if (!found) {
    if (args.positional.size() == 2) return args.positional[1];
    return render_error("KeyError: " + repr(key));
  }
  Value popped = *found;
  dict.erase(key);
  return popped;
}

Result<Value> dict_popitem(const Value& self, CallArgs& args, Interp&) {
  HEARTH_ASSIGN_OR_RETURN(auto bound, bind_positional("dict.popitem", args, {}));
  (void)bound;
  auto& entries = self.dict_data().entries;
  if (entries.empty()) return render_error("KeyError: 'popitem(): dictionary is empty'");
  Value pair = builtins::make_pair(entries.back().first, entries.back().second);
  entries.pop_back();
  return pair;
}

Result<Value> dict_setdefault(const Value& self, CallArgs& args, Interp&) {
  HEARTH_ASSIGN_OR_RETURN(
      auto bound,
      bind_positional("dict.setdefault", args, {{"key", Value()}, {"default", Value::none()}}));
  HEARTH_RETURN_IF_ERROR(require_hashable(bound[0]));
  DictData& dict = self.dict_data();
  if (const Value* found = dict.find(bound[0])) return *found;
  dict.set(bound[0], bound[1]);
  return bound[1];
}

Result<Value> dict_update(const Value& self, CallArgs& args, Interp&) {
  if (args.positional.size() > 1) {
    return render_error("update expected at most 1 argument, got " +
                        std::to_string(args.positional.size()));
  }
  DictData& dict = self.dict_data();
  if (!args.positional.empty()) {
    const Value& other = args.positional[0];
    if (other.is_dict()) {
      // Copy first: d.update(d) must not iterate what it changes.
      const auto entries = other.dict_data().entries;
      for (const auto& [key, value] : entries) dict.set(key, value);
    } else {
      if (other.is_undefined()) return undefined_error(other);
      HEARTH_ASSIGN_OR_RETURN(const std::vector<Value> pairs, iterate(other));
      for (size_t i = 0; i < pairs.size(); ++i) {
        auto pair = iterate(pairs[i]);
        if (!pair.is_ok() || pair->size() != 2) {
          return render_error("dictionary update sequence element #" + std::to_string(i) +
                              " has the wrong length or type");
        }
        HEARTH_RETURN_IF_ERROR(require_hashable((*pair)[0]));
        dict.set((*pair)[0], (*pair)[1]);
      }
    }
  }
  for (auto& [name, value] : args.keyword) dict.set(Value(name), value);
  return Value::none();
}

Result<Value> dict_copy(const Value& self, CallArgs& args, Interp&) {
  HEARTH_ASSIGN_OR_RETURN(auto bound, bind_positional("dict.copy", args, {}));
  (void)bound;
  Value copy = Value::dict();
  copy.dict_data().entries = self.dict_data().entries;
  return copy;
}

Result<Value> dict_clear(const Value& self, CallArgs& args, Interp&) {
  HEARTH_ASSIGN_OR_RETURN(auto bound, bind_positional("dict.clear", args, {}));
  (void)bound;
  self.dict_data().entries.clear();
  return Value::none();
}

struct MethodEntry {
  std::string_view name;
  MethodFn fn;
};

// Sorted by name for binary search. Tuples share the list table; the mutating methods refuse
// them.
constexpr std::array kListMethods = {
    MethodEntry{"append", list_append}, MethodEntry{"clear", list_clear},
    MethodEntry{"copy", list_copy},     MethodEntry{"count", list_count},
    MethodEntry{"extend", list_extend}, MethodEntry{"index", list_index},
    MethodEntry{"insert", list_insert}, MethodEntry{"pop", list_pop},
    MethodEntry{"remove", list_remove}, MethodEntry{"reverse", list_reverse},
    MethodEntry{"sort", list_sort},
};

constexpr std::array kDictMethods = {
    MethodEntry{"clear", dict_clear},     MethodEntry{"copy", dict_copy},
    MethodEntry{"get", dict_get},         MethodEntry{"items", dict_items},
    MethodEntry{"keys", dict_keys},       MethodEntry{"pop", dict_pop},
    MethodEntry{"popitem", dict_popitem}, MethodEntry{"setdefault", dict_setdefault},
    MethodEntry{"update", dict_update},   MethodEntry{"values", dict_values},
};

template <size_t N>
MethodFn lookup(const std::array<MethodEntry, N>& table, std::string_view name) {
  const auto* it =
      std::lower_bound(table.begin(), table.end(), name,
                       [](const MethodEntry& e, std::string_view n) { return e.name < n; });
  if (it == table.end() || it->name != name) return nullptr;
  return it->fn;
}

}  // namespace

MethodFn find_method(Kind kind, std::string_view name) {
  switch (kind) {
    case Kind::kString:
      return builtins::find_str_method(name);
    case Kind::kList:
      return lookup(kListMethods, name);
    case Kind::kDict:
      return lookup(kDictMethods, name);
    default:
      return nullptr;
  }
}

}  // namespace hearth::jinja
