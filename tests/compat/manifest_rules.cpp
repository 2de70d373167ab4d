#include "compat/manifest_rules.h"

#include <algorithm>
#include <cctype>
#include <map>

namespace hearth::compat {
namespace {

bool is_ident_start(char c) {
  return std::isalpha(static_cast<unsigned char>(c)) != 0 || c == '_';
}
bool is_ident_char(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) != 0 || c == '_';
}

std::string_view trim(std::string_view s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front())) != 0) s.remove_prefix(1);
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back())) != 0) s.remove_suffix(1);
  return s;
}

bool is_non_empty_string(const Json& v) {
  return v.is_string() && !trim(v.get_ref<const std::string&>()).empty();
}

bool is_string_array(const Json& v, bool allow_empty) {
  if (!v.is_array() || (!allow_empty && v.empty())) return false;
  return std::all_of(v.begin(), v.end(), [](const Json& e) { return is_non_empty_string(e); });
}

// "Suite.Name": two C++ identifiers joined by one dot.
bool is_test_name(std::string_view s) {
  const auto dot = s.find('.');
  if (dot == std::string_view::npos || dot == 0 || dot + 1 == s.size()) return false;
  auto ident = [](std::string_view part) {
    return is_ident_start(part.front()) && std::all_of(part.begin(), part.end(), is_ident_char);
  };
  return ident(s.substr(0, dot)) && ident(s.substr(dot + 1));
}

bool is_known_state(std::string_view state) {
  return std::find(std::begin(kStates), std::end(kStates), state) != std::end(kStates);
}

void require_string(const Json& entry, const char* key, const std::string& where, Problems& out) {
  if (!entry.contains(key)) {
    out.push_back(where + ": missing \"" + key + "\"");
  } else if (!is_non_empty_string(entry[key])) {
    out.push_back(where + ": \"" + key + "\" must be a non-empty string");
  }
}

void check_tests(const Json& entry, const std::string& where, Problems& out) {
  if (!entry.contains("tests")) {
    out.push_back(where + ": missing \"tests\"");
    return;
  }
  const Json& tests = entry["tests"];
  if (!is_string_array(tests, /*allow_empty=*/false)) {
    out.push_back(where + ": \"tests\" must be a non-empty array of \"Suite.Name\" strings");
    return;
  }
  std::set<std::string> seen;
  for (const Json& t : tests) {
    const auto& name = t.get_ref<const std::string&>();
    if (!is_test_name(name)) out.push_back(where + ": test \"" + name + "\" is not Suite.Name");
    if (!seen.insert(name).second) out.push_back(where + ": test \"" + name + "\" listed twice");
  }
}

// divergence: null (or absent), a sentence, or a list of sentences.
bool has_divergence(const Json& entry, const std::string& where, Problems& out) {
  if (!entry.contains("divergence") || entry["divergence"].is_null()) return false;
  const Json& d = entry["divergence"];
  if (!is_non_empty_string(d) && !is_string_array(d, /*allow_empty=*/true)) {
    out.push_back(where + ": \"divergence\" must be null, a string or an array of strings");
  }
  return !(d.is_array() && d.empty());
}

void check_route_shape(const Json& entry, const std::string& where, Problems& out) {
  static const std::set<std::string> kMethods = {"GET", "POST", "PUT", "PATCH", "DELETE"};
  if (!entry.contains("method") || !entry["method"].is_string() ||
      kMethods.count(entry["method"].get<std::string>()) == 0) {
    out.push_back(where + ": \"method\" must be one of GET, POST, PUT, PATCH, DELETE");
  }
  const bool path_ok =
      entry.contains("path") && is_non_empty_string(entry["path"]) &&
      (entry["path"].get<std::string>()[0] == '/' || entry["path"].get<std::string>()[0] == '$');
  if (!path_ok) out.push_back(where + ": \"path\" must start with '/' (or '$' for a variable)");
  if (entry.contains("aliases_of") && !is_non_empty_string(entry["aliases_of"])) {
    out.push_back(where + ": \"aliases_of\" must be the path of the shared handler");
  }
  if (entry.contains("refusal")) {
    const Json& r = entry["refusal"];
    const bool ok = r.is_object() && r.contains("status") && r["status"].is_number_integer() &&
                    r["status"].get<int>() >= 400 && r["status"].get<int>() <= 599;
    if (!ok) out.push_back(where + ": \"refusal\" must be {\"status\": 4xx or 5xx}");
  }
}

