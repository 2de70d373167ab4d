// Global functions: Jinja2's defaults (range with the sandbox's MAX_RANGE, dict, namespace,
// cycler, joiner) and Hugging Face's raise_exception and strftime_now.
#include <ctime>
#include <unordered_map>

#include "jinja/builtins.h"
#include "jinja/deferred_delete.h"
#include "jinja/objects.h"
#include "jinja/parser.h"

namespace hearth::jinja {

namespace {

constexpr int64_t kMaxRange = 100000;  // jinja2.sandbox.MAX_RANGE

Status no_keywords(std::string_view function, const CallArgs& args) {
  if (args.keyword.empty()) return Status::ok();
  return render_error(std::string(function) + "() takes no keyword arguments");
}

Result<int64_t> as_index(const Value& v) {
  if (v.is_int() || v.is_bool()) return v.as_int();
  return render_error("'" + type_name(v) + "' object cannot be interpreted as an integer");
}

Result<Value> range_fn(CallArgs& args, Interp& /*interp*/) {
  HEARTH_RETURN_IF_ERROR(no_keywords("range", args));
  const size_t count = args.positional.size();
  if (count == 0) return render_error("range expected at least 1 argument, got 0");
  if (count > 3) {
    return render_error("range expected at most 3 arguments, got " + std::to_string(count));
  }
  int64_t start = 0;
  int64_t step = 1;
  HEARTH_ASSIGN_OR_RETURN(int64_t stop, as_index(args.positional[count == 1 ? 0 : 1]));
  if (count >= 2) {
    HEARTH_ASSIGN_OR_RETURN(start, as_index(args.positional[0]));
  }
  if (count == 3) {
    HEARTH_ASSIGN_OR_RETURN(step, as_index(args.positional[2]));
  }
  if (step == 0) return render_error("range() arg 3 must not be zero");
  // Length in unsigned arithmetic: stop - start and |step| may not fit in int64.
  uint64_t length = 0;
  const uint64_t magnitude =
      step > 0 ? static_cast<uint64_t>(step) : static_cast<uint64_t>(-(step + 1)) + 1;
  if (step > 0 && start < stop) {
    length = (static_cast<uint64_t>(stop) - static_cast<uint64_t>(start) - 1) / magnitude + 1;
  } else if (step < 0 && start > stop) {
    length = (static_cast<uint64_t>(start) - static_cast<uint64_t>(stop) - 1) / magnitude + 1;
  }
  if (length > static_cast<uint64_t>(kMaxRange)) {
    return render_error("Range too big. The sandbox blocks ranges larger than MAX_RANGE (" +
                        std::to_string(kMaxRange) + ").");
  }
  std::vector<Value> items;
  items.reserve(static_cast<size_t>(length));
  for (int64_t i = 0; i < static_cast<int64_t>(length); ++i) items.emplace_back(start + i * step);
  return Value::list(std::move(items));
}

// dict(mapping_or_pairs, **kwargs) as Python builds it.
Status fill_dict(std::string_view function, CallArgs& args, DictData& out) {
  if (args.positional.size() > 1) {
    return render_error(std::string(function) + " expected at most 1 argument, got " +
                        std::to_string(args.positional.size()));
  }
  if (!args.positional.empty()) {
    const Value& source = args.positional.front();
    if (source.is_dict()) {
      out = source.dict_data();
    } else {
      if (!source.is_list() && !source.is_string() && !source.is_undefined()) {
        return render_error("'" + type_name(source) + "' object is not iterable");
      }
      HEARTH_ASSIGN_OR_RETURN(std::vector<Value> items, iterate(source));
      for (size_t i = 0; i < items.size(); ++i) {
        const std::string element = "dictionary update sequence element #" + std::to_string(i);
        if (!items[i].is_list() && !items[i].is_string()) {
          return render_error("cannot convert " + element + " to a sequence");
        }
        HEARTH_ASSIGN_OR_RETURN(std::vector<Value> pair, iterate(items[i]));
        if (pair.size() != 2) {
          return render_error(element + " has length " + std::to_string(pair.size()) +
                              "; 2 is required");
        }
        if (!is_hashable(pair[0])) {
          return render_error("unhashable type: '" + type_name(pair[0]) + "'");
        }
        out.set(std::move(pair[0]), std::move(pair[1]));
      }
    }
  }
  for (auto& [key, value] : args.keyword) out.set(Value(key), std::move(value));
  return Status::ok();
}

Result<Value> dict_fn(CallArgs& args, Interp& /*interp*/) {
  Value dict = Value::dict();
  HEARTH_RETURN_IF_ERROR(fill_dict("dict", args, dict.dict_data()));
  return dict;
}

Result<Value> namespace_fn(CallArgs& args, Interp& /*interp*/) {
  std::shared_ptr<Namespace> ns(new Namespace(), DeferredDelete<Object>{});
  HEARTH_RETURN_IF_ERROR(fill_dict("Namespace", args, ns->attributes()));
  return Value::object(std::move(ns));
}

Result<Value> cycler_fn(CallArgs& args, Interp& /*interp*/) {
  if (!args.keyword.empty()) {
    return render_error("Cycler.__init__() got an unexpected keyword argument '" +
                        args.keyword.front().first + "'");
  }
  if (args.positional.empty()) return render_error("at least one item has to be provided");
  return Value::object(std::make_shared<Cycler>(args.positional));
}

Result<Value> joiner_fn(CallArgs& args, Interp& /*interp*/) {
  HEARTH_ASSIGN_OR_RETURN(std::vector<Value> bound,
                          bind_args("Joiner.__init__", args, {{"sep", Value(", ")}}));
  return make_joiner(std::move(bound[0]));
}

Result<Value> raise_exception_fn(CallArgs& args, Interp& /*interp*/) {
  HEARTH_ASSIGN_OR_RETURN(std::vector<Value> bound,
                          bind_args("raise_exception", args, {{"message", Value(), true}}));
  return render_error(to_str(bound[0]));
}

// Python's datetime.now().strftime(): a naive datetime, so %z and %Z are empty, and %f is
// the microseconds (always 0 here: the clock has second resolution).
std::string python_strftime(const std::string& format, const std::tm& time) {
  std::string adjusted;
  for (size_t i = 0; i < format.size(); ++i) {
    if (format[i] == '%' && i + 1 < format.size()) {
      const char directive = format[i + 1];
      ++i;
      if (directive == 'z' || directive == 'Z') continue;
      if (directive == 'f') {
        adjusted += "000000";
        continue;
      }
      adjusted += '%';
      adjusted += directive;
      continue;
    }
    adjusted += format[i];
  }
  if (adjusted.empty()) return "";
  for (size_t size = 256; size <= (1u << 16); size *= 4) {
    std::string out(size, '\0');
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wformat-nonliteral"  // the template chooses the format
    const size_t written = std::strftime(out.data(), out.size(), adjusted.c_str(), &time);
#pragma GCC diagnostic pop
    if (written > 0) {
      out.resize(written);
      return out;
    }
  }
  return "";
}

Result<Value> strftime_now_fn(CallArgs& args, Interp& interp) {
  HEARTH_ASSIGN_OR_RETURN(std::vector<Value> bound,
                          bind_args("strftime_now", args, {{"format", Value(), true}}));
  if (!bound[0].is_string()) {
    return render_error("strftime() argument 1 must be str, not " + type_name(bound[0]));
  }
  const std::time_t now = interp.now();
  std::tm local{};
  localtime_r(&now, &local);
  return Value(python_strftime(bound[0].as_string(), local));
}

}  // namespace

Value builtin_global(std::string_view name) {
  static const auto* const kGlobals = new std::unordered_map<std::string_view, Value>{
      {"range", Value::callable("range", range_fn)},
      {"dict", Value::callable("dict", dict_fn)},
      {"namespace", Value::callable("namespace", namespace_fn)},
      {"cycler", Value::callable("cycler", cycler_fn)},
      {"joiner", Value::callable("joiner", joiner_fn)},
      {"raise_exception", Value::callable("raise_exception", raise_exception_fn)},
      {"strftime_now", Value::callable("strftime_now", strftime_now_fn)},
  };
  const auto it = kGlobals->find(name);
  return it == kGlobals->end() ? Value() : it->second;
}

}  // namespace hearth::jinja
