// Request fields. A row names a field, its aliases (looked up in order after the name; the
// first present non-null spelling wins), how its JSON value is read (a bool, a 32- or 64-bit
// integer, a seed, a float, each with a hard or soft range, or a parser of its own), where
// the value goes, size limits on what feeds the engine, the routes it belongs to, and how
// generation_settings echoes it. The generation routes share one table (completion_fields());
// the utility routes' small bodies have tables of the same rows. parse_fields() is the one
// loop that reads any body with any table, and no field of the wrong type is accepted; rules
// that join several fields (a schema or a grammar, ignore_eos and logit_bias) run after it.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>
#include <variant>
#include <vector>

#include "server/api_error.h"
#include "server/json_util.h"

namespace hearth::tokenizer {
class Tokenizer;
}

namespace hearth::server {
struct RequestDefaults;
}

namespace hearth::server::fields {

enum class FieldState { kSupported, kDeferred, kNotApplicable };

// The request shapes fields belong to (a bit mask).
enum Route : uint32_t {
  kCompletion = 1u << 0,  // POST /completion, /completions
  kInfill = 1u << 1,      // POST /infill
  kNativeGeneration = kCompletion | kInfill,
  kChatNative = 1u << 2,  // the native members of a chat body (the chat layer sets the prompt)
};

struct Bounds {
  enum class Kind { kNone, kHard, kSoft };  // hard: out of range is a 400; soft: clamped
  Kind kind = Kind::kNone;
  double lo = 0.0;
  double hi = 0.0;
};
inline Bounds hard(double lo, double hi) {
  return {Bounds::Kind::kHard, lo, hi};
}
inline Bounds soft(double lo, double hi) {
  return {Bounds::Kind::kSoft, lo, hi};
}

// Caps on what a field may carry into the engine (0: none). Arrays: items; strings, and each
// string of an array: bytes.
struct Limits {
  size_t max_items = 0;
  size_t max_bytes = 0;
};

// What a field's parser sees besides its value.
struct FieldContext {
  const Json* body = nullptr;  // the whole body (fields whose meaning depends on others)
  const RequestDefaults* defaults = nullptr;
  const tokenizer::Tokenizer* tok = nullptr;
  int32_t n_slots = 1;
  uint32_t route = kCompletion;
};

template <class Out>
struct Field {
  using BoolRef = bool& (*)(Out&);
  using IntRef = int32_t& (*)(Out&);
  using Int64Ref = int64_t& (*)(Out&);
  using SeedRef = uint32_t& (*)(Out&);  // any number, wrapped into uint32
  using FloatRef = float& (*)(Out&);
  using Parse = std::optional<ApiError> (*)(const Json& value, const std::string& used, Out& out,
                                            const FieldContext& ctx);
  using Target = std::variant<std::monostate, BoolRef, IntRef, Int64Ref, SeedRef, FloatRef, Parse>;
  using EchoValue = Json (*)(const Out&);

