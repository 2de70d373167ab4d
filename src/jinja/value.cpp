// Value and Python's data model over it: truthiness, str/repr, equality and ordering, len,
// iteration, membership, and Jinja2's sandboxed attribute/item lookup.
#include "jinja/value.h"

#include <cassert>
#include <cmath>
#include <limits>

#include <nlohmann/json.hpp>

#include "jinja/builtins.h"
#include "jinja/deferred_delete.h"
#include "jinja/evaluator_ops.h"
#include "jinja/pystr.h"

namespace hearth::jinja {

namespace {

// Containers nested deeper than this print as "..." and compare unequal: Python would raise
// RecursionError; we must not overflow the C++ stack.
constexpr int kMaxReprDepth = 500;

const std::string& empty_string() {
  static const std::string* const kEmpty = new std::string();
  return *kEmpty;
}

}  // namespace

// --- Container destruction ---------------------------------------------------------------

namespace {

// Destroying a container destroys its elements, and a template can nest lists thousands of
// levels deep ({% set ns.x = [ns.x] %} in a loop): recursive destruction would overflow the C++
// stack. Containers are therefore freed through a per-thread queue: a container whose last
// owner goes away while another is being freed is only queued, and the outermost deleter frees
// the queue in a loop.
struct ReapQueue {
  std::vector<ListData*> lists;
  std::vector<DictData*> dicts;
  std::vector<Object*> objects;
  bool draining = false;
};

ReapQueue& reap_queue() {
  thread_local ReapQueue queue;
  return queue;
}

void drain(ReapQueue& queue) {
  queue.draining = true;
  while (!queue.lists.empty() || !queue.dicts.empty() || !queue.objects.empty()) {
    if (!queue.lists.empty()) {
      ListData* list = queue.lists.back();
      queue.lists.pop_back();
      delete list;
    } else if (!queue.dicts.empty()) {
      DictData* dict = queue.dicts.back();
      queue.dicts.pop_back();
      delete dict;
    } else {
      Object* object = queue.objects.back();
      queue.objects.pop_back();
      delete object;
    }
  }
  queue.draining = false;
}

void enqueue(ListData* p, ReapQueue& queue) {
  queue.lists.push_back(p);
}
void enqueue(DictData* p, ReapQueue& queue) {
  queue.dicts.push_back(p);
}
void enqueue(Object* p, ReapQueue& queue) {
  queue.objects.push_back(p);
}

}  // namespace

template <typename T>
void DeferredDelete<T>::operator()(T* pointer) const {
  ReapQueue& queue = reap_queue();
  enqueue(pointer, queue);
  if (!queue.draining) drain(queue);
}

template struct DeferredDelete<ListData>;
template struct DeferredDelete<DictData>;
template struct DeferredDelete<Object>;

// --- DictData ---------------------------------------------------------------------------------

const Value* DictData::find(const Value& key) const {
  for (const auto& entry : entries) {
    if (equals(entry.first, key)) return &entry.second;
  }
  return nullptr;
}

Value* DictData::find(const Value& key) {
  for (auto& entry : entries) {
    if (equals(entry.first, key)) return &entry.second;
  }
  return nullptr;
}

void DictData::set(Value key, Value value) {
  if (Value* existing = find(key)) {
    *existing = std::move(value);
    return;
  }
  entries.emplace_back(std::move(key), std::move(value));
}

bool DictData::erase(const Value& key) {
  for (auto it = entries.begin(); it != entries.end(); ++it) {
    if (equals(it->first, key)) {
      entries.erase(it);
      return true;
    }
  }
  return false;
}

// --- Object defaults --------------------------------------------------------------------------

Value Object::get_attr(std::string_view /*name*/) const {
  return Value();
}

Status Object::set_attr(std::string_view /*name*/, Value /*value*/) {
  return render_error("cannot assign attribute on non-namespace object");
}

std::string Object::to_str() const {
  return "<" + std::string(type_name()) + " object>";
}

// --- Value ------------------------------------------------------------------------------------

Value::Value(std::string s) : data_(StringBox{std::make_shared<const std::string>(std::move(s))}) {}

Value Value::undefined(std::string hint) {
  Value v;
  if (!hint.empty()) {
    v.data_ = UndefinedTag{std::make_shared<const std::string>(std::move(hint))};
  }
  return v;
}

Value Value::none() {
  Value v;
  v.data_ = NoneTag{};
  return v;
}

Value Value::list(std::vector<Value> items) {
  Value v;
  std::shared_ptr<ListData> data(new ListData(), DeferredDelete<ListData>{});
  data->items = std::move(items);
  v.data_ = std::move(data);
  return v;
}

Value Value::tuple(std::vector<Value> items) {
  Value v = list(std::move(items));
  v.list_data().is_tuple = true;
  return v;
}

Value Value::dict() {
  Value v;
  v.data_ = std::shared_ptr<DictData>(new DictData(), DeferredDelete<DictData>{});
  return v;
}

Value Value::object(std::shared_ptr<Object> object) {
  Value v;
  v.data_ = std::move(object);
  return v;
}

Value Value::callable(std::string name, NativeFn fn, bool is_macro) {
  Value v;
  v.data_ = std::make_shared<Callable>(Callable{std::move(name), std::move(fn), is_macro});
  return v;
}

Value Value::safe_string(std::string s) {
  Value v;
  v.data_ = StringBox{std::make_shared<const std::string>(std::move(s)), true};
  return v;
}

Kind Value::kind() const {
  return static_cast<Kind>(data_.index());
}

bool Value::is_tuple() const {
  return is_list() && list_data().is_tuple;
}

bool Value::is_safe() const {
  return is_string() && std::get<StringBox>(data_).safe;
}

bool Value::as_bool() const {
  assert(is_bool());
  return std::get<bool>(data_);
}

int64_t Value::as_int() const {
  if (is_bool()) return std::get<bool>(data_) ? 1 : 0;
  assert(is_int());
  return std::get<int64_t>(data_);
}

double Value::as_float() const {
  if (is_float()) return std::get<double>(data_);
  return static_cast<double>(as_int());
}

const std::string& Value::as_string() const {
  assert(is_string());
  return *std::get<StringBox>(data_).text;
}

ListData& Value::list_data() const {
  assert(is_list());
  return *std::get<std::shared_ptr<ListData>>(data_);
}

DictData& Value::dict_data() const {
  assert(is_dict());
  return *std::get<std::shared_ptr<DictData>>(data_);
}

Object& Value::object_ref() const {
  return *object_ptr();
}

const std::shared_ptr<Object>& Value::object_ptr() const {
  assert(is_object());
  return std::get<std::shared_ptr<Object>>(data_);
}

const Callable& Value::callable_ref() const {
  assert(is_callable());
  return *std::get<std::shared_ptr<Callable>>(data_);
}

const std::string& Value::undefined_hint() const {
  if (const auto* tag = std::get_if<UndefinedTag>(&data_); tag != nullptr && tag->hint) {
    return *tag->hint;
  }
  return empty_string();
}

const void* Value::identity() const {
  switch (kind()) {
    case Kind::kString:
      return std::get<StringBox>(data_).text.get();
    case Kind::kList:
      return std::get<std::shared_ptr<ListData>>(data_).get();
    case Kind::kDict:
      return std::get<std::shared_ptr<DictData>>(data_).get();
    case Kind::kObject:
      return std::get<std::shared_ptr<Object>>(data_).get();
    case Kind::kCallable:
      return std::get<std::shared_ptr<Callable>>(data_).get();
    default:
      return nullptr;
  }
}

// --- str / repr -------------------------------------------------------------------------------

bool truthy(const Value& v) {
  switch (v.kind()) {
    case Kind::kUndefined:
    case Kind::kNone:
      return false;
    case Kind::kBool:
      return v.as_bool();
    case Kind::kInt:
      return v.as_int() != 0;
    case Kind::kFloat:
      return v.as_float() != 0.0;
    case Kind::kString:
      return !v.as_string().empty();
    case Kind::kList:
      return !v.list_data().items.empty();
    case Kind::kDict:
      return !v.dict_data().entries.empty();
    case Kind::kObject:
    case Kind::kCallable:
      return true;
  }
  return true;
}

namespace {

void append_repr(std::string& out, const Value& v, int depth);

std::string callable_text(const Callable& callable) {
  if (callable.is_macro) return "<Macro '" + callable.name + "'>";
  return "<built-in function " + callable.name + ">";
}

void append_repr(std::string& out, const Value& v, int depth) {
  switch (v.kind()) {
    case Kind::kUndefined:
      out += "Undefined";
      return;
    case Kind::kString:
      if (v.is_safe()) {
        out += "Markup(" + pystr::repr_string(v.as_string()) + ")";
      } else {
        out += pystr::repr_string(v.as_string());
      }
      return;
    case Kind::kList: {
      const ListData& list = v.list_data();
      if (depth > kMaxReprDepth) {
        out += list.is_tuple ? "(...)" : "[...]";
        return;
      }
      out += list.is_tuple ? '(' : '[';
      for (size_t i = 0; i < list.items.size(); ++i) {
        if (i > 0) out += ", ";
        if (list.items[i].identity() == v.identity()) {
          out += list.is_tuple ? "(...)" : "[...]";  // Python's marker for self-reference
        } else {
          append_repr(out, list.items[i], depth + 1);
        }
      }
      if (list.is_tuple && list.items.size() == 1) out += ',';
      out += list.is_tuple ? ')' : ']';
      return;
    }
    case Kind::kDict: {
      const DictData& dict = v.dict_data();
      if (depth > kMaxReprDepth) {
        out += "{...}";
        return;
      }
      out += '{';
      bool first = true;
      for (const auto& [key, value] : dict.entries) {
        if (!first) out += ", ";
        first = false;
        append_repr(out, key, depth + 1);
        out += ": ";
        if (value.identity() == v.identity()) {
          out += "{...}";
        } else {
          append_repr(out, value, depth + 1);
        }
      }
      out += '}';
      return;
    }
    default:
      out += to_str(v);
  }
}

}  // namespace

std::string to_str(const Value& v) {
  switch (v.kind()) {
    case Kind::kUndefined:
      return "";
    case Kind::kNone:
      return "None";
    case Kind::kBool:
      return v.as_bool() ? "True" : "False";
    case Kind::kInt:
      return std::to_string(v.as_int());
    case Kind::kFloat:
      return pystr::repr_float(v.as_float());
    case Kind::kString:
      return v.as_string();
    case Kind::kList:
    case Kind::kDict: {
      std::string out;
      append_repr(out, v, 0);
      return out;
    }
    case Kind::kObject:
      return v.object_ref().to_str();
    case Kind::kCallable:
      return callable_text(v.callable_ref());
  }
  return "";
}

std::string repr(const Value& v) {
  std::string out;
  append_repr(out, v, 0);
  return out;
}

std::string type_name(const Value& v) {
  switch (v.kind()) {
    case Kind::kUndefined:
      return "Undefined";
    case Kind::kNone:
      return "NoneType";
    case Kind::kBool:
      return "bool";
    case Kind::kInt:
      return "int";
    case Kind::kFloat:
      return "float";
    case Kind::kString:
      return "str";
    case Kind::kList:
      return v.is_tuple() ? "tuple" : "list";
    case Kind::kDict:
      return "dict";
    case Kind::kObject:
      return std::string(v.object_ref().type_name());
    case Kind::kCallable:
      return v.callable_ref().is_macro ? "Macro" : "builtin_function_or_method";
  }
  return "object";
}

// --- Equality and ordering --------------------------------------------------------------------

namespace {

bool equals_at_depth(const Value& a, const Value& b, int depth);

bool sequences_equal(const ListData& a, const ListData& b, int depth) {
  if (a.is_tuple != b.is_tuple || a.items.size() != b.items.size()) return false;
  for (size_t i = 0; i < a.items.size(); ++i) {
    if (!equals_at_depth(a.items[i], b.items[i], depth + 1)) return false;
  }
  return true;
}

bool dicts_equal(const DictData& a, const DictData& b, int depth) {
  if (a.entries.size() != b.entries.size()) return false;
  for (const auto& [key, value] : a.entries) {
    const Value* other = b.find(key);
    if (other == nullptr || !equals_at_depth(value, *other, depth + 1)) return false;
  }
  return true;
}

bool equals_at_depth(const Value& a, const Value& b, int depth) {
  if (depth > kMaxReprDepth) return false;
  if (a.is_number() && b.is_number()) {
    return compare_numbers(a, b) == std::partial_ordering::equivalent;
  }
  if (a.kind() != b.kind()) return false;
  switch (a.kind()) {
    case Kind::kUndefined:
    case Kind::kNone:
      return true;
    case Kind::kString:
      return a.as_string() == b.as_string();
    case Kind::kList:
      return a.identity() == b.identity() || sequences_equal(a.list_data(), b.list_data(), depth);
    case Kind::kDict:
      return a.identity() == b.identity() || dicts_equal(a.dict_data(), b.dict_data(), depth);
    default:
      return a.identity() == b.identity();
  }
}

}  // namespace

bool equals(const Value& a, const Value& b) {
  return equals_at_depth(a, b, 0);
}

Result<bool> less_than(const Value& a, const Value& b) {
  return compare_values(a, b, CompareOp::kLt);
}

// --- len, iter, in ----------------------------------------------------------------------------

Result<int64_t> length(const Value& v) {
  switch (v.kind()) {
    case Kind::kUndefined:
      return int64_t{0};
    case Kind::kString:
      return static_cast<int64_t>(pystr::code_point_count(v.as_string()));
    case Kind::kList:
      return static_cast<int64_t>(v.list_data().items.size());
    case Kind::kDict:
      return static_cast<int64_t>(v.dict_data().entries.size());
    default:
      return render_error("object of type '" + type_name(v) + "' has no len()");
  }
}

Result<std::vector<Value>> iterate(const Value& v) {
  switch (v.kind()) {
    case Kind::kUndefined:
      return std::vector<Value>{};
    case Kind::kList:
      return v.list_data().items;
    case Kind::kDict: {
      std::vector<Value> keys;
      keys.reserve(v.dict_data().entries.size());
      for (const auto& entry : v.dict_data().entries) keys.push_back(entry.first);
      return keys;
    }
    case Kind::kString: {
      std::vector<Value> chars;
      const std::string& text = v.as_string();
      for (size_t pos = 0; pos < text.size();) {
        const size_t start = pos;
        pystr::decode_one(text, pos);
        chars.emplace_back(text.substr(start, pos - start));
      }
      return chars;
    }
    default:
      return render_error("'" + type_name(v) + "' object is not iterable");
  }
}

bool is_hashable(const Value& v) {
  switch (v.kind()) {
    case Kind::kList:
      if (!v.is_tuple()) return false;
      for (const Value& item : v.list_data().items) {
        if (!is_hashable(item)) return false;
      }
      return true;
    case Kind::kDict:
      return false;
    default:
      return true;
  }
}

Result<bool> contains(const Value& haystack, const Value& needle) {
  switch (haystack.kind()) {
    case Kind::kUndefined:
      return false;
    case Kind::kString:
      if (!needle.is_string()) {
        return render_error("'in <string>' requires string as left operand, not " +
                            type_name(needle));
      }
      return haystack.as_string().find(needle.as_string()) != std::string::npos;
    case Kind::kList:
      for (const Value& item : haystack.list_data().items) {
        if (equals(item, needle)) return true;
      }
      return false;
    case Kind::kDict:
      if (!is_hashable(needle)) return render_error("unhashable type: '" + type_name(needle) + "'");
      return haystack.dict_data().find(needle) != nullptr;
    default:
      return render_error("argument of type '" + type_name(haystack) + "' is not iterable");
  }
}

// --- Attribute and item lookup ----------------------------------------------------------------

namespace {

// Jinja2's object_type_repr: "dict object", "jinja2.utils.Namespace object", "None".
std::string object_type_repr(const Value& v) {
  if (v.is_none()) return "None";
  if (v.is_object()) {
    const std::string_view name = v.object_ref().type_name();
    if (name == "LoopContext" || name == "Macro")
      return "jinja2.runtime." + std::string(name) + " object";
    return "jinja2.utils." + std::string(name) + " object";
  }
  return type_name(v) + " object";
}

Value missing_attribute(const Value& obj, std::string_view name) {
  return Value::undefined(pystr::repr_string(object_type_repr(obj)) + " has no attribute " +
                          pystr::repr_string(name));
}

Value missing_element(const Value& obj, const Value& key) {
  return Value::undefined(object_type_repr(obj) + " has no element " + repr(key));
}

// The sandbox refuses attributes starting with an underscore that the Python object has;
// every Python object has its dunder attributes (__class__, __init__, ...).
bool is_unsafe_attribute(std::string_view name) {
  return name.size() > 4 && name.substr(0, 2) == "__" && name.substr(name.size() - 2) == "__";
}

Value unsafe_attribute(const Value& obj, std::string_view name) {
  return Value::undefined("access to attribute " + pystr::repr_string(name) + " of " +
                          pystr::repr_string(type_name(obj)) + " object is unsafe.");
}

// A Python attribute of obj (a bound method, or an engine object's attribute); undefined when
// there is none.
Value python_attribute(const Value& obj, std::string_view name) {
  if (obj.is_object()) return obj.object_ref().get_attr(name);
  if (obj.is_callable()) return Value();
  const MethodFn method = find_method(obj.kind(), name);
  if (method == nullptr) return Value();
  return Value::callable(
      type_name(obj) + "." + std::string(name),
      [obj, method](CallArgs& args, Interp& interp) { return method(obj, args, interp); });
}

}  // namespace

Result<Value> get_attr(const Value& obj, std::string_view name) {
  if (obj.is_undefined()) return undefined_error(obj);
  if (is_unsafe_attribute(name)) return unsafe_attribute(obj, name);
  Value attribute = python_attribute(obj, name);
  if (!attribute.is_undefined()) return attribute;
  if (obj.is_dict()) {
    // A str key matches only str keys: compare in place instead of building a key Value.
    for (const auto& [key, value] : obj.dict_data().entries) {
      if (key.is_string() && key.as_string() == name) return value;
    }
  }
  return missing_attribute(obj, name);
}

namespace {

// list/str index with Python's negative indexing; nullopt when out of range.
std::optional<size_t> sequence_index(int64_t index, size_t size) {
  if (index < 0) index += static_cast<int64_t>(size);
  if (index < 0 || index >= static_cast<int64_t>(size)) return std::nullopt;
  return static_cast<size_t>(index);
}

}  // namespace

Result<Value> get_item(const Value& obj, const Value& key) {
  if (obj.is_undefined()) return undefined_error(obj);
  const bool integer_key = key.is_int() || key.is_bool();
  if (obj.is_dict()) {
    if (is_hashable(key)) {
      if (const Value* value = obj.dict_data().find(key)) return *value;
    }
  } else if (obj.is_list() && integer_key) {
    const auto& items = obj.list_data().items;
    if (auto index = sequence_index(key.as_int(), items.size())) return items[*index];
  } else if (obj.is_string() && integer_key) {
    const std::string& text = obj.as_string();
    const int64_t count = static_cast<int64_t>(pystr::code_point_count(text));
    if (auto index = sequence_index(key.as_int(), static_cast<size_t>(count))) {
      const size_t start = pystr::byte_offset(text, static_cast<int64_t>(*index));
      size_t end = start;
      pystr::decode_one(text, end);
      return Value(text.substr(start, end - start));
    }
  }
  if (!key.is_string()) return missing_element(obj, key);
  const std::string& name = key.as_string();
  Value attribute = python_attribute(obj, name);
  if (!attribute.is_undefined()) {
    if (is_unsafe_attribute(name)) return unsafe_attribute(obj, name);
    return attribute;
  }
  if (is_unsafe_attribute(name)) return unsafe_attribute(obj, name);
  return missing_attribute(obj, name);
}

// --- JSON -------------------------------------------------------------------------------------

Value from_json(const nlohmann::ordered_json& j) {
  switch (j.type()) {
    case nlohmann::json::value_t::null:
      return Value::none();
    case nlohmann::json::value_t::boolean:
      return Value(j.get<bool>());
    case nlohmann::json::value_t::number_integer:
      return Value(j.get<int64_t>());
    case nlohmann::json::value_t::number_unsigned: {
      const auto u = j.get<uint64_t>();
      if (u <= static_cast<uint64_t>(std::numeric_limits<int64_t>::max())) {
        return Value(static_cast<int64_t>(u));
      }
      return Value(static_cast<double>(u));
    }
    case nlohmann::json::value_t::number_float:
      return Value(j.get<double>());
    case nlohmann::json::value_t::string:
      return Value(j.get_ref<const std::string&>());
    case nlohmann::json::value_t::array: {
      std::vector<Value> items;
      items.reserve(j.size());
      for (const auto& item : j) items.push_back(from_json(item));
      return Value::list(std::move(items));
    }
    case nlohmann::json::value_t::object: {
      Value dict = Value::dict();
      auto& entries = dict.dict_data().entries;
      entries.reserve(j.size());
      // JSON object keys are unique strings: append without the duplicate-key search.
      for (const auto& [key, item] : j.items()) entries.emplace_back(Value(key), from_json(item));
      return dict;
    }
    default:
      return Value::none();
  }
}

namespace {

Result<std::string> json_key(const Value& key) {
  switch (key.kind()) {
    case Kind::kString:
      return key.as_string();
    case Kind::kInt:
      return std::to_string(key.as_int());
    case Kind::kBool:
      return std::string(key.as_bool() ? "true" : "false");
    case Kind::kNone:
      return std::string("null");
    case Kind::kFloat: {
      const double f = key.as_float();
      if (std::isnan(f)) return std::string("NaN");
      if (std::isinf(f)) return std::string(f > 0 ? "Infinity" : "-Infinity");
      return pystr::repr_float(f);
    }
    default:
      return render_error("keys must be str, int, float, bool or None, not " + type_name(key));
  }
}

Result<nlohmann::ordered_json> to_json_at_depth(const Value& v, int depth) {
  if (depth > kMaxReprDepth) return render_error("maximum recursion depth exceeded");
  switch (v.kind()) {
    case Kind::kNone:
      return nlohmann::ordered_json(nullptr);
    case Kind::kBool:
      return nlohmann::ordered_json(v.as_bool());
    case Kind::kInt:
      return nlohmann::ordered_json(v.as_int());
    case Kind::kFloat:
      return nlohmann::ordered_json(v.as_float());
    case Kind::kString:
      return nlohmann::ordered_json(v.as_string());
    case Kind::kList: {
      auto array = nlohmann::ordered_json::array();
      for (const Value& item : v.list_data().items) {
        HEARTH_ASSIGN_OR_RETURN(auto converted, to_json_at_depth(item, depth + 1));
        array.push_back(std::move(converted));
      }
      return array;
    }
    case Kind::kDict: {
      auto object = nlohmann::ordered_json::object();
      for (const auto& [key, item] : v.dict_data().entries) {
        HEARTH_ASSIGN_OR_RETURN(std::string name, json_key(key));
        HEARTH_ASSIGN_OR_RETURN(auto converted, to_json_at_depth(item, depth + 1));
        object[name] = std::move(converted);
      }
      return object;
    }
    default:
      return render_error("Object of type " + type_name(v) + " is not JSON serializable");
  }
}

}  // namespace

Result<nlohmann::ordered_json> to_json(const Value& v) {
  return to_json_at_depth(v, 0);
}

}  // namespace hearth::jinja