void check_state(Area area, const Json& entry, const std::string& where, Problems& out) {
  if (!entry.contains("state") || !entry["state"].is_string()) {
    out.push_back(where + ": missing \"state\"");
    return;
  }
  const std::string state = entry["state"].get<std::string>();
  if (!is_known_state(state)) {
    out.push_back(where + ": unknown state \"" + state +
                  "\" (supported, no_effect, aliased, deferred, not_applicable)");
    return;
  }
  if (entry.contains("issue") &&
      !(entry["issue"].is_number_integer() && entry["issue"].get<long long>() > 0)) {
    out.push_back(where + ": \"issue\" must be a positive integer");
  }
  if (entry.contains("reason") && !is_non_empty_string(entry["reason"])) {
    out.push_back(where + ": \"reason\" must be a non-empty string");
  }
  const bool diverges = has_divergence(entry, where, out);
  if (state == "supported" && diverges) {
    out.push_back(where + ": supported entries carry no divergence; use another state or " +
                  "differences.json");
  }
  if (state == "deferred" && !entry.contains("issue")) {
    out.push_back(where + ": deferred entries name the implementing issue (integer \"issue\")");
  }
  if (state == "no_effect" && !is_non_empty_string(entry.value("note", Json()))) {
    out.push_back(where + ": no_effect entries say what is ignored and why (\"note\")");
  }
  if (state == "not_applicable" || state == "deferred") {
    if (!entry.contains("reason")) {
      out.push_back(where + ": " + state + " needs a \"reason\" (what is missing, or why)");
    }
    if (area == Area::kRoutes && !entry.contains("refusal")) {
      out.push_back(where + ": " + state + " routes need \"refusal\": {\"status\": N}");
    }
  } else if (area == Area::kRoutes && entry.contains("refusal")) {
    out.push_back(where +
                  ": \"refusal\" belongs to refused (deferred, not_applicable) routes only");
  }
  if (state == "aliased") {
    const bool ok = entry.contains("hearth_spelling") &&
                    (is_non_empty_string(entry["hearth_spelling"]) ||
                     is_string_array(entry["hearth_spelling"], /*allow_empty=*/false));
    if (!ok) out.push_back(where + ": aliased entries need \"hearth_spelling\" (Hearth's name)");
  }
}

}  // namespace

Area area_of_file(std::string_view file_name) {
  if (file_name == "routes.json") return Area::kRoutes;
  if (file_name == "fields.json") return Area::kFields;
  if (file_name == "options.json") return Area::kOptions;
  if (file_name == "differences.json") return Area::kDifferences;
  return Area::kOther;
}

const Json* entries_of(const Json& doc) {
  if (doc.is_array()) return &doc;
  if (doc.is_object() && doc.contains("entries") && doc["entries"].is_array()) {
    return &doc["entries"];
  }
  return nullptr;
}

std::string entry_key(Area area, const Json& entry) {
  auto str = [&](const char* key) {
    return entry.is_object() && entry.contains(key) && entry[key].is_string()
               ? entry[key].get<std::string>()
               : std::string();
  };
  if (area == Area::kRoutes) {
    const std::string method = str("method");
    const std::string path = str("path");
    return method.empty() || path.empty() ? std::string() : method + " " + path;
  }
  if (area == Area::kDifferences) return str("id");
  // Another body's field: one name may be in several tables.
  if (area == Area::kFields && !str("route").empty()) return str("route") + " " + str("name");
  return str("name");
}

void check_entry(Area area, const Json& entry, const std::string& where, Problems& out) {
  if (!entry.is_object()) {
    out.push_back(where + ": an entry must be a JSON object");
    return;
  }
  if (area == Area::kDifferences) {
    for (const char* key :
         {"id", "area", "what", "reference_behaviour", "hearth_behaviour", "reason"}) {
      require_string(entry, key, where, out);
    }
    check_tests(entry, where, out);
    return;
  }
  if (area == Area::kRoutes) {
    check_route_shape(entry, where, out);
  } else {
    require_string(entry, "name", where, out);
  }
  if (area == Area::kFields && !entry.contains("aliases")) {
    out.push_back(where + ": missing \"aliases\" (use [] when there are none)");
  }
  if (entry.contains("aliases") && !is_string_array(entry["aliases"], /*allow_empty=*/true)) {
    out.push_back(where + ": \"aliases\" must be an array of strings");
  }
  check_state(area, entry, where, out);
  check_tests(entry, where, out);
}

