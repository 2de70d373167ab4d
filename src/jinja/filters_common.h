// Internal to the builtins (filters, tests, methods): the helpers they share and the filter
// functions each area file defines for the registry in filters.cpp.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "jinja/builtins.h"
#include "jinja/value.h"

namespace hearth::jinja::builtins {

// The error a default Undefined raises when used ("'x' is undefined").
Status undefined_error(const Value& value);
// An int argument (bools count, as in Python); TypeError otherwise.
Result<int64_t> to_integer(const Value& value);
// A str argument; TypeError naming the function and parameter otherwise.
Result<std::string> to_string_arg(const Value& value, std::string_view function,
                                  std::string_view parameter);
// Jinja2's ignore_case: lower() strings, leave other values alone.
Value ignore_case(const Value& value);
// A Python 2-tuple.
Value make_pair(Value first, Value second);
// A list standing for the iterator or view Python would return (ListData::python_type):
// "generator" for map/select/..., "dict_keys" for d.keys(), ...
Value python_iterable(std::vector<Value> items, std::string_view python_type);
// The Python type of such a list, or "" for real lists, tuples and everything else.
std::string_view python_type_of(const Value& value);
// Whether it is a one-shot iterator (no len(), not reversible), not a view.
bool is_iterator(const Value& value);
// markupsafe.escape of a str: & < > ' " as entities.
std::string html_escape(std::string_view text);
// escape(value) as a Markup value: safe strings unchanged, others str()-ed and escaped.
Value escape_value(const Value& value);

// Jinja2's make_attrgetter: "a.b.0" looks up a, then b, then index 0 with the environment's
// getitem (integer parts index); an int attribute is one index. `fallback` replaces an
// undefined step when it is not None (map's and groupby's default=).
class AttributePath {
 public:
  static Result<AttributePath> parse(const Value& attribute);
  bool empty() const { return parts_.empty(); }
  Result<Value> lookup(Value item, const Value& fallback = Value::none()) const;

 private:
  std::vector<Value> parts_;
};

// make_multi_attrgetter: comma-separated paths, each giving one component of a sort key.
Result<std::vector<AttributePath>> parse_multi_attribute(const Value& attribute);

// Python's `a < b`, and list comparison (== first, then <) for composite sort keys.
Result<bool> python_less(const Value& a, const Value& b);
Result<bool> keys_less(const std::vector<Value>& a, const std::vector<Value>& b);
// Stable sort of items by their parallel keys, like sorted(key=..., reverse=...): equal keys
// keep their order either way; an incomparable pair is Python's TypeError.
Status sort_by_keys(std::vector<Value>& items, std::vector<std::vector<Value>> keys, bool reverse);

// --- Filters, one function each (filters_*.cpp) ---
#define HEARTH_JINJA_FILTER(name) \
  Result<Value> name(const Value& input, CallArgs& args, Interp& interp)
// Strings (filters_text.cpp)
HEARTH_JINJA_FILTER(filter_capitalize);
HEARTH_JINJA_FILTER(filter_center);
HEARTH_JINJA_FILTER(filter_escape);
HEARTH_JINJA_FILTER(filter_forceescape);
HEARTH_JINJA_FILTER(filter_format);
HEARTH_JINJA_FILTER(filter_indent);
HEARTH_JINJA_FILTER(filter_lower);
HEARTH_JINJA_FILTER(filter_upper);
HEARTH_JINJA_FILTER(filter_replace);
HEARTH_JINJA_FILTER(filter_safe);
HEARTH_JINJA_FILTER(filter_string);
HEARTH_JINJA_FILTER(filter_striptags);
HEARTH_JINJA_FILTER(filter_title);
HEARTH_JINJA_FILTER(filter_trim);
HEARTH_JINJA_FILTER(filter_truncate);
HEARTH_JINJA_FILTER(filter_wordcount);
HEARTH_JINJA_FILTER(filter_wordwrap);
HEARTH_JINJA_FILTER(filter_urlencode);
HEARTH_JINJA_FILTER(filter_xmlattr);
HEARTH_JINJA_FILTER(filter_pprint);
HEARTH_JINJA_FILTER(filter_tojson);
// Numbers (filters_number.cpp)
HEARTH_JINJA_FILTER(filter_abs);
HEARTH_JINJA_FILTER(filter_float);
HEARTH_JINJA_FILTER(filter_int);
HEARTH_JINJA_FILTER(filter_round);
HEARTH_JINJA_FILTER(filter_filesizeformat);
HEARTH_JINJA_FILTER(filter_random);
// Sequences (filters_sequence.cpp)
HEARTH_JINJA_FILTER(filter_attr);
HEARTH_JINJA_FILTER(filter_batch);
HEARTH_JINJA_FILTER(filter_default);
HEARTH_JINJA_FILTER(filter_dictsort);
HEARTH_JINJA_FILTER(filter_first);
HEARTH_JINJA_FILTER(filter_groupby);
HEARTH_JINJA_FILTER(filter_items);
HEARTH_JINJA_FILTER(filter_join);
HEARTH_JINJA_FILTER(filter_last);
HEARTH_JINJA_FILTER(filter_length);
HEARTH_JINJA_FILTER(filter_list);
HEARTH_JINJA_FILTER(filter_max);
HEARTH_JINJA_FILTER(filter_min);
HEARTH_JINJA_FILTER(filter_reverse);
HEARTH_JINJA_FILTER(filter_slice);
HEARTH_JINJA_FILTER(filter_sort);
HEARTH_JINJA_FILTER(filter_sum);
HEARTH_JINJA_FILTER(filter_unique);
// Applying other filters and tests (filters_apply.cpp)
HEARTH_JINJA_FILTER(filter_map);
HEARTH_JINJA_FILTER(filter_select);
HEARTH_JINJA_FILTER(filter_reject);
HEARTH_JINJA_FILTER(filter_selectattr);
HEARTH_JINJA_FILTER(filter_rejectattr);
#undef HEARTH_JINJA_FILTER

}  // namespace hearth::jinja::builtins
