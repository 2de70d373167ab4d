// Spec 5.3-5.5: objects (properties, required, additionalProperties), allOf, arrays.
#include <fmt/format.h>

#include <cstdint>
#include <deque>
#include <map>
#include <string_view>

#include "json_schema/converter.h"
#include "json_schema/gbnf_text.h"

namespace hearth::json_schema::detail {
namespace {

// --- keys that are not one of the declared property names --------------------------------
//
// A trie over the declared names as they appear between the quotes (JSON-escaped). Each
// node accepts the rest of any valid JSON string content that does not complete a declared
// name: follow a child, or leave the trie with a character no child takes (then anything),
// or end here when the node does not complete a name. The lexical state (inside an escape
// or not) decides which characters are valid next.

enum State : int { kNormal = 0, kAfterBackslash = 1 };  // 2..5: inside \uXXXX, 4..1 left
constexpr std::string_view kEscapeLetters = "\"\\bfnrt";
constexpr std::string_view kHexDigits = "0123456789abcdefABCDEF";

int next_state(int state, uint32_t cp) {
  if (state == kNormal) return cp == '\\' ? kAfterBackslash : kNormal;
  if (state == kAfterBackslash) return cp == 'u' ? 5 : kNormal;
  return state == 2 ? kNormal : state - 1;
}

bool valid_in(int state, uint32_t cp) {
  if (state == kNormal) return cp != '"' && cp >= 0x20 && cp != 0x7F;
  if (cp >= 0x80) return false;
  if (state == kAfterBackslash)
    return cp == 'u' || kEscapeLetters.find(static_cast<char>(cp)) != std::string_view::npos;
  return kHexDigits.find(static_cast<char>(cp)) != std::string_view::npos;
}

struct TrieNode {
  std::map<uint32_t, size_t> children;
  bool end = false;
};

class KeyTrie {
 public:
  explicit KeyTrie(Converter& converter) : converter_(converter), nodes_(1) {}

  void insert(const std::string& escaped) {
    size_t node = 0;
    for (uint32_t cp : decode_utf8(escaped)) {
      auto [it, added] = nodes_[node].children.emplace(cp, nodes_.size());
      if (added) nodes_.emplace_back();
      node = it->second;
    }
    nodes_[node].end = true;
  }

  // The key rule's body; deep parts of the trie go to rules of their own (worklist, so
  // neither this code nor the grammar nests deeper than kInlineDepth per rule).
  std::string body(const std::string& rule_name) {
    rule_name_ = rule_name;
    // Shared tails as rules: inline `char*` and escape groups at every node would cost the
    // GBNF parser several synthesized rules per character of the declared names.
    tail_ = converter_.add_rule(rule_name + "-tail", "char*");
    escape_ = converter_.add_rule(rule_name + "-escape", "[\"\\\\bfnrt] | \"u\" [0-9a-fA-F]{4}");
    std::string out = "\"\\\"\" " + node(0, kNormal, 0) + " \"\\\"\"";
    while (!pending_.empty()) {
      auto [index, state, name] = pending_.front();
      pending_.pop_front();
      converter_.define_rule(name, Built{node(index, state, 0), false, {}});
    }
    return out;
  }

 private:
  static constexpr int kInlineDepth = 24;

  std::string node(size_t index, int state, int depth);
  std::string leave(const TrieNode& n, int state);