void check_area_document(Area area, const Json& doc, const std::string& file, Problems& out) {
  const Json* entries = entries_of(doc);
  if (entries == nullptr) {
    out.push_back(file + ": expected an object with an \"entries\" array (or a bare array)");
    return;
  }
  // Every spelling a client may send must identify one entry: names, and field aliases.
  std::map<std::string, std::string> owners;
  for (size_t i = 0; i < entries->size(); ++i) {
    const Json& entry = (*entries)[i];
    const std::string key = entry_key(area, entry);
    const std::string where = file + "[" + std::to_string(i) + "]" + (key.empty() ? "" : " ") + key;
    check_entry(area, entry, where, out);
    if (key.empty()) continue;
    std::vector<std::string> spellings = {key};
    if (area == Area::kFields && entry.contains("aliases") && entry["aliases"].is_array()) {
      for (const Json& a : entry["aliases"]) {
        if (a.is_string()) spellings.push_back(a.get<std::string>());
      }
    }
    for (const std::string& s : spellings) {
      auto [it, inserted] = owners.emplace(s, where);
      if (!inserted) out.push_back(where + ": \"" + s + "\" already used by " + it->second);
    }
  }
}

void check_route_aliases(const Json& doc, Problems& out) {
  const Json* entries = entries_of(doc);
  if (entries == nullptr) return;
  std::map<std::string, const Json*> by_key;
  for (const Json& e : *entries) by_key[entry_key(Area::kRoutes, e)] = &e;
  for (const Json& e : *entries) {
    if (!e.is_object() || !e.contains("aliases_of") || !e["aliases_of"].is_string()) continue;
    const std::string key = entry_key(Area::kRoutes, e);
    const std::string method = e.value("method", "");
    const std::string target = method + " " + e["aliases_of"].get<std::string>();
    auto it = by_key.find(target);
    if (target == key) {
      out.push_back("routes.json " + key + ": aliases_of names the entry itself");
    } else if (it == by_key.end()) {
      out.push_back("routes.json " + key + ": aliases_of names no entry " + target);
    } else if (it->second->contains("aliases_of")) {
      out.push_back("routes.json " + key + ": aliases_of names " + target +
                    ", itself an alias; name the route that owns the handler");
    }
  }
}

std::vector<TestReference> named_tests(Area area, const Json& doc, const std::string& file) {
  std::vector<TestReference> refs;
  const Json* entries = entries_of(doc);
  if (entries == nullptr) return refs;
  for (const Json& e : *entries) {
    if (!e.is_object() || !e.contains("tests") || !e["tests"].is_array()) continue;
    for (const Json& t : e["tests"]) {
      if (t.is_string()) refs.push_back({t.get<std::string>(), file + " " + entry_key(area, e)});
    }
  }
  return refs;
}

std::set<std::string> scan_test_declarations(std::string_view src) {
  static const std::set<std::string_view> kMacros = {"TEST", "TEST_F", "TEST_P", "TYPED_TEST",
                                                     "TYPED_TEST_P"};
  std::set<std::string> names;
  size_t i = 0;
  auto skip_space = [&] {
    while (i < src.size() && std::isspace(static_cast<unsigned char>(src[i])) != 0) ++i;
  };
  auto read_ident = [&]() -> std::string_view {
    const size_t start = i;
    if (i < src.size() && is_ident_start(src[i])) {
      while (i < src.size() && is_ident_char(src[i])) ++i;
    }
    return src.substr(start, i - start);
  };
  while (i < src.size()) {
    if (!is_ident_start(src[i]) || (i > 0 && is_ident_char(src[i - 1]))) {
      ++i;
      continue;
    }
    const std::string_view word = read_ident();
    if (kMacros.count(word) == 0) continue;
    skip_space();
    if (i >= src.size() || src[i] != '(') continue;
    ++i;
    skip_space();
    const std::string_view suite = read_ident();
    skip_space();
    if (suite.empty() || i >= src.size() || src[i] != ',') continue;
    ++i;
    skip_space();
    const std::string_view name = read_ident();
    skip_space();
    if (name.empty() || i >= src.size() || src[i] != ')') continue;
    names.insert(std::string(suite) + "." + std::string(name));
  }
  return names;
}

