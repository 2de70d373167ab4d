// The manifest rules on small inputs: each obligation is caught, and the scanners read the
// shapes the spec and the test sources use.
#include <gtest/gtest.h>

#include "compat/manifest_rules.h"

namespace hearth::compat {
namespace {

Problems check(Area area, const Json& entry) {
  Problems problems;
  check_entry(area, entry, "e", problems);
  return problems;
}

bool mentions(const Problems& problems, std::string_view text) {
  for (const std::string& p : problems) {
    if (p.find(text) != std::string::npos) return true;
  }
  return false;
}

Json field(const std::string& state) {
  return {{"name", "top_k"},
          {"aliases", Json::array()},
          {"state", state},
          {"divergence", nullptr},
          {"tests", {"Suite.Name"}}};
}

TEST(CompatRules, SupportedFieldWithTestsPasses) {
  EXPECT_TRUE(check(Area::kFields, field("supported")).empty());
}

TEST(CompatRules, SupportedEntryMayNotDiverge) {
  Json e = field("supported");
  e["divergence"] = "answers differently";
  EXPECT_TRUE(mentions(check(Area::kFields, e), "no divergence"));
}

TEST(CompatRules, DeferredNeedsAnIntegerIssue) {
  Json e = field("deferred");
  EXPECT_TRUE(mentions(check(Area::kFields, e), "issue"));
  e["issue"] = "5";
  EXPECT_TRUE(mentions(check(Area::kFields, e), "positive integer"));
  e["issue"] = 5;
  EXPECT_TRUE(mentions(check(Area::kFields, e), "what is missing"));
  e["reason"] = "LoRA adapters are not implemented";
  EXPECT_TRUE(check(Area::kFields, e).empty());
}

TEST(CompatRules, NoEffectSaysWhatIsIgnored) {
  Json e = {{"name", "--gpu-layers"},
            {"state", "no_effect"},
            {"divergence", nullptr},
            {"tests", {"A.B"}}};
  EXPECT_TRUE(mentions(check(Area::kOptions, e), "note"));
  e["note"] = "a CPU-only build";
  EXPECT_TRUE(check(Area::kOptions, e).empty());
}

TEST(CompatRules, NotApplicableNeedsAReasonAndRoutesARefusal) {
  EXPECT_TRUE(mentions(check(Area::kFields, field("not_applicable")), "reason"));
  Json route = {{"method", "GET"},       {"path", "/v1/stream"},  {"state", "not_applicable"},
                {"reason", "no buffer"}, {"divergence", nullptr}, {"tests", {"A.B"}}};
  EXPECT_TRUE(mentions(check(Area::kRoutes, route), "refusal"));
  route["refusal"] = {{"status", 404}};
  EXPECT_TRUE(check(Area::kRoutes, route).empty());
  route["refusal"] = {{"status", 200}};
  EXPECT_TRUE(mentions(check(Area::kRoutes, route), "4xx or 5xx"));
}

TEST(CompatRules, AliasedNeedsTheHearthSpelling) {
  Json e = {{"name", "--foo"}, {"state", "aliased"}, {"tests", {"A.B"}}};
  EXPECT_TRUE(mentions(check(Area::kOptions, e), "hearth_spelling"));
  e["hearth_spelling"] = "--hearth-foo";
  EXPECT_TRUE(check(Area::kOptions, e).empty());
}

TEST(CompatRules, UnknownStatesAndBadTestNamesAreReported) {
  Json e = field("partial");
  e["tests"] = {"not a test"};
  const Problems problems = check(Area::kFields, e);
  EXPECT_TRUE(mentions(problems, "unknown state"));
  EXPECT_TRUE(mentions(problems, "Suite.Name"));
  e = field("supported");
  e["tests"] = Json::array();
  EXPECT_TRUE(mentions(check(Area::kFields, e), "non-empty"));
}

TEST(CompatRules, NamesAndAliasesAreUnique) {
  Json a = field("supported");
  a["aliases"] = {"k"};
  Json b = field("supported");
  b["name"] = "k";
  Problems problems;
  check_area_document(Area::kFields, Json{{"entries", {a, b}}}, "fields.json", problems);
  EXPECT_TRUE(mentions(problems, "\"k\" already used"));
}

TEST(CompatRules, RouteAliasesMustNameAnOwner) {
  const Json doc = {{"entries",
                     {{{"method", "GET"}, {"path", "/health"}},
                      {{"method", "GET"}, {"path", "/v1/health"}, {"aliases_of", "/health"}},
                      {{"method", "GET"}, {"path", "/x"}, {"aliases_of", "/v1/health"}},
                      {{"method", "POST"}, {"path", "/y"}, {"aliases_of", "/health"}}}}};
  Problems problems;
  check_route_aliases(doc, problems);
  ASSERT_EQ(problems.size(), 2u);
  EXPECT_TRUE(mentions(problems, "itself an alias"));
  EXPECT_TRUE(mentions(problems, "names no entry POST /health"));
}

TEST(CompatRules, ScansEveryTestMacro) {
  // Built from pieces so that this file does not declare the names it scans for.
  const std::string src = std::string("TE") + "ST(A, B) {}\nTE" + "ST_F(Fix,\n    Name) {}\n" +
                          "TE" + "ST_P(Param, Case) {}\nMY_TE" + "ST(No, Match)\n" + "TE" +
                          "ST(Broken x)\n";
  EXPECT_EQ(scan_test_declarations(src), (std::set<std::string>{"A.B", "Fix.Name", "Param.Case"}));
}

TEST(CompatRules, ReadsFieldTablesOfSectionThree) {
  const std::string md =
      "## 2. Before\n| Field | x |\n|---|---|\n| `early` | y |\n"
      "## 3. Request fields\n### 3.1 Sub\n| Field | Type |\n|---|---|\n"
      "| `prompt` | string \\| array |\n| `model` (not counted in the 74) | string |\n"
      "| `n_predict` | int |\n| `prompt` (infill meaning) | string |\n## 4. After\n| `late` |\n";
  EXPECT_EQ(spec_field_names(md), (std::vector<std::string>{"prompt", "n_predict"}));
}

TEST(CompatRules, ReadsOptionRowsAndRoutePairs) {
  const std::string cli =
      "## 9. Options\n| * | Spellings | Value |\n|---|---|---|\n"
      "| x | `-c`, `--ctx-size` | int |\n|  | `--mmap`, `--no-mmap` | bool pair |\n## 10. Gaps\n";
  const auto rows = spec_option_rows(cli);
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_EQ(rows[0], (std::vector<std::string>{"-c", "--ctx-size"}));
  EXPECT_EQ(option_spellings("-c, --ctx-size"), (std::vector<std::string>{"-c", "--ctx-size"}));
  const std::string readme =
      "## 1. Route table\n| Method | Path | Same handler |\n|---|---|---|\n"
      "| GET | `/health` | `/v1/health` |\n| GET, POST | `/tools` | 403 unless `--tools` |\n"
      "## 2. Conventions\n| GET | `/late` | x |\n";
  EXPECT_EQ(spec_route_pairs(readme),
            (std::set<std::string>{"GET /health", "GET /v1/health", "GET /tools", "POST /tools"}));
}

}  // namespace
}  // namespace hearth::compat
