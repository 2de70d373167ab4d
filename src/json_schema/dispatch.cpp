// Spec 5.2: which rule a subschema becomes, and the leaf cases (unions, constants,
// patterns, string lengths, integer ranges, primitives).
#include <fmt/format.h>

#include <cmath>
#include <limits>
#include <string_view>

#include "json_schema/converter.h"
#include "json_schema/gbnf_text.h"
#include "json_schema/int_range.h"
#include "json_schema/literal_trie.h"
#include "json_schema/pattern.h"

namespace hearth::json_schema::detail {

std::vector<const Json*> members(const Json& value) {
  std::vector<const Json*> out;
  if (value.is_null()) return out;
  if (value.is_array() || value.is_object()) {
    for (const auto& v : value) out.push_back(&v);
  } else {
    out.push_back(&value);
  }
  return out;
}

std::optional<int64_t> as_int64(const Json& v) {
  if (v.is_number_unsigned()) {
    const auto u = v.get<uint64_t>();
    return u > static_cast<uint64_t>(std::numeric_limits<int64_t>::max())
               ? std::numeric_limits<int64_t>::max()
               : static_cast<int64_t>(u);
  }
  if (v.is_number_integer()) return v.get<int64_t>();
  if (v.is_number_float()) {
    const double d = v.get<double>();
    if (std::isnan(d)) return std::nullopt;
    if (d >= 9223372036854775807.0) return std::numeric_limits<int64_t>::max();
    if (d <= -9223372036854775808.0) return std::numeric_limits<int64_t>::min();
    return static_cast<int64_t>(d);
  }
  return std::nullopt;
}

namespace {

bool is_uuid_format(std::string_view f) {
  return f == "uuid" || f == "uuid1" || f == "uuid2" || f == "uuid3" || f == "uuid4" ||
         f == "uuid5";
}

bool is_primitive_type(std::string_view t) {
  return t == "boolean" || t == "null" || t == "integer" || t == "number" || t == "string" ||
         t == "array" || t == "object";
}

Built alias(std::string name) {
  return Built{std::move(name), true, {}};
}

}  // namespace

Built Converter::dispatch(const Json& schema, const std::string& name, const std::string& rule_name,
                          const Json* type_override) {
  // Boolean and other non-object schemas have no keywords: null reads as {} (an object),
  // anything else as a schema with only unknown keys (any value).
  if (!schema.is_object()) {
    return alias(add_primitive(schema.is_null() || schema.empty() ? "object" : "value"));
  }
  auto ref = schema.find("$ref");
  if (ref != schema.end()) {
    if (!ref->is_string()) {
      fail("Unsupported ref: " + dump_short(*ref));
      return alias("value");
    }
    const std::string target = ref_rule(ref->get<std::string>());
    return Built{target, true, {}};
  }
  if (schema.contains("oneOf")) return build_union(schema["oneOf"], name);
  if (schema.contains("anyOf")) return build_union(schema["anyOf"], name);

  const Json* type = type_override;
  if (type == nullptr && schema.contains("type")) type = &schema["type"];
  if (type != nullptr && type->is_array()) return build_type_union(schema, name);
  const bool absent = type == nullptr;
  auto is = [&](std::string_view t) { return type != nullptr && type->is_string() && *type == t; };

  if (schema.contains("const")) return build_constants({&schema["const"]}, name);
  if (schema.contains("enum")) return build_constants(members(schema["enum"]), name);

  auto additional = schema.find("additionalProperties");
  const bool has_additional = additional != schema.end();
  if ((absent || is("object")) &&
      (schema.contains("properties") || (has_additional && *additional != Json(true)))) {
    return build_object_schema(schema, name);
  }
  if ((absent || is("object") || is("string")) && schema.contains("allOf")) {
    return build_all_of(schema, name);
  }
  if ((absent || is("array")) && (schema.contains("items") || schema.contains("prefixItems"))) {
    return build_array(schema, name);
  }
  if ((absent || is("string")) && schema.contains("pattern")) {
    return build_pattern(schema, rule_name);
  }
  auto format = schema.find("format");
  if ((absent || is("string")) && format != schema.end() && format->is_string()) {
    const std::string f = format->get<std::string>();
    if (is_uuid_format(f)) return alias(add_primitive("uuid"));
    if (f == "date" || f == "time" || f == "date-time") return alias(add_primitive(f + "-string"));
  }
  if (is("string") && (schema.contains("minLength") || schema.contains("maxLength"))) {
    return build_string_length(schema);
  }
  if (is("integer") && (schema.contains("minimum") || schema.contains("exclusiveMinimum") ||
                        schema.contains("maximum") || schema.contains("exclusiveMaximum"))) {
    return build_integer_range(schema);
  }
  if (schema.empty() || is("object")) return alias(add_primitive("object"));
  if (absent) return alias(add_primitive("value"));
  if (type->is_string() && is_primitive_type(type->get<std::string>())) {
    return alias(add_primitive(type->get<std::string>()));
  }
  if (type_override != nullptr) {
    Json shown = schema;
    shown["type"] = *type_override;
    fail("Unrecognized schema: " + dump_short(shown));
  } else {
    fail("Unrecognized schema: " + dump_short(schema));
  }
  return alias("value");
}

// Row 2: alternatives named <name>-<i> ("alternative-<i>" at the root); oneOf is not
// exclusive.
Built Converter::build_union(const Json& alternatives, const std::string& name) {
  Built out;
  size_t i = 0;
  for (const Json* alt : members(alternatives)) {
    const std::string alt_name = (name.empty() ? "alternative-" : name + "-") + std::to_string(i++);
    const std::string rule = visit(*alt, alt_name);
    out.text += (out.text.empty() ? "" : " | ") + rule;
    out.leading.push_back(rule);
  }
  if (out.text.empty()) out.text = "\"\"";
  return out;
}

// Row 3: one alternative per listed type, each a copy of the schema with that type.
Built Converter::build_type_union(const Json& schema, const std::string& name) {
  Built out;
  size_t i = 0;
  for (const Json& type : schema["type"]) {
    const std::string alt_name = (name.empty() ? "alternative-" : name + "-") + std::to_string(i++);
    const std::string rule = visit(schema, alt_name, &type);
    out.text += (out.text.empty() ? "" : " | ") + rule;
    out.leading.push_back(rule);
  }
  if (out.text.empty()) out.text = "\"\"";
  return out;
}

// Rows 4-5: the compact JSON serialization of each value, as a literal.
Built Converter::build_constants(const std::vector<const Json*>& values, const std::string& name) {
  if (values.size() == 1) return Built{gbnf_literal(dump(*values[0])), false, {}};
  constexpr size_t kPlainAlternation = 32;  // beyond this, factor common prefixes
  if (values.size() > kPlainAlternation) {
    std::vector<std::string> texts;
    for (const Json* v : values) texts.push_back(dump(*v));
    return Built{
        literal_alternation(texts, *this, (name.empty() ? "root" : name) + "-enum"), false, {}};
  }
  std::string body;
  for (const Json* v : values) body += (body.empty() ? "" : " | ") + gbnf_literal(dump(*v));
  return Built{body.empty() ? "\"\"" : "(" + body + ")", false, {}};
}

// Row 9 (spec 5.7).
Built Converter::build_pattern(const Json& schema, const std::string& rule_name) {
  const Json& pattern = schema["pattern"];
  if (!pattern.is_string()) {
    fail("Invalid pattern: " + dump_short(pattern) + " is not a string");
    return alias("value");
  }
  const std::string text = pattern.get<std::string>();
  int counter = 0;
  auto add_sub_rule = [&](const std::string& body) {
    return add_rule(
        (rule_name.empty() ? std::string("root") : rule_name) + "-" + std::to_string(++counter),
        body);
  };
  PatternOutcome outcome = convert_pattern(text, add_sub_rule, limits_.max_repetitions);
  switch (outcome.kind) {
    case PatternOutcome::Kind::kUnsupported:
      warn("unsupported pattern " + dump_short(pattern) + " (" + outcome.message +
           "); accepting any string instead");
      return alias(add_primitive("string"));
    case PatternOutcome::Kind::kInvalid:
      fail("Invalid pattern " + dump_short(pattern) + ": " + outcome.message);
      return alias("value");
    case PatternOutcome::Kind::kOk:
      break;
  }
  if (outcome.uses_dot) add_primitive("dot");
  return Built{outcome.body, false, {}};
}

// Row 12: "\"" char{min,max} "\"".
Built Converter::build_string_length(const Json& schema) {
  auto count = [&](const char* key, uint64_t fallback, bool& present) {
    present = false;
    auto it = schema.find(key);
    if (it == schema.end() || !it->is_number()) return fallback;
    present = true;
    const std::optional<int64_t> v = as_int64(*it);
    return v && *v > 0 ? static_cast<uint64_t>(*v) : uint64_t{0};
  };
  bool has_min = false, has_max = false;
  const uint64_t min = count("minLength", 0, has_min);
  const uint64_t max = count("maxLength", 0, has_max);
  if (has_max && max < min) {
    fail(fmt::format("minLength {} is greater than maxLength {}", min, max));
    return alias("value");
  }
  add_primitive("char");
  if (has_max && max == 0) return Built{"\"\\\"\" \"\\\"\"", false, {}};
  const std::string suffix = repetition_suffix(min, max, !has_max, "minLength");
  return Built{"\"\\\"\" char" + suffix + " \"\\\"\"", false, {}};
}

// Row 13 (spec 5.8).
Built Converter::build_integer_range(const Json& schema) {
  auto bound = [&](const char* key, std::optional<int64_t>& out) {
    auto it = schema.find(key);
    if (it == schema.end()) return false;
    out = as_int64(*it);
    if (!out) fail(std::string(key) + " must be a number: " + dump_short(*it));
    return true;
  };
  std::optional<int64_t> min, max, tmp;
  bool empty = false;
  if (!bound("minimum", min) && bound("exclusiveMinimum", tmp) && tmp) {
    if (*tmp == std::numeric_limits<int64_t>::max())
      empty = true;
    else
      min = *tmp + 1;
  }
  tmp.reset();
  if (!bound("maximum", max) && bound("exclusiveMaximum", tmp) && tmp) {
    if (*tmp == std::numeric_limits<int64_t>::min())
      empty = true;
    else
      max = *tmp - 1;
  }
  if (failed()) return alias("value");
  std::optional<std::string> body;
  if (!empty) body = integer_range_body(min, max);
  if (!body) {
    fail("integer range is empty: " + dump_short(schema));
    return alias("value");
  }
  return Built{"(" + *body + ")", false, {}};
}

// {min,max} for a repetition the GBNF parser will accept. A lower bound at or over its cap
// is an error; an upper bound at or over it means unbounded, as the parser itself reads any
// upper bound over the cap.
std::string Converter::repetition_suffix(uint64_t min, uint64_t max, bool unbounded,
                                         const char* what) {
  const auto cap = static_cast<uint64_t>(limits_.max_repetitions);
  if (min >= cap) {
    fail(fmt::format("{} {} exceeds the grammar repetition limit of {}", what, min, cap - 1));
    return "";
  }
  if (!unbounded && max >= cap) unbounded = true;
  if (unbounded) {
    if (min == 0) return "*";
    if (min == 1) return "+";
    return fmt::format("{{{},}}", min);
  }
  if (min == 0 && max == 1) return "?";
  if (min == max) return min == 1 ? "" : fmt::format("{{{}}}", min);
  return fmt::format("{{{},{}}}", min, max);
}

}  // namespace hearth::json_schema::detail
