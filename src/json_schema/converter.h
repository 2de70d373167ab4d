// The converter's internal state, shared by converter.cpp (dispatch, rules, $ref, output)
// and objects.cpp (objects, allOf, arrays).
#pragma once

#include <cstdint>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "base/status.h"
#include "json_schema/json_schema.h"

namespace hearth::json_schema::detail {

using Json = nlohmann::ordered_json;

// What a subschema turns into: a rule body, or (alias) the name of an existing rule to use
// as is (primitives, $ref targets). `leading` lists rule names that a body can start with
// without consuming input; a cycle among them would be left recursion.
struct Built {
  std::string text;
  bool alias = false;
  std::vector<std::string> leading;
};

// Iterates an enum/anyOf/oneOf/allOf value the way the reference does: array elements,
// object values, nothing for null, the value itself otherwise.
std::vector<const Json*> members(const Json& value);
// A JSON number read like the reference's get<int64_t>() (floats truncate), clamped to the
// int64 range; nullopt for anything else.
std::optional<int64_t> as_int64(const Json& value);

class Converter {
 public:
  Converter(const Json& root, const Limits& limits);
  Result<Conversion> run();

  // Visits `schema`, naming its rule after `name`, and returns the rule name to reference.
  // `type_override` stands for `type` (one entry of a type array, spec 5.2 row 3).
  std::string visit(const Json& schema, const std::string& name,
                    const Json* type_override = nullptr);
  Built build(const Json& schema, const std::string& name, const std::string& rule_name,
              const Json* type_override = nullptr);
  std::string add_rule(const std::string& name, const std::string& body,
                       std::vector<std::string> leading = {});
  // A unique name whose body comes later (define_rule); nothing else can take or reuse it.
  std::string reserve_rule(const std::string& name);
  void define_rule(const std::string& name, Built built);
  // Defines a primitive rule (and what it references) and returns its name.
  std::string add_primitive(const std::string& name);
  void fail(std::string message);
  void warn(std::string message);
  bool failed() const { return !errors_.empty(); }
  // The pre-resolved target of a $ref string; null when it is unknown.
  const Json* ref_target(const std::string& ref) const;
  std::string ref_rule(const std::string& ref);
  // dump() for messages: no throw on bad UTF-8, cut after a few hundred bytes.
  static std::string dump_short(const Json& value);
  static std::string dump(const Json& value);
  static std::string join_name(const std::string& parent, const std::string& child) {
    return parent.empty() ? child : parent + "-" + child;
  }
  const Limits& limits() const { return limits_; }

  // objects.cpp
  Built build_object_schema(const Json& schema, const std::string& name);
  Built build_object(const std::vector<std::pair<std::string, const Json*>>& properties,
                     const std::unordered_set<std::string>& required, const std::string& name,
                     const Json* additional);
  Built build_all_of(const Json& schema, const std::string& name);
  Built build_array(const Json& schema, const std::string& name);
  // `what` names the schema keyword in the error for a count over the parser's cap.
  std::string repetition_suffix(uint64_t min, uint64_t max, bool unbounded, const char* what);

 private:
  struct Rule {
    std::string body;
    bool pending = false;  // reserved for a $ref whose body is being built
    std::vector<std::string> leading;
  };

  void resolve_refs();
  void resolve_ref(const std::string& ref);
  Built dispatch(const Json& schema, const std::string& name, const std::string& rule_name,
                 const Json* type_override);
  Built build_union(const Json& alternatives, const std::string& name);
  Built build_type_union(const Json& schema, const std::string& name);
  Built build_constants(const std::vector<const Json*>& values, const std::string& name);
  Built build_pattern(const Json& schema, const std::string& rule_name);
  Built build_string_length(const Json& schema);
  Built build_integer_range(const Json& schema);
  std::string unique_name(const std::string& name, const std::string& body, bool pending);
  void check_left_recursion();
  std::string render() const;

  const Json& root_;
  Limits limits_;
  std::map<std::string, Rule> rules_;
  std::unordered_map<std::string, size_t> next_suffix_;
  std::unordered_map<std::string, const Json*> refs_;
  std::unordered_map<std::string, std::string> ref_rules_;
  std::vector<std::string> errors_;
  size_t dropped_errors_ = 0;
  std::vector<std::string> warnings_;
  int depth_ = 0;
  bool too_deep_ = false;
};

}  // namespace hearth::json_schema::detail