std::vector<std::string> markdown_section(std::string_view text, std::string_view heading) {
  std::vector<std::string> lines;
  bool inside = false;
  size_t pos = 0;
  while (pos <= text.size()) {
    size_t end = text.find('\n', pos);
    if (end == std::string_view::npos) end = text.size();
    const std::string_view line = text.substr(pos, end - pos);
    pos = end + 1;
    const bool level2 = line.rfind("## ", 0) == 0;
    if (level2) {
      if (inside) break;
      inside = line.rfind(heading, 0) == 0;
      continue;
    }
    if (inside) lines.emplace_back(line);
  }
  return lines;
}

std::vector<std::string> table_cells(std::string_view line) {
  std::vector<std::string> cells;
  line = trim(line);
  if (line.size() < 2 || line.front() != '|') return cells;
  std::string cell;
  for (size_t i = 1; i < line.size(); ++i) {
    if (line[i] == '\\' && i + 1 < line.size() && line[i + 1] == '|') {
      cell += "\\|";
      ++i;
    } else if (line[i] == '|') {
      cells.emplace_back(trim(cell));
      cell.clear();
    } else {
      cell += line[i];
    }
  }
  if (!trim(cell).empty()) cells.emplace_back(trim(cell));
  return cells;
}

std::vector<std::string> backtick_spans(std::string_view text) {
  std::vector<std::string> spans;
  size_t pos = 0;
  while (true) {
    const size_t open = text.find('`', pos);
    if (open == std::string_view::npos) break;
    const size_t close = text.find('`', open + 1);
    if (close == std::string_view::npos) break;
    spans.emplace_back(text.substr(open + 1, close - open - 1));
    pos = close + 1;
  }
  return spans;
}

namespace {

bool is_separator_row(const std::vector<std::string>& cells) {
  return !cells.empty() && cells[0].find("---") != std::string::npos;
}

}  // namespace

std::vector<std::string> spec_field_names(std::string_view markdown) {
  std::vector<std::string> names;
  std::set<std::string> seen;
  for (const std::string& line : markdown_section(markdown, "## 3.")) {
    const auto cells = table_cells(line);
    if (cells.empty() || is_separator_row(cells)) continue;
    if (cells[0].find("not counted") != std::string::npos) continue;
    const auto spans = backtick_spans(cells[0]);
    if (spans.empty()) continue;  // the header row ("Field")
    if (seen.insert(spans[0]).second) names.push_back(spans[0]);
  }
  return names;
}

std::vector<std::vector<std::string>> spec_option_rows(std::string_view markdown) {
  std::vector<std::vector<std::string>> rows;
  for (const std::string& line : markdown_section(markdown, "## 9.")) {
    const auto cells = table_cells(line);
    // Columns: star, Spellings, Value, Env, Default, Meaning, CPU-only.
    if (cells.size() < 2 || is_separator_row(cells)) continue;
    std::vector<std::string> spellings;
    for (const std::string& s : backtick_spans(cells[1])) {
      if (!s.empty() && s[0] == '-') spellings.push_back(s);
    }
    if (!spellings.empty()) rows.push_back(std::move(spellings));
  }
  return rows;
}

std::set<std::string> spec_route_pairs(std::string_view markdown) {
  static const std::set<std::string> kMethods = {"GET", "POST", "PUT", "PATCH", "DELETE"};
  std::set<std::string> pairs;
  for (const std::string& line : markdown_section(markdown, "## 1.")) {
    const auto cells = table_cells(line);
    if (cells.size() < 3 || is_separator_row(cells)) continue;
    std::vector<std::string> methods;
    std::string_view m = cells[0];
    while (!m.empty()) {
      const size_t comma = m.find(',');
      const std::string one(trim(m.substr(0, comma)));
      if (kMethods.count(one) != 0) methods.push_back(one);
      m = comma == std::string_view::npos ? std::string_view() : m.substr(comma + 1);
    }
    // The path and its aliases sit in the second and third columns.
    for (size_t c = 1; c <= 2; ++c) {
      for (const std::string& span : backtick_spans(cells[c])) {
        if (span.empty() || (span[0] != '/' && span[0] != '$')) continue;
        for (const std::string& method : methods) pairs.insert(method + " " + span);
      }
    }
  }
  return pairs;
}

std::vector<std::string> option_spellings(std::string_view name) {
  std::vector<std::string> out;
  std::string token;
  auto flush = [&] {
    if (!token.empty() && token[0] == '-') out.push_back(token);
    token.clear();
  };
  for (char c : name) {
    if (c == ',' || c == '/' || c == '|' || c == '`' ||
        std::isspace(static_cast<unsigned char>(c)) != 0) {
      flush();
    } else {
      token += c;
    }
  }
  flush();
  return out;
}

}  // namespace hearth::compat