  // Every member has a default, so rows name only what they set.
  std::string_view name = {};
  std::array<std::string_view, 2> aliases = {};  // in lookup order; unused ones empty
  Target target;  // (no default: GCC 12 fails on one for this variant)
  Bounds bounds = {};
  Limits limits = {};
  uint32_t routes = ~0u;
  // The routes on which a body without the field (no spelling present, not even null) is a
  // 400 "\"<name>\" is required".
  uint32_t required_on = 0;
  FieldState state = FieldState::kSupported;
  int issue = 0;                 // kDeferred: the issue that delivers it
  std::string_view reason = {};  // kDeferred: what is missing; kNotApplicable: why refused
  // Deferred fields: the reference's default as JSON text, the one value accepted (the
  // value must first have the default's type; a hard `bounds` range applies to numbers).
  std::string_view default_json = {};
  // generation_settings: the key, its place (1-based, 0: not echoed), whether /props and
  // /slots show it in their 42-key `params`, and its value (null: the target's value).
  std::string_view echo_key = {};
  int echo_order = 0;
  bool echo_in_params = true;
  EchoValue echo = nullptr;
  // A JSON null is a value this row reads, not an absent field (the reference tests some
  // chat members with `contains`, so a null there is not the default).
  bool keeps_null = false;
  // Chat rows: the native field table reads this member too, so the chat layer passes it
  // on (every other chat member is removed from the native view).
  bool also_native = false;
};

// What the compatibility manifest records of a row.
struct FieldInfo {
  std::string_view name;
  std::vector<std::string_view> aliases;
  FieldState state = FieldState::kSupported;
};

// The rows of `table` that belong to `routes`.
template <class Out>
std::vector<FieldInfo> field_info(const std::vector<Field<Out>>& table, uint32_t routes = ~0u) {
  std::vector<FieldInfo> out;
  for (const Field<Out>& f : table) {
    if ((f.routes & routes) == 0) continue;
    FieldInfo info{f.name, {}, f.state};
    for (std::string_view alias : f.aliases) {
      if (!alias.empty()) info.aliases.push_back(alias);
    }
    out.push_back(std::move(info));
  }
  return out;
}

// --- Reading JSON values, with the reference's rules (native-completion.md §3.1) ----------

ApiError type_error(const std::string& used, const char* expected, const Json& value);
// "Field '<used>': <why>"
ApiError field_error(const std::string& used, const std::string& why);
// Any JSON number (floats truncate, non-finite is 0) or boolean.
std::optional<ApiError> to_int64(const Json& v, const std::string& used, int64_t& out);
// As to_int64, then wrapped modulo 2^32 into int32 (the reference reads a 32-bit int).
std::optional<ApiError> to_int32(const Json& v, const std::string& used, int32_t& out);
std::optional<ApiError> to_float(const Json& v, const std::string& used, float& out);
std::optional<ApiError> to_bool(const Json& v, const std::string& used, bool& out);
std::optional<ApiError> to_string(const Json& v, const std::string& used, std::string& out);
// "Field '<used>': Value must be between <lo> <= value <= <hi>, but got <v>"
std::optional<ApiError> check_range(const std::string& used, int64_t v, int64_t lo, int64_t hi);
std::optional<ApiError> check_range(const std::string& used, float v, float lo, float hi);
// Array item count and string byte caps.
std::optional<ApiError> check_limits(const Json& v, const std::string& used, const Limits& limits);

// The present, non-null spelling of a field (its name, then its aliases); null when none.
template <class Out>
const Json* find_value(const Json& body, const Field<Out>& field, std::string& used) {
  auto try_name = [&](std::string_view n) -> const Json* {
    auto it = body.find(std::string(n));
    if (it == body.end() || (it->is_null() && !field.keeps_null)) return nullptr;
    used = std::string(n);
    return &*it;
  };
  if (const Json* v = try_name(field.name)) return v;
  for (std::string_view alias : field.aliases) {
    if (alias.empty()) break;
    if (const Json* v = try_name(alias)) return v;
  }
  return nullptr;
}

// Whether any spelling of the field is in `body`, null included.
template <class Out>
bool has_spelling(const Json& body, const Field<Out>& field) {
  if (body.contains(std::string(field.name))) return true;
  for (std::string_view alias : field.aliases) {
    if (!alias.empty() && body.contains(std::string(alias))) return true;
  }
  return false;
}

namespace detail {

// A bound as an int64 (the table writes bounds as doubles; 2^63 - 1 is not one).
inline int64_t int_bound(double d) {
  if (d >= 9.2233720368547758e18) return std::numeric_limits<int64_t>::max();
  if (d <= -9.2233720368547758e18) return std::numeric_limits<int64_t>::min();
  return static_cast<int64_t>(d);
}

template <class T>
T bounded(T value, const Bounds& b) {
  if (b.kind != Bounds::Kind::kSoft) return value;
  const double clamped = std::min(std::max(static_cast<double>(value), b.lo), b.hi);
  return static_cast<T>(clamped);
}

// An int32 or int64 field: read, refused outside hard bounds, clamped into soft ones.
template <class Int>
std::optional<ApiError> read_integer(const Json& v, const std::string& used, const Bounds& b,
                                     Int& dst) {
  static_assert(std::is_same_v<Int, int32_t> || std::is_same_v<Int, int64_t>);
  Int value = 0;
  if constexpr (std::is_same_v<Int, int32_t>) {
    if (auto err = to_int32(v, used, value)) return err;
  } else {
    if (auto err = to_int64(v, used, value)) return err;
  }
  if (b.kind == Bounds::Kind::kHard) {
    if (auto err = check_range(used, value, int_bound(b.lo), int_bound(b.hi))) return err;
  }
  dst = bounded(value, b);
  return std::nullopt;
}

template <class Out>
std::optional<ApiError> read_value(const Field<Out>& f, const Json& v, const std::string& used,
                                   Out& out, const FieldContext& ctx) {
  using F = Field<Out>;
  const bool is_hard = f.bounds.kind == Bounds::Kind::kHard;
  if (auto ref = std::get_if<typename F::BoolRef>(&f.target)) return to_bool(v, used, (*ref)(out));
  if (auto ref = std::get_if<typename F::IntRef>(&f.target)) {
    return read_integer(v, used, f.bounds, (*ref)(out));
  }
  if (auto ref = std::get_if<typename F::Int64Ref>(&f.target)) {
    return read_integer(v, used, f.bounds, (*ref)(out));
  }
  if (auto ref = std::get_if<typename F::SeedRef>(&f.target)) {
    int64_t value = 0;
    if (auto err = to_int64(v, used, value)) return err;
    (*ref)(out) = static_cast<uint32_t>(static_cast<uint64_t>(value));
    return std::nullopt;
  }
  if (auto ref = std::get_if<typename F::FloatRef>(&f.target)) {
    float value = 0.0f;
    if (auto err = to_float(v, used, value)) return err;
    if (is_hard) {
      if (auto err = check_range(used, value, static_cast<float>(f.bounds.lo),
                                 static_cast<float>(f.bounds.hi))) {
        return err;
      }
    }
    (*ref)(out) = bounded(value, f.bounds);
    return std::nullopt;
  }
  if (auto parse = std::get_if<typename F::Parse>(&f.target)) return (*parse)(v, used, out, ctx);
  return std::nullopt;
}

}  // namespace detail

// parse_fields (below), for an object inside a body (a message, a content block): each field is
// named by its path, `path` + "." + its spelling ("messages[2].content[0].type"); an empty
// path names fields as parse_fields does.
template <class Out>
std::optional<ApiError> parse_nested_fields(const std::vector<Field<Out>>& table,
                                            const Json& object, const std::string& path, Out& out,
                                            const FieldContext& ctx) {
  for (const Field<Out>& f : table) {
    if ((f.routes & ctx.route) == 0) continue;
    std::string used;
    const Json* value = find_value(object, f, used);
    if (value == nullptr) {
      if ((f.required_on & ctx.route) != 0 && !has_spelling(object, f)) {
        const std::string name =
            path.empty() ? std::string(f.name) : path + "." + std::string(f.name);
        return invalid_request("\"" + name + "\" is required");
      }
      continue;
    }
    if (!path.empty()) used = path + "." + used;
    if (auto err = check_limits(*value, used, f.limits)) return err;
    if (auto err = detail::read_value(f, *value, used, out, ctx)) return err;
  }
  return std::nullopt;
}

// Reads every field of `table` that belongs to ctx.route from `body` (a JSON object) into
// `out`, in table order; the first problem is returned as a 400 naming the field.
template <class Out>
std::optional<ApiError> parse_fields(const std::vector<Field<Out>>& table, const Json& body,
                                     Out& out, const FieldContext& ctx) {
  return parse_nested_fields(table, body, std::string(), out, ctx);
}

// The path of an array's item: "messages" and 2 give "messages[2]".
inline std::string item_path(const std::string& path, size_t index) {
  return path + "[" + std::to_string(index) + "]";
}

}  // namespace hearth::server::fields
