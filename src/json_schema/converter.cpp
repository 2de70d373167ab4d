#include "json_schema/converter.h"

#include <fmt/format.h>

#include <utility>

#include "base/log.h"
#include "json_schema/gbnf_text.h"
#include "json_schema/int_range.h"
#include "json_schema/pattern.h"

namespace hearth::json_schema::detail {
namespace {

struct Primitive {
  const char* name;
  const char* body;
  std::vector<const char*> deps;
};

// Spec 5.1, accepted languages verbatim.
const std::vector<Primitive>& primitives() {
  static const std::vector<Primitive> table = {
      {"space", R"(| " " | "\n"{1,2} [ \t]{0,20})", {}},
      {"boolean", R"(("true" | "false"))", {}},
      {"null", R"("null")", {}},
      {"integral-part", R"([0] | [1-9] [0-9]{0,15})", {}},
      {"decimal-part", R"([0-9]{1,16})", {}},
      {"integer", R"(("-"? integral-part))", {"integral-part"}},
      {"number",
       R"(("-"? integral-part) ("." decimal-part)? ([eE] [-+]? integral-part)?)",
       {"integral-part", "decimal-part"}},
      {"char", R"([^"\\\x7F\x00-\x1F] | [\\] (["\\bfnrt] | "u" [0-9a-fA-F]{4}))", {}},
      {"string", R"("\"" char* "\"")", {"char"}},
      {"value",
       R"(object | array | string | number | boolean | null)",
       {"object", "array", "string", "number", "boolean", "null"}},
      {"object",
       R"("{" space ( string ":" space value ("," space string ":" space value)* )? space "}")",
       {"string", "value", "space"}},
      {"array", R"("[" space ( value ("," space value)* )? space "]")", {"value", "space"}},
      {"uuid",
       R"("\"" [0-9a-fA-F]{8} "-" [0-9a-fA-F]{4} "-" [0-9a-fA-F]{4} "-" [0-9a-fA-F]{4} "-" [0-9a-fA-F]{12} "\"")",
       {}},
      {"date",
       R"([0-9]{4} "-" ( "0" [1-9] | "1" [0-2] ) "-" ( "0" [1-9] | [1-2] [0-9] | "3" [0-1] ))",
       {}},
      {"time",
       R"(([01] [0-9] | "2" [0-3]) ":" [0-5] [0-9] ":" [0-5] [0-9] ( "." [0-9]{3} )? ( "Z" | ( "+" | "-" ) ( [01] [0-9] | "2" [0-3] ) ":" [0-5] [0-9] ))",
       {}},
      {"date-time", R"(date "T" time)", {"date", "time"}},
      {"date-string", R"("\"" date "\"")", {"date"}},
      {"time-string", R"("\"" time "\"")", {"time"}},
      {"date-time-string", R"("\"" date-time "\"")", {"date-time"}},
      {"dot", R"([^\x0A\x0D])", {}},
  };
  return table;
}

const Primitive* find_primitive(std::string_view name) {
  for (const auto& p : primitives()) {
    if (name == p.name) return &p;
  }
  return nullptr;
}

bool is_reserved(std::string_view name) {
  return name == "root" || find_primitive(name) != nullptr;
}

const Json& null_json() {
  static const Json value;
  return value;
}

}  // namespace

Converter::Converter(const Json& root, const Limits& limits) : root_(root), limits_(limits) {}

std::string Converter::dump(const Json& value) {
  return value.dump(-1, ' ', false, Json::error_handler_t::replace);
}

std::string Converter::dump_short(const Json& value) {
  constexpr size_t kMax = 400;
  std::string text = dump(value);
  if (text.size() <= kMax) return text;
  size_t cut = kMax;
  while (cut > 0 && (static_cast<uint8_t>(text[cut]) & 0xC0) == 0x80) --cut;
  return text.substr(0, cut) + "...";
}

void Converter::fail(std::string message) {
  if (errors_.size() >= limits_.max_errors) {
    ++dropped_errors_;
    return;
  }
  errors_.push_back(std::move(message));
}

void Converter::warn(std::string message) {
  warnings_.push_back(std::move(message));
}

const Json* Converter::ref_target(const std::string& ref) const {
  auto it = refs_.find(ref);
  return it == refs_.end() ? nullptr : it->second;
}

std::string Converter::unique_name(const std::string& name, const std::string& body, bool pending) {
  constexpr size_t kMaxNameLength = 96;  // names grow with nesting; keep the text linear
  std::string base = sanitize_rule_name(name).substr(0, kMaxNameLength);
  if (base.empty()) base = "empty";
  if (is_reserved(base)) base += "-";
  auto usable = [&](const std::string& candidate, bool& reuse) {
    auto it = rules_.find(candidate);
    reuse = it != rules_.end() && !pending && !it->second.pending && it->second.body == body;
    return it == rules_.end() || reuse;
  };
  bool reuse = false;
  std::string candidate = base;
  if (!usable(candidate, reuse)) {
    size_t& next = next_suffix_[base];
    do {
      candidate = base + std::to_string(next++);
    } while (!usable(candidate, reuse));
  }
  if (!reuse) rules_[candidate] = Rule{body, pending, {}};
  return candidate;
}

std::string Converter::add_rule(const std::string& name, const std::string& body,
                                std::vector<std::string> leading) {
  std::string chosen = unique_name(name, body, false);
  rules_[chosen].leading = std::move(leading);
  return chosen;
}

std::string Converter::reserve_rule(const std::string& name) {
  return unique_name(name, "", true);
}

void Converter::define_rule(const std::string& name, Built built) {
  Rule& rule = rules_[name];
  rule.pending = false;
  rule.body = built.text;
  rule.leading = built.alias ? std::vector<std::string>{built.text} : std::move(built.leading);
}

std::string Converter::add_primitive(const std::string& name) {
  if (rules_.count(name)) return name;
  const Primitive* p = find_primitive(name);
  if (p == nullptr) {
    fail("Unknown internal rule dependency: " + name);
    return name;
  }
  rules_[name] = Rule{p->body, false, {}};
  for (const char* dep : p->deps) add_primitive(dep);
  return name;
}

// --- $ref (spec 5.6) ---------------------------------------------------------------

// Like the reference, every $ref in the document is resolved up front (errors included),
// and objects holding a $ref are not searched further.
void Converter::resolve_refs() {
  std::vector<std::pair<const Json*, int>> stack = {{&root_, 1}};
  while (!stack.empty() && errors_.size() < limits_.max_errors) {
    auto [node, depth] = stack.back();
    stack.pop_back();
    if (depth > limits_.max_document_depth) {
      fail(fmt::format("schema nesting too deep (limit {})", limits_.max_document_depth));
      return;
    }
    if (node->is_object()) {
      auto ref = node->find("$ref");
      if (ref != node->end()) {
        if (ref->is_string()) {
          resolve_ref(ref->get<std::string>());
        } else {
          fail("Unsupported ref: " + dump_short(*ref));
        }
        continue;
      }
    }
    if (node->is_object() || node->is_array()) {
      for (const auto& child : *node) stack.emplace_back(&child, depth + 1);
    }
  }
}

void Converter::resolve_ref(const std::string& ref) {
  if (refs_.count(ref)) return;
  const Json* target = nullptr;
  std::string pointer;
  if (ref.rfind("https://", 0) == 0) {
    // Remote documents are never fetched: they read as null.
    target = &null_json();
    const size_t hash = ref.find('#');
    if (hash != std::string::npos) pointer = ref.substr(hash + 1);
  } else if (ref.rfind("#/", 0) == 0) {
    target = &root_;
    pointer = ref.substr(1);
  } else {
    fail("Unsupported ref: " + ref);
    return;
  }
  size_t pos = pointer.empty() || pointer[0] != '/' ? 0 : 1;
  while (!pointer.empty() && pos <= pointer.size()) {
    size_t end = pointer.find('/', pos);
    if (end == std::string::npos) end = pointer.size();
    std::string token = pointer.substr(pos, end - pos);
    pos = end + 1;
    // JSON Pointer escapes: ~1 is '/', ~0 is '~'.
    for (size_t k = 0; (k = token.find('~', k)) != std::string::npos; ++k) {
      if (k + 1 < token.size() && (token[k + 1] == '0' || token[k + 1] == '1')) {
        token.replace(k, 2, token[k + 1] == '0' ? "~" : "/");
      }
    }
    const Json* next = nullptr;
    if (target->is_object()) {
      auto it = target->find(token);
      if (it != target->end()) next = &*it;
    } else if (target->is_array() && !token.empty() && token.size() < 10 &&
               token.find_first_not_of("0123456789") == std::string::npos &&
               (token == "0" || token[0] != '0')) {
      const size_t index = std::stoul(token);
      if (index < target->size()) next = &(*target)[index];
    }
    if (next == nullptr) {
      fail("Error resolving ref " + ref + ": " + token + " not in " + dump_short(*target));
      return;
    }
    target = next;
  }
  refs_[ref] = target;
}

// The target becomes a rule named after the reference; recursive references meet the
// reserved name while the body is still being built.
std::string Converter::ref_rule(const std::string& ref) {
  auto known = ref_rules_.find(ref);
  if (known != ref_rules_.end()) return known->second;
  // A $ref inside a $ref's target was not seen up front (objects holding a $ref are not
  // searched), e.g. {"$ref": "#/$defs/a"} whose a refers to b: resolved when reached.
  // (The reference reads such a ref as any value.)
  const size_t errors_before = errors_.size();
  if (ref_target(ref) == nullptr) resolve_ref(ref);
  const Json* target = ref_target(ref);
  if (target == nullptr) {
    if (errors_.size() == errors_before) fail("Error resolving ref " + ref);
    return "value";
  }
  const std::string name = reserve_rule("ref" + ref);
  ref_rules_[ref] = name;
  define_rule(name, build(*target, name, name));
  return name;
}

// --- visiting ------------------------------------------------------------------------

std::string Converter::visit(const Json& schema, const std::string& name,
                             const Json* type_override) {
  Built built = build(schema, name, name, type_override);
  if (built.alias) return built.text;
  return add_rule(name, built.text, std::move(built.leading));
}

Built Converter::build(const Json& schema, const std::string& name, const std::string& rule_name,
                       const Json* type_override) {
  if (too_deep_) return Built{"value", true, {}};
  if (depth_ >= limits_.max_depth) {
    too_deep_ = true;
    fail(fmt::format("schema nesting too deep (limit {})", limits_.max_depth));
    return Built{"value", true, {}};
  }
  ++depth_;
  Built built = dispatch(schema, name, rule_name, type_override);
  --depth_;
  return built;
}

// --- output ----------------------------------------------------------------------------

// A rule that can reach itself through `leading` names (alias and union bodies) is left
// recursive: e.g. $defs a -> {"$ref": b}, b -> {"anyOf": [{"$ref": a}, ...]}. The GBNF
// parser would refuse the grammar, so this is a conversion error instead.
void Converter::check_left_recursion() {
  enum class Mark { kNew, kActive, kDone };
  std::unordered_map<std::string, Mark> marks;
  for (const auto& [start, unused] : rules_) {
    if (marks[start] != Mark::kNew) continue;
    std::vector<std::pair<std::string, size_t>> stack = {{start, 0}};
    marks[start] = Mark::kActive;
    while (!stack.empty()) {
      auto& [name, next] = stack.back();
      auto rule = rules_.find(name);
      const std::vector<std::string>* leading =
          rule == rules_.end() ? nullptr : &rule->second.leading;
      if (leading == nullptr || next >= leading->size()) {
        marks[name] = Mark::kDone;
        stack.pop_back();
        continue;
      }
      const std::string child = (*leading)[next++];
      Mark& mark = marks[child];
      if (mark == Mark::kActive) {
        fail("Unsupported schema: rule " + child +
             " refers to itself without consuming input (a $ref/anyOf cycle that never "
             "reaches a concrete type)");
        return;
      }
      if (mark == Mark::kNew) {
        mark = Mark::kActive;
        stack.emplace_back(child, 0);
      }
    }
  }
}

std::string Converter::render() const {
  std::string out;
  for (const auto& [name, rule] : rules_) {
    out += name;
    out += " ::= ";
    out += rule.body;
    out += '\n';
  }
  return out;
}

Result<Conversion> Converter::run() {
  auto failure = [this]() {
    std::string message = "JSON schema conversion failed:";
    for (const auto& e : errors_) message += "\n" + e;
    if (dropped_errors_ > 0) message += fmt::format("\n... and {} more errors", dropped_errors_);
    return Status(ErrorCode::kInvalidArgument, message);
  };
  resolve_refs();
  if (failed()) return failure();
  // Nothing else may take the start rule's name.
  rules_["root"] = Rule{"", true, {}};
  define_rule("root", build(root_, "", "root"));
  if (!failed()) check_left_recursion();
  if (failed()) return failure();
  Conversion out{render(), std::move(warnings_)};
  Status cost = check_grammar_cost(out.gbnf, limits_);
  if (!cost.is_ok()) {
    fail(cost.message());
    return failure();
  }
  return out;
}

}  // namespace hearth::json_schema::detail