  Converter& converter_;
  std::vector<TrieNode> nodes_;
  std::string rule_name_, tail_, escape_;
  std::deque<std::tuple<size_t, int, std::string>> pending_;
};

std::string KeyTrie::node(size_t index, int state, int depth) {
  const TrieNode& n = nodes_[index];
  std::string alts;
  for (const auto& [cp, child] : n.children) {
    if (!valid_in(state, cp)) continue;  // leads only to invalid strings or a declared name
    std::string rest;
    if (depth + 1 >= kInlineDepth) {
      rest = converter_.reserve_rule(rule_name_ + "-" + std::to_string(pending_.size() + 1));
      pending_.emplace_back(child, next_state(state, cp), rest);
    } else {
      rest = node(child, next_state(state, cp), depth + 1);
    }
    alts += (alts.empty() ? "" : " | ") + gbnf_literal_cp(cp) + " " + rest;
  }
  const std::string other = leave(n, state);
  if (!other.empty()) alts += (alts.empty() ? "" : " | ") + other;
  // Ending here is fine unless this completes a declared name (or is inside an escape).
  // An empty alternative rather than `?`: a `?` on a big group trips the parser's
  // rule-explosion guard.
  if (!n.end && state == kNormal) alts += " | ";
  return "(" + alts + ")";
}

// Alternatives that leave the trie: a character no child takes, then any valid rest.
std::string KeyTrie::leave(const TrieNode& n, int state) {
  auto taken = [&](uint32_t cp) { return n.children.count(cp) > 0; };
  std::string out;
  if (state == kNormal) {
    std::string cls = "[^\"\\\\\\x7F\\x00-\\x1F";
    for (const auto& [cp, child] : n.children) {
      if (valid_in(kNormal, cp) && cp != '\\') cls += gbnf_class_member(cp);
    }
    out = cls + "] " + tail_;
    if (!taken('\\')) out += " | [\\\\] " + escape_ + " " + tail_;
    return out;
  }
  const std::string_view allowed = state == kAfterBackslash ? kEscapeLetters : kHexDigits;
  std::string cls;
  for (char c : allowed) {
    if (!taken(static_cast<uint32_t>(c))) cls += gbnf_class_member(static_cast<uint32_t>(c));
  }
  const int hex_left = state >= 2 ? state - 2 : 0;  // digits after this one
  if (!cls.empty()) {
    out = "[" + cls + "]";
    if (hex_left > 0) out += fmt::format(" [0-9a-fA-F]{{{}}}", hex_left);
    out += " " + tail_;
  }
  if (state == kAfterBackslash && !taken('u')) {
    out += std::string(out.empty() ? "" : " | ") + "\"u\" [0-9a-fA-F]{4} " + tail_;
  }
  return out;
}

bool allows_additional(const Json* additional) {
  return additional != nullptr &&
         (additional->is_object() || (additional->is_boolean() && additional->get<bool>()));
}

}  // namespace

// Row 6: properties in schema order, the required names, additionalProperties.
Built Converter::build_object_schema(const Json& schema, const std::string& name) {
  std::vector<std::pair<std::string, const Json*>> properties;
  auto props = schema.find("properties");
  if (props != schema.end() && props->is_object()) {
    for (auto it = props->begin(); it != props->end(); ++it)
      properties.emplace_back(it.key(), &*it);
  }
  std::unordered_set<std::string> required;
  auto req = schema.find("required");
  if (req != schema.end() && req->is_array()) {
    for (const auto& r : *req) {
      if (r.is_string()) required.insert(r.get<std::string>());
    }
  }
  auto additional = schema.find("additionalProperties");
  return build_object(properties, required, name,
                      additional != schema.end() ? &*additional : nullptr);
}

// Spec 5.3. Required members in properties order, then the optional ones (each at most
// once, in order; additional members last and repeatable) as a chain of "-rest" rules.
Built Converter::build_object(const std::vector<std::pair<std::string, const Json*>>& properties,
                              const std::unordered_set<std::string>& required,
                              const std::string& name, const Json* additional) {
  add_primitive("space");
  std::vector<std::string> kv;
  std::vector<std::string> keys;
  size_t star_idx = SIZE_MAX;  // the additional-members entry, when allowed
  std::vector<size_t> required_idx, optional_idx;
  for (const auto& [prop, schema] : properties) {
    const std::string value = visit(*schema, join_name(name, prop));
    kv.push_back(add_rule(join_name(name, prop) + "-kv",
                          gbnf_literal(dump(Json(prop))) + " space \":\" space " + value));
    keys.push_back(prop);
    (required.count(prop) ? required_idx : optional_idx).push_back(kv.size() - 1);
  }
  const bool star = allows_additional(additional);
  if (star) {
    const std::string sub = join_name(name, "additional");
    const std::string value =
        additional->is_object() ? visit(*additional, sub + "-value") : add_primitive("value");
    std::string key;
    if (properties.empty()) {
      key = add_primitive("string");
    } else {
      add_primitive("char");
      key = reserve_rule(sub + "-k");
      KeyTrie trie(*this);
      for (const auto& [prop, schema] : properties) {
        const std::string quoted = dump(Json(prop));
        trie.insert(quoted.substr(1, quoted.size() - 2));
      }
      define_rule(key, Built{trie.body(key), false, {}});
    }
    kv.push_back(add_rule(sub + "-kv", key + " \":\" space " + value));
    keys.push_back("*");
    star_idx = kv.size() - 1;
    optional_idx.push_back(star_idx);
  }

  std::string body = "\"{\" space";
  for (size_t i = 0; i < required_idx.size(); ++i) {
    body += (i ? " \",\" space " : " ") + kv[required_idx[i]];
  }
  if (!optional_idx.empty()) {
    const size_t k = optional_idx.size();
    auto piece = [&](size_t i, bool first_optional) {
      const std::string& item = kv[optional_idx[i]];
      const bool is_star = optional_idx[i] == star_idx;
      if (first_optional) return "( \",\" space " + item + " )" + (is_star ? "*" : "?");
      return is_star ? item + " ( \",\" space " + item + " )*" : item;
    };
    // rest[i]: the optional members after the i-th, each optional, in order.
    std::vector<std::string> rest(k);
    for (size_t i = k - 1; i-- > 0;) {
      std::string chain = piece(i + 1, true);
      if (i + 2 < k) chain += " " + rest[i + 1];
      rest[i] = add_rule(join_name(name, keys[optional_idx[i]]) + "-rest", chain);
    }
    std::string alts;
    for (size_t i = 0; i < k; ++i) {
      alts += (i ? " | " : "") + piece(i, false) + (i + 1 < k ? " " + rest[i] : "");
    }
    body += required_idx.empty() ? " (" + alts + " | )" : " ( \",\" space (" + alts + ") | )";
  }
  body += " space \"}\"";
  return Built{body, false, {}};
}

// Spec 5.5.
Built Converter::build_all_of(const Json& schema, const std::string& name) {
  std::vector<std::pair<std::string, const Json*>> properties;
  std::unordered_set<std::string> required;
  const std::vector<const Json*> entries = members(schema["allOf"]);
  // Enum values by serialization: first occurrence, and the entries they occur in.
  std::vector<std::pair<std::string, const Json*>> enum_order;
  std::unordered_map<std::string, std::unordered_set<size_t>> enum_entries;

  auto add_component = [&](const Json* comp, bool is_required, size_t entry) {
    for (int hops = 0; comp->is_object() && comp->contains("$ref"); ++hops) {
      const Json& ref = (*comp)["$ref"];
      const Json* target = ref.is_string() ? ref_target(ref.get<std::string>()) : nullptr;
      if (target == nullptr || hops >= limits_.max_depth) {
        fail("Error resolving ref " + dump_short(ref) + " in allOf");
        return;
      }
      comp = target;
    }
    if (!comp->is_object()) return;
    auto props = comp->find("properties");
    if (props != comp->end() && props->is_object()) {
      for (auto it = props->begin(); it != props->end(); ++it) {
        properties.emplace_back(it.key(), &*it);
        if (is_required) required.insert(it.key());
      }
    }
    auto values = comp->find("enum");
    if (values != comp->end()) {
      for (const Json* v : members(*values)) {
        std::string key = dump(*v);
        auto& seen_in = enum_entries[key];
        if (seen_in.empty()) enum_order.emplace_back(key, v);
        seen_in.insert(entry);
      }
    }
  };
  for (size_t i = 0; i < entries.size(); ++i) {
    const Json& t = *entries[i];
    if (t.is_object() && t.contains("anyOf")) {
      for (const Json* alt : members(t["anyOf"])) add_component(alt, false, i);
    } else {
      add_component(&t, true, i);
    }
  }
  std::vector<const Json*> common;
  for (const auto& [key, value] : enum_order) {
    if (enum_entries[key].size() == entries.size()) common.push_back(value);
  }
  if (!common.empty()) return build_constants(common, name);
  return build_object(properties, required, name, nullptr);
}

// Spec 5.4.
Built Converter::build_array(const Json& schema, const std::string& name) {
  add_primitive("space");
  const Json& items = schema.contains("items") ? schema["items"] : schema["prefixItems"];
  if (items.is_array()) {
    std::string body = "\"[\" space";
    for (size_t i = 0; i < items.size(); ++i) {
      body += (i ? " \",\" space " : " ") +
              visit(items[i], join_name(name, "tuple-" + std::to_string(i)));
    }
    return Built{body + " space \"]\"", false, {}};
  }
  const std::string item = visit(items, join_name(name, "item"));
  uint64_t min = 0, max = 0;
  bool unbounded = true;
  if (auto it = schema.find("minItems"); it != schema.end() && it->is_number()) {
    const std::optional<int64_t> v = as_int64(*it);
    min = v && *v > 0 ? static_cast<uint64_t>(*v) : 0;
  }
  if (auto it = schema.find("maxItems"); it != schema.end() && it->is_number_integer()) {
    const std::optional<int64_t> v = as_int64(*it);
    if (*v < 0 || static_cast<uint64_t>(*v) < min) {
      fail(fmt::format("minItems {} is greater than maxItems {}", min, *v));
      return Built{"value", true, {}};
    }
    max = static_cast<uint64_t>(*v);
    unbounded = false;
  }
  std::string list;
  if (unbounded || max > 0) {
    list = item;
    if (unbounded || max > 1) {
      list +=
          " ( \",\" space " + item + " )" +
          repetition_suffix(min == 0 ? 0 : min - 1, unbounded ? 0 : max - 1, unbounded, "minItems");
    }
    // An empty alternative instead of `?`: see KeyTrie::node.
    if (min == 0) list = "( " + list + " | )";
  }
  return Built{"\"[\" space " + (list.empty() ? "" : list + " ") + "space \"]\"", false, {}};
}

}  // namespace hearth::json_schema::detail
