// The validator of compat/llama-server/b10621: every area file parses and follows the
// schema, every state meets its obligations, the counts match pin.json and the spec, and
// every test an entry names is declared somewhere under tests/. Each check collects all of
// its problems and reports them in one failure, so one run lists everything to fix.
#include <gtest/gtest.h>

#include <algorithm>

#include <filesystem>
#include <fstream>
#include <map>
#include <optional>
#include <sstream>

#include "compat/manifest_rules.h"
#include "support/test_paths.h"

namespace hearth::compat {
namespace {

namespace fs = std::filesystem;

constexpr const char* kBuild = "b10621";

fs::path source_dir() {
  return fs::path(HEARTH_SOURCE_DIR);
}
fs::path manifest_dir() {
  return source_dir() / "compat" / "llama-server" / kBuild;
}

std::optional<std::string> slurp(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return std::nullopt;
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

std::string join(const Problems& problems) {
  std::string text;
  for (const std::string& p : problems) text += "  " + p + "\n";
  return text;
}

void expect_none(const Problems& problems, const std::string& what) {
  EXPECT_TRUE(problems.empty()) << problems.size() << " problem(s) with " << what << ":\n"
                                << join(problems);
}

// The manifest as loaded once per process: pin.json and every area file it lists.
struct Manifest {
  std::optional<Json> pin;
  Problems load_problems;
  std::map<std::string, Json> files;  // file name -> document, for those that parsed

  const Json* file(const std::string& name) const {
    auto it = files.find(name);
    return it == files.end() ? nullptr : &it->second;
  }
};

std::optional<Json> parse_file(const fs::path& path, Problems& out) {
  const auto text = slurp(path);
  if (!text) {
    out.push_back(path.filename().string() + ": missing (" + path.string() + ")");
    return std::nullopt;
  }
  Json doc = Json::parse(*text, nullptr, /*allow_exceptions=*/false);
  if (doc.is_discarded()) {
    out.push_back(path.filename().string() + ": not valid JSON");
    return std::nullopt;
  }
  return doc;
}

const Manifest& manifest() {
  static const Manifest loaded = [] {
    Manifest m;
    m.pin = parse_file(manifest_dir() / "pin.json", m.load_problems);
    if (!m.pin || !m.pin->contains("files") || !(*m.pin)["files"].is_array()) return m;
    for (const Json& f : (*m.pin)["files"]) {
      if (!f.is_string()) continue;
      const std::string name = f.get<std::string>();
      if (auto doc = parse_file(manifest_dir() / name, m.load_problems)) m.files[name] = *doc;
    }
    return m;
  }();
  return loaded;
}

TEST(CompatManifest, PinNamesTheReferenceCountsAndFiles) {
  const Manifest& m = manifest();
  ASSERT_TRUE(m.pin.has_value()) << join(m.load_problems);
  const Json& pin = *m.pin;
  Problems problems;
  if (!pin.contains("reference") || pin["reference"].value("build", "") != kBuild) {
    problems.push_back(std::string("pin.json: reference.build must be \"") + kBuild + "\"");
  }
  const Json empty = Json::object();
  const Json& counts = pin.contains("counts") ? pin["counts"] : empty;
  for (const char* area : {"routes", "fields", "options"}) {
    if (!counts.contains(area) || !counts[area].is_number_unsigned()) {
      problems.push_back(std::string("pin.json: counts.") + area + " must be a count");
    }
  }
  std::set<std::string> listed;
  if (!pin.contains("files") || !pin["files"].is_array()) {
    problems.push_back("pin.json: \"files\" must list the area files");
  } else {
    for (const Json& f : pin["files"]) {
      if (!f.is_string() || !listed.insert(f.get<std::string>()).second) {
        problems.push_back("pin.json: files must be distinct file names");
      }
    }
  }
  for (const auto& [area, count] : counts.items()) {
    if (listed.count(area + ".json") == 0) {
      problems.push_back("pin.json: counts." + area + " has no file " + area + ".json in files");
    }
  }
  // Nothing in the folder escapes validation.
  for (const auto& item : fs::directory_iterator(manifest_dir())) {
    const std::string name = item.path().filename().string();
    if (item.path().extension() == ".json" && name != "pin.json" && listed.count(name) == 0) {
      problems.push_back("pin.json: files does not list " + name);
    }
  }
  expect_none(problems, "pin.json");
}

TEST(CompatManifest, EveryAreaFileParses) {
  expect_none(manifest().load_problems, "loading the manifest");
}

TEST(CompatManifest, EntriesFollowTheSchemaAndTheirStateRules) {
  const Manifest& m = manifest();
  ASSERT_FALSE(m.files.empty()) << join(m.load_problems);
  for (const auto& [name, doc] : m.files) {
    Problems problems;
    const Area area = area_of_file(name);
    check_area_document(area, doc, name, problems);
    if (area == Area::kRoutes) check_route_aliases(doc, problems);
    expect_none(problems, name);
  }
}

TEST(CompatManifest, CountsMatchThePin) {
  const Manifest& m = manifest();
  ASSERT_TRUE(m.pin.has_value() && m.pin->contains("counts")) << join(m.load_problems);
  Problems problems;
  for (const auto& [area, count] : (*m.pin)["counts"].items()) {
    const Json* doc = m.file(area + ".json");
    const Json* entries = doc == nullptr ? nullptr : entries_of(*doc);
    if (entries == nullptr) {
      problems.push_back(area + ".json: no entries to count (pin.json expects " + count.dump() +
                         ")");
    } else {
      // The pin counts the reference's own entries; fields.json's entries with a "route" are
      // the rows of Hearth's other body tables, which the spec does not count.
      const auto counted = static_cast<size_t>(std::count_if(
          entries->begin(), entries->end(), [](const Json& e) { return !e.contains("route"); }));
      if (Json(counted) != count) {
        problems.push_back(area + ".json: " + std::to_string(counted) +
                           " entries, pin.json counts " + count.dump());
      }
    }
  }
  expect_none(problems, "the counts");
}

TEST(CompatManifest, DeferredEntriesNameAnIssueThePinKnows) {
  const Manifest& m = manifest();
  ASSERT_TRUE(m.pin.has_value()) << join(m.load_problems);
  const Json& pin = *m.pin;
  Problems problems;
  for (const auto& [name, doc] : m.files) {
    const Json* entries = entries_of(doc);
    if (entries == nullptr) continue;
    for (const Json& e : *entries) {
      if (!e.is_object() || !e.contains("issue") || !e["issue"].is_number_integer()) continue;
      const std::string issue = std::to_string(e["issue"].get<long long>());
      if (!pin.contains("issues") || !pin["issues"].contains(issue)) {
        problems.push_back(name + " " + entry_key(area_of_file(name), e) + ": issue " + issue +
                           " is not listed in pin.json issues");
      }
    }
  }
  expect_none(problems, "the issue references");
}

// Every "Suite.Name" declared by the test sources of the repository.
std::set<std::string> declared_tests() {
  std::set<std::string> names;
  for (const auto& item : fs::recursive_directory_iterator(source_dir() / "tests")) {
    const auto ext = item.path().extension();
    if (!item.is_regular_file() || (ext != ".cpp" && ext != ".cc" && ext != ".cxx")) continue;
    if (auto text = slurp(item.path())) names.merge(scan_test_declarations(*text));
  }
  return names;
}

TEST(CompatManifest, EveryNamedTestExists) {
  const Manifest& m = manifest();
  ASSERT_FALSE(m.files.empty()) << join(m.load_problems);
  const std::set<std::string> declared = declared_tests();
  // Missing test -> the entries naming it, so one line per missing test.
  std::map<std::string, std::vector<std::string>> missing;
  for (const auto& [name, doc] : m.files) {
    for (const TestReference& ref : named_tests(area_of_file(name), doc, name)) {
      if (declared.count(ref.test) == 0) missing[ref.test].push_back(ref.where);
    }
  }
  Problems problems;
  for (const auto& [test, users] : missing) {
    std::string line = test + " (named by " + users.front();
    if (users.size() > 1) line += " and " + std::to_string(users.size() - 1) + " more";
    problems.push_back(line + ")");
  }
  expect_none(problems, "tests named by the manifest but declared nowhere under tests/");
}

std::optional<std::string> spec_text(const std::string& file) {
  return slurp(test::shared_path("spec/llama-server/" + file));
}

TEST(CompatManifest, FieldsAreTheSpecFields) {
  const auto spec = spec_text("native-completion.md");
  if (!spec) GTEST_SKIP() << "spec/llama-server/native-completion.md not present";
  const Json* doc = manifest().file("fields.json");
  ASSERT_NE(doc, nullptr) << join(manifest().load_problems);
  const std::vector<std::string> spec_names = spec_field_names(*spec);
  ASSERT_FALSE(spec_names.empty()) << "no field tables found in native-completion.md section 3";
  std::set<std::string> in_manifest;
  if (const Json* entries = entries_of(*doc)) {
    for (const Json& e : *entries) {
      // Entries with a route are the other bodies' tables (fields_manifest_test checks them).
      if (!e.contains("route")) in_manifest.insert(entry_key(Area::kFields, e));
    }
  }
  const std::set<std::string> in_spec(spec_names.begin(), spec_names.end());
  Problems problems;
  for (const std::string& n : in_spec) {
    if (in_manifest.count(n) == 0) problems.push_back("spec field missing from fields.json: " + n);
  }
  for (const std::string& n : in_manifest) {
    if (in_spec.count(n) == 0) problems.push_back("fields.json entry not in the spec: " + n);
  }
  const auto& pin = manifest().pin;
  if (pin && pin->contains("counts") && (*pin)["counts"].value("fields", 0u) != spec_names.size()) {
    problems.push_back("the spec lists " + std::to_string(spec_names.size()) +
                       " fields, pin.json counts a different number");
  }
  expect_none(problems, "fields.json against native-completion.md section 3");
}

TEST(CompatManifest, OptionsAreTheSpecOptions) {
  const auto spec = spec_text("cli.md");
  if (!spec) GTEST_SKIP() << "spec/llama-server/cli.md not present";
  const Json* doc = manifest().file("options.json");
  if (doc == nullptr) GTEST_SKIP() << "options.json not loaded (EveryAreaFileParses says why)";
  const auto rows = spec_option_rows(*spec);
  ASSERT_FALSE(rows.empty()) << "no option tables found in cli.md section 9";
  std::map<std::string, size_t> row_of;  // spelling -> row
  for (size_t r = 0; r < rows.size(); ++r) {
    for (const std::string& s : rows[r]) row_of[s] = r;
  }
  std::vector<std::vector<std::string>> claimed(rows.size());
  Problems problems;
  if (const Json* entries = entries_of(*doc)) {
    for (const Json& e : *entries) {
      const std::string name = entry_key(Area::kOptions, e);
      const auto spellings = option_spellings(name);
      if (spellings.empty()) problems.push_back("options.json: \"" + name + "\" names no option");
      std::set<size_t> rows_hit;
      for (const std::string& s : spellings) {
        auto it = row_of.find(s);
        if (it == row_of.end()) {
          problems.push_back("options.json \"" + name + "\": " + s + " is not in cli.md");
        } else {
          rows_hit.insert(it->second);
        }
      }
      if (rows_hit.size() > 1) {
        problems.push_back("options.json \"" + name + "\" mixes spellings of several options");
      }
      // An entry listing its spellings lists exactly the ones its cli.md row has.
      if (rows_hit.size() == 1 && e.contains("spellings") && e["spellings"].is_array()) {
        const auto& row = rows[*rows_hit.begin()];
        std::set<std::string> listed;
        for (const Json& sp : e["spellings"]) {
          if (sp.is_string()) listed.insert(sp.get<std::string>());
        }
        if (listed != std::set<std::string>(row.begin(), row.end())) {
          problems.push_back("options.json \"" + name + "\": spellings differ from cli.md's");
        }
      }
      for (size_t r : rows_hit) claimed[r].push_back(name);
    }
  }
  for (size_t r = 0; r < rows.size(); ++r) {
    if (claimed[r].empty()) {
      problems.push_back("cli.md option " + rows[r].back() + " has no options.json entry");
    } else if (claimed[r].size() > 1) {
      problems.push_back("cli.md option " + rows[r].back() + " has " +
                         std::to_string(claimed[r].size()) + " options.json entries");
    }
  }
  expect_none(problems, "options.json against cli.md section 9");
}

TEST(CompatManifest, RoutesAreTheSpecRoutes) {
  const auto spec = spec_text("README.md");
  if (!spec) GTEST_SKIP() << "spec/llama-server/README.md not present";
  const Json* doc = manifest().file("routes.json");
  ASSERT_NE(doc, nullptr) << join(manifest().load_problems);
  const std::set<std::string> pairs = spec_route_pairs(*spec);
  ASSERT_FALSE(pairs.empty()) << "no route tables found in README.md section 1";
  Problems problems;
  if (const Json* entries = entries_of(*doc)) {
    for (const Json& e : *entries) {
      const std::string key = entry_key(Area::kRoutes, e);
      if (pairs.count(key) == 0) problems.push_back("routes.json " + key + " is not in README.md");
    }
  }
  expect_none(problems, "routes.json against README.md section 1");
}

}  // namespace
}  // namespace hearth::compat
