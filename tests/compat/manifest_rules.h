// Rules of the llama-server compatibility manifest (compat/llama-server/<build>/*.json) and
// the scanners the validator needs: test declarations in the test sources, and the names the
// spec tables list. Pure functions over text and JSON, so the rules can be tested on small
// inputs; every check appends readable problems instead of stopping at the first one.
#pragma once

#include <nlohmann/json.hpp>

#include <set>
#include <string>
#include <string_view>
#include <vector>

namespace hearth::compat {

using Json = nlohmann::json;
using Problems = std::vector<std::string>;

// The kinds of area file; each has its own identity key and extra rules.
enum class Area { kRoutes, kFields, kOptions, kDifferences, kOther };

// "routes.json" -> kRoutes, ..., anything unknown -> kOther (checked with the common rules).
Area area_of_file(std::string_view file_name);

// The states an entry may be in.
inline constexpr std::string_view kStates[] = {"supported", "no_effect", "aliased", "deferred",
                                               "not_applicable"};

// The entry array of an area document: {"entries": [...]} or a bare array; nullptr otherwise.
const Json* entries_of(const Json& doc);

// The identity of one entry: "METHOD path" for routes, "id" for differences, "name"
// otherwise; empty when the entry lacks it.
std::string entry_key(Area area, const Json& entry);

// Schema and state obligations of one entry. `where` prefixes every problem
// ("routes.json[3] GET /slots").
void check_entry(Area area, const Json& entry, const std::string& where, Problems& out);

// The whole document: shape, every entry, unique identities (and unique field aliases).
void check_area_document(Area area, const Json& doc, const std::string& file, Problems& out);

// Route aliases: aliases_of names another entry's path with the same method, which is not
// itself an alias.
void check_route_aliases(const Json& doc, Problems& out);

// Every test named by an entry ("Suite.Name"), with the entries that name it.
struct TestReference {
  std::string test;
  std::string where;
};
std::vector<TestReference> named_tests(Area area, const Json& doc, const std::string& file);

// "Suite.Name" of every TEST/TEST_F/TEST_P/TYPED_TEST/TYPED_TEST_P declaration in a source.
std::set<std::string> scan_test_declarations(std::string_view source);

// The lines of a markdown document from the level-2 heading that starts with `heading`
// (e.g. "## 3.") up to the next level-2 heading.
std::vector<std::string> markdown_section(std::string_view text, std::string_view heading);

// Cells of a markdown table row ("| a | b \| c |" -> {"a", "b \| c"}); empty when the line
// is not a table row.
std::vector<std::string> table_cells(std::string_view line);

// The backtick-quoted spans of a text, in order.
std::vector<std::string> backtick_spans(std::string_view text);

// Field names of native-completion.md section 3: the first backticked name of the first
// cell of every table row, rows marked "not counted" left out, repeats dropped.
std::vector<std::string> spec_field_names(std::string_view markdown);

// cli.md section 9: one element per option row, holding the row's spellings.
std::vector<std::vector<std::string>> spec_option_rows(std::string_view markdown);

// README.md section 1: every (method, path) pair the route tables name ("GET /health").
std::set<std::string> spec_route_pairs(std::string_view markdown);

// The option spellings a name such as "-c, --ctx-size" or "--mmap/--no-mmap" holds.
std::vector<std::string> option_spellings(std::string_view name);

}  // namespace hearth::compat
