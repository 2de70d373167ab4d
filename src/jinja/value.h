// Values a template computes with: Python's data model as Jinja2 sees it, restricted to what
// JSON input and template literals can produce (undefined, None, bool, int, float, str, list,
// tuple, dict) plus the engine's own objects (namespace, loop, cycler, ...) and callables
// (macros, globals, bound methods).
//
// Values are cheap to copy: strings are shared immutable buffers; lists, dicts and objects are
// shared mutable containers (Python reference semantics: `ns.items.append(x)` is seen through
// every alias).
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <variant>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "base/status.h"

namespace hearth::jinja {

class Value;
class Interp;
struct CallArgs;

enum class Kind : uint8_t {
  kUndefined,
  kNone,
  kBool,
  kInt,
  kFloat,
  kString,
  kList,  // also tuples (ListData::is_tuple)
  kDict,
  kObject,
  kCallable,
};

struct ListData {
  std::vector<Value> items;
  bool is_tuple = false;  // prints as (a, b); immutable
  // Non-empty when the list stands for another Python iterable that a builtin returns: the
  // type Python would have. Iterators ("generator" from map/select/..., "list_reverseiterator"
  // from reverse) have no len() and are always true; views ("dict_keys", "dict_values",
  // "dict_items" from d.keys() & co) print as dict_keys([...]). json.dumps refuses them all.
  std::string_view python_type;
};

// A dict keeps insertion order (Python 3.7+). Keys are hashable scalars (str, int, float, bool,
// None) or tuples; 1, 1.0 and True are the same key, as in Python.
struct DictData {
  std::vector<std::pair<Value, Value>> entries;

  const Value* find(const Value& key) const;
  Value* find(const Value& key);
  void set(Value key, Value value);  // replaces in place or appends
  bool erase(const Value& key);
};

// Engine objects with attributes: namespace(), loop, cycler, joiner.
class Object {
 public:
  virtual ~Object() = default;
  // Python type name, for messages ("Namespace", "LoopContext").
  virtual std::string_view type_name() const = 0;
  // Undefined when the attribute does not exist.
  virtual Value get_attr(std::string_view name) const;
  // Only namespaces accept assignment; others refuse with an error.
  virtual Status set_attr(std::string_view name, Value value);
  // How str() prints it, e.g. "<Namespace {'a': 1}>".
  virtual std::string to_str() const;
};

using NativeFn = std::function<Result<Value>(CallArgs& args, Interp& interp)>;

struct Callable {
  std::string name;  // for messages: "raise_exception", "macro 'render'", "str.upper"
  NativeFn fn;
  bool is_macro = false;
};

class Value {
 public:
  Value() = default;                                    // undefined
  Value(bool b) : data_(b) {}                           // NOLINT
  Value(int v) : data_(static_cast<int64_t>(v)) {}      // NOLINT
  Value(int64_t v) : data_(v) {}                        // NOLINT
  Value(double v) : data_(v) {}                         // NOLINT
  Value(std::string s);                                 // NOLINT
  Value(std::string_view s) : Value(std::string(s)) {}  // NOLINT
  Value(const char* s) : Value(std::string(s)) {}       // NOLINT

  // `hint` names what was missing ("'foo' is undefined", "'dict object' has no attribute 'x'"):
  // the message of the error raised when the undefined value is used.
  static Value undefined(std::string hint = {});
  static Value none();
  static Value list(std::vector<Value> items = {});
  static Value tuple(std::vector<Value> items);
  static Value dict();
  static Value object(std::shared_ptr<Object> object);
  static Value callable(std::string name, NativeFn fn, bool is_macro = false);
  // A str marked safe by the `safe` filter (markupsafe.Markup); behaves as a str otherwise.
  static Value safe_string(std::string s);