namespace hearth::json_schema {
namespace {

// JSON nesting depth without recursion (the conversion between json flavours recurses).
template <typename J>
bool deeper_than(const J& root, int limit) {
  std::vector<std::pair<const J*, int>> stack = {{&root, 1}};
  while (!stack.empty()) {
    auto [node, depth] = stack.back();
    stack.pop_back();
    if (depth > limit) return true;
    if (node->is_object() || node->is_array()) {
      for (const auto& child : *node) stack.emplace_back(&child, depth + 1);
    }
  }
  return false;
}

Status conversion_error(const std::string& why) {
  return Status(ErrorCode::kInvalidArgument, "JSON schema conversion failed:\n" + why);
}

}  // namespace

Result<Conversion> convert(const nlohmann::ordered_json& schema, const Limits& limits) {
  try {
    detail::Converter converter(schema, limits);
    return converter.run();
  } catch (const std::bad_alloc&) {
    return Status(ErrorCode::kResourceExhausted, "JSON schema conversion ran out of memory");
  } catch (const std::exception& e) {
    return conversion_error(e.what());
  }
}

Result<std::string> to_gbnf(const nlohmann::ordered_json& schema) {
  auto result = convert(schema);
  if (!result.is_ok()) return result.status();
  for (const auto& warning : result->warnings) log_warn("JSON schema: {}", warning);
  return std::move(result->gbnf);
}

Result<std::string> to_gbnf(const nlohmann::json& schema) {
  const Limits limits;
  if (deeper_than(schema, limits.max_document_depth)) {
    return conversion_error(
        fmt::format("schema nesting too deep (limit {})", limits.max_document_depth));
  }
  try {
    const nlohmann::ordered_json ordered = schema;
    return to_gbnf(ordered);
  } catch (const std::exception& e) {
    return conversion_error(e.what());
  }
}

}  // namespace hearth::json_schema