  Kind kind() const;
  bool is_undefined() const { return kind() == Kind::kUndefined; }
  bool is_none() const { return kind() == Kind::kNone; }
  bool is_bool() const { return kind() == Kind::kBool; }
  bool is_int() const { return kind() == Kind::kInt; }
  bool is_float() const { return kind() == Kind::kFloat; }
  bool is_number() const { return is_int() || is_float() || is_bool(); }  // Python: bool is int
  bool is_string() const { return kind() == Kind::kString; }
  bool is_list() const { return kind() == Kind::kList; }  // list or tuple
  bool is_tuple() const;
  bool is_dict() const { return kind() == Kind::kDict; }
  bool is_object() const { return kind() == Kind::kObject; }
  bool is_callable() const { return kind() == Kind::kCallable; }
  bool is_safe() const;  // a Markup string

  // Accessors; calling one for the wrong kind is a bug (asserts).
  bool as_bool() const;
  int64_t as_int() const;   // int, or bool as 0/1
  double as_float() const;  // float, int or bool
  const std::string& as_string() const;
  ListData& list_data() const;
  DictData& dict_data() const;
  Object& object_ref() const;
  const std::shared_ptr<Object>& object_ptr() const;
  const Callable& callable_ref() const;
  const std::string& undefined_hint() const;

  // Identity of containers (Python `is`), for cycle checks in repr and sameas.
  const void* identity() const;

 private:
  struct UndefinedTag {
    std::shared_ptr<const std::string> hint;
  };
  struct NoneTag {};
  struct StringBox {
    std::shared_ptr<const std::string> text;
    bool safe = false;
  };
  std::variant<UndefinedTag, NoneTag, bool, int64_t, double, StringBox, std::shared_ptr<ListData>,
               std::shared_ptr<DictData>, std::shared_ptr<Object>, std::shared_ptr<Callable>>
      data_;
};

// --- Python semantics over values (value.cpp) ---

// bool(v): undefined, None, False, 0, 0.0, "", [], {} are false.
bool truthy(const Value& v);
// str(v) as Jinja2 prints `{{ v }}`: undefined → "", None → "None", True → "True",
// 1.0 → "1.0", lists/dicts as Python repr (['a', 1], {'k': None}).
std::string to_str(const Value& v);
// repr(v): strings quoted the way Python quotes them.
std::string repr(const Value& v);
// Python type name for messages: "str", "int", "float", "bool", "NoneType", "list", "tuple",
// "dict", "Undefined", or the object's type_name().
std::string type_name(const Value& v);
// a == b (1 == 1.0 == True; lists and dicts compared deeply; undefined == undefined).
bool equals(const Value& a, const Value& b);
// a < b etc. for numbers, strings (code point order), lists/tuples (lexicographic); other
// pairs raise TypeError like Python ("'<' not supported between instances of 'str' and 'int'").
Result<bool> less_than(const Value& a, const Value& b);
// len(v) for str (code points), list, dict, undefined (0); TypeError otherwise.
Result<int64_t> length(const Value& v);
// iter(v): list items, dict keys, str code points, undefined → nothing; TypeError otherwise.
Result<std::vector<Value>> iterate(const Value& v);
// `needle in haystack`: substring, list membership, dict key; undefined haystack → false.
Result<bool> contains(const Value& haystack, const Value& needle);
// Whether a value can be a dict key (str/int/float/bool/None, tuples of those).
bool is_hashable(const Value& v);

// Jinja2's attribute and item lookup (environment.getattr / getitem), shared by the
// evaluator and the filters (map(attribute=...), selectattr, sort(attribute=...)):
//  get_attr(obj, "name"): a method of that name first (bound to obj: `d.items`, `s.upper`),
//    then the dict key / object attribute; otherwise undefined (hint names obj and key).
//  get_item(obj, key): the dict key, list/str index (negative counts from the end), then a
//    string key as attribute; otherwise undefined. Undefined `obj` raises (Jinja2's default
//    Undefined refuses attribute access), hence the Result.
Result<Value> get_attr(const Value& obj, std::string_view name);
Result<Value> get_item(const Value& obj, const Value& key);

// JSON conversion: objects keep key order; integers stay int, other numbers float.
Value from_json(const nlohmann::ordered_json& j);
// Undefined, objects and callables cannot be converted (TypeError as json.dumps says it).
Result<nlohmann::ordered_json> to_json(const Value& v);

}  // namespace hearth::jinja
