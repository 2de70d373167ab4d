// Conversion errors (spec 5.9), hostile inputs and limits, and the text-level contract.
#include <gtest/gtest.h>

#include <sstream>

#include "schema_cases.h"

namespace hearth::json_schema::testing {
namespace {

constexpr const char* kPrefix = "JSON schema conversion failed:\n";

TEST(JsonSchemaErrors, UnrecognizedType) {
  EXPECT_EQ(conversion_error(R"({"type":"foo"})"),
            std::string(kPrefix) + R"(Unrecognized schema: {"type":"foo"})");
  EXPECT_EQ(conversion_error(R"({"type":5})"),
            std::string(kPrefix) + R"(Unrecognized schema: {"type":5})");
  EXPECT_EQ(conversion_error(R"({"type":["null","bar"]})"),
            std::string(kPrefix) + R"(Unrecognized schema: {"type":"bar"})");
  // Every error is listed, one per line.
  EXPECT_EQ(conversion_error(R"({"properties":{"a":{"type":"x"},"b":{"type":"y"}}})"),
            std::string(kPrefix) +
                "Unrecognized schema: {\"type\":\"x\"}\nUnrecognized schema: {\"type\":\"y\"}");
}

TEST(JsonSchemaErrors, Refs) {
  EXPECT_EQ(conversion_error(R"({"$ref":"https://example.com/s.json#/defs/a"})"),
            std::string(kPrefix) +
                "Error resolving ref https://example.com/s.json#/defs/a: defs not in null");
  // A missing target behind a root $ref is named once, as the others are.
  EXPECT_EQ(conversion_error(R"({"$defs":{"a":{"$ref":"#/$defs/zz"}},"$ref":"#/$defs/a"})"),
            std::string(kPrefix) +
                R"(Error resolving ref #/$defs/zz: zz not in {"a":{"$ref":"#/$defs/zz"}})");
  EXPECT_EQ(
      conversion_error(R"({"$ref":"#/$defs/Missing","$defs":{"A":{}}})"),
      std::string(kPrefix) + R"(Error resolving ref #/$defs/Missing: Missing not in {"A":{}})");
  EXPECT_EQ(conversion_error(R"({"$ref":"#/$defs/L/2","$defs":{"L":[1,2]}})"),
            std::string(kPrefix) + "Error resolving ref #/$defs/L/2: 2 not in [1,2]");
  EXPECT_EQ(conversion_error(R"({"$ref":"other.json"})"),
            std::string(kPrefix) + "Unsupported ref: other.json");
  EXPECT_EQ(conversion_error(R"({"$ref":"#"})"), std::string(kPrefix) + "Unsupported ref: #");
  EXPECT_EQ(conversion_error(R"({"$ref":"http://x/y.json"})"),
            std::string(kPrefix) + "Unsupported ref: http://x/y.json");
  // Unused refs are resolved too, like the reference does.
  EXPECT_NE(
      conversion_error(R"({"type":"null","$defs":{"x":{"$ref":"#/nope"}}})").find("nope not in"),
      std::string::npos);
}

TEST(JsonSchemaErrors, RefCyclesTerminate) {
  for (
      const char* schema : {
          R"({"$defs":{"a":{"$ref":"#/$defs/a"}},"$ref":"#/$defs/a"})",
          R"({"$defs":{"a":{"$ref":"#/$defs/b"},"b":{"anyOf":[{"$ref":"#/$defs/a"},{"type":"null"}]}},"$ref":"#/$defs/a"})",
          R"({"anyOf":[{"$ref":"#/anyOf/0"}]})",
          R"({"type":"object","allOf":[{"$ref":"#/$defs/a"}],"$defs":{"a":{"$ref":"#/$defs/a"}}})",
      }) {
    SCOPED_TRACE(schema);
    EXPECT_EQ(conversion_error(schema).rfind(kPrefix, 0), 0u);
  }
  // A cycle through an object or array consumes input: fine.
  load(R"({"$defs":{"a":{"type":"array","items":{"$ref":"#/$defs/a"}}},"$ref":"#/$defs/a"})");
}

TEST(JsonSchemaErrors, InvalidPatterns) {
  const std::pair<const char*, const char*> cases[] = {
      {R"({"pattern":"^(a$"})", "unbalanced parentheses"},
      {R"({"pattern":"^a)$"})", "unbalanced parentheses"},
      {R"({"pattern":"^*a$"})", "nothing to repeat"},
      {R"({"pattern":"^(|+)$"})", "nothing to repeat"},
      {R"({"pattern":"^a**$"})", "nothing to repeat"},
      {R"({"pattern":"^[a$"})", "unterminated character class"},
      {R"({"pattern":"^a\\$"})", "trailing backslash"},
      {R"({"pattern":"^[z-a]$"})", "range out of order"},
      {R"({"pattern":"^a{3,2}$"})", "out of order"},
      {R"({"pattern":"^a{2500}$"})", "exceeds the grammar limit"},
  };
  for (const auto& [schema, why] : cases) {
    SCOPED_TRACE(schema);
    const std::string message = conversion_error(schema);
    EXPECT_EQ(message.rfind(std::string(kPrefix) + "Invalid pattern ", 0), 0u) << message;
    EXPECT_NE(message.find(why), std::string::npos) << message;
  }
}

TEST(JsonSchemaErrors, UnsupportedPatternsWarn) {
  for (const char* p : {"^\\d$", "^a\\\\b$", "^(?<n>a)$", "^a$b$", "^[\\w]$", "^a{x}$", "^a+?$",
                        "^[]$", "^(a?)+$"}) {
    SCOPED_TRACE(p);
    nlohmann::ordered_json schema = {{"pattern", p}};
    auto r = convert(schema);
    ASSERT_TRUE(r.is_ok()) << r.status().message();
    ASSERT_EQ(r->warnings.size(), 1u);
    EXPECT_NE(r->gbnf.find("root ::= string"), std::string::npos) << r->gbnf;
  }
  // Deep nesting degrades, but a syntax error past the nesting limit is still an error.
  std::string deep = "^" + std::string(150, '(') + "a" + std::string(150, ')') + "$";
  auto r = convert(nlohmann::ordered_json{{"pattern", deep}});
  ASSERT_TRUE(r.is_ok());
  EXPECT_EQ(r->warnings.size(), 1u);
  EXPECT_FALSE(
      convert(nlohmann::ordered_json{{"pattern", "^" + std::string(150, '(') + "$"}}).is_ok());
  std::string ok_deep = "^" + std::string(90, '(') + "a" + std::string(90, ')') + "$";
  load(nlohmann::ordered_json{{"pattern", ok_deep}}.dump());
}

TEST(JsonSchemaLimits, DeepNesting) {
  std::string schema;
  for (int i = 0; i < 300; ++i) schema += R"({"items":)";
  schema += "{}";
  for (int i = 0; i < 300; ++i) schema += "}";
  EXPECT_NE(conversion_error(schema).find("schema nesting too deep"), std::string::npos);
  std::string deep_const = R"({"const":)" + std::string(1000, '[') + std::string(1000, ']') + "}";
  EXPECT_NE(conversion_error(deep_const).find("schema nesting too deep"), std::string::npos);
  // A long chain of distinct $refs counts towards the visit depth as well.
  nlohmann::ordered_json chain;
  for (int i = 0; i < 300; ++i) {
    chain["$defs"]["d" + std::to_string(i)] = {
        {"type", "array"}, {"items", {{"$ref", "#/$defs/d" + std::to_string(i + 1)}}}};
  }
  chain["$defs"]["d300"] = {{"type", "null"}};
  chain["$ref"] = "#/$defs/d0";
  EXPECT_FALSE(convert(chain).is_ok());
  // 50 levels are fine.
  std::string ok;
  for (int i = 0; i < 50; ++i) ok += R"({"type":"array","items":)";
  ok += R"({"type":"null"})";
  for (int i = 0; i < 50; ++i) ok += "}";
  auto g = load(ok);
  ASSERT_NE(g, nullptr);
  EXPECT_TRUE(grammar::accepts(g, std::string(50, '[') + "null" + std::string(50, ']')));
}

TEST(JsonSchemaLimits, RepetitionCounts) {
  EXPECT_NE(
      conversion_error(R"({"type":"string","minLength":5000})").find("minLength 5000 exceeds"),
      std::string::npos);
  EXPECT_NE(conversion_error(R"({"type":"string","minLength":2000})").find("exceeds"),
            std::string::npos);
  load(R"({"type":"string","minLength":1999})");
  load(R"({"type":"string","maxLength":1999})");
  load(R"({"type":"string","maxLength":2000})");
  load(R"({"type":"string","maxLength":18446744073709551615})");
  EXPECT_NE(conversion_error(R"({"items":{},"minItems":3000})").find("minItems"),
            std::string::npos);
  load(R"({"items":{},"minItems":2000})");
  load(R"({"items":{"type":"null"},"maxItems":1999})");
  load(R"({"items":{"type":"null"},"maxItems":2000})");
  load(R"({"items":{"type":"null"},"maxItems":2001})");
  EXPECT_NE(conversion_error(R"({"type":"string","minLength":5,"maxLength":2})").find("greater"),
            std::string::npos);
  EXPECT_NE(conversion_error(R"({"items":{},"minItems":5,"maxItems":2})").find("greater"),
            std::string::npos);
  EXPECT_NE(conversion_error(R"({"items":{},"maxItems":-1})").find("greater"), std::string::npos);
  // Negative or fractional counts: clamped / truncated.
  load(R"({"type":"string","minLength":-3,"maxLength":2.9})");
}

TEST(JsonSchemaLimits, GrammarSizeIsCheckedBeforeTheParser) {
  // Each bounded string expands to ~1999 rules in the parser: 20 of them exceed its limit.
  nlohmann::ordered_json schema = {{"type", "object"}};
  for (int i = 0; i < 20; ++i) {
    schema["properties"]["p" + std::to_string(i)] = {{"type", "string"}, {"maxLength", 1999 - i}};
  }
  auto r = convert(schema);
  ASSERT_FALSE(r.is_ok());
  EXPECT_NE(r.status().message().find("schema too large for a grammar"), std::string::npos);
}

TEST(JsonSchemaLimits, WideSchemas) {
  nlohmann::ordered_json values = nlohmann::ordered_json::array();
  for (int i = 0; i < 5000; ++i) values.push_back("v" + std::to_string(i));
  auto g = load(nlohmann::ordered_json{{"enum", values}}.dump());
  ASSERT_NE(g, nullptr);
  EXPECT_TRUE(grammar::accepts(g, "\"v4999\""));
  EXPECT_FALSE(grammar::accepts(g, "\"v5000\""));

  // Many optional properties plus additional keys: no `?` over a huge group. (Far wider
  // objects load too, but the matcher's stack limit caps how many optional members can be
  // live at once: about 1300.)
  nlohmann::ordered_json obj = {{"additionalProperties", {{"type", "integer"}}}};
  for (int i = 0; i < 1000; ++i) obj["properties"]["k" + std::to_string(i)] = {{"type", "null"}};
  g = load(obj.dump());
  ASSERT_NE(g, nullptr);
  EXPECT_TRUE(grammar::accepts(g, R"({"k3":null,"k999":null,"k15000":1})"));
  EXPECT_FALSE(grammar::accepts(g, R"({"k3":1})"));

  // A very long property name: the key trie spills into extra rules.
  const std::string long_name(5000, 'n');
  nlohmann::ordered_json named = {{"properties", {{long_name, {{"type", "null"}}}}},
                                  {"additionalProperties", true}};
  g = load(named.dump());
  ASSERT_NE(g, nullptr);
  EXPECT_TRUE(grammar::accepts(g, "{\"" + long_name + "\":null}"));
  EXPECT_TRUE(grammar::accepts(g, "{\"" + long_name + "n\":1}"));
  EXPECT_TRUE(grammar::accepts(g, "{\"" + long_name.substr(1) + "\":1}"));
  EXPECT_FALSE(grammar::accepts(g, "{\"" + long_name + "\":1}"));
}

TEST(JsonSchemaLimits, IntegerExtremes) {
  EXPECT_NE(conversion_error(R"({"type":"integer","minimum":5,"maximum":4})").find("empty"),
            std::string::npos);
  EXPECT_FALSE(convert(nlohmann::ordered_json::parse(
                           R"({"type":"integer","exclusiveMinimum":9223372036854775807})"))
                   .is_ok());
  EXPECT_FALSE(convert(nlohmann::ordered_json::parse(
                           R"({"type":"integer","exclusiveMaximum":-9223372036854775808})"))
                   .is_ok());
  auto g = load(R"({"type":"integer","maximum":-9223372036854775808})");
  ASSERT_NE(g, nullptr);
  EXPECT_TRUE(grammar::accepts(g, "-9223372036854775808"));
  EXPECT_TRUE(grammar::accepts(g, "-9999999999999999999"));
  EXPECT_FALSE(grammar::accepts(g, "-9223372036854775807"));
  g = load(R"({"type":"integer","minimum":1e300})");
  ASSERT_NE(g, nullptr);  // clamped to INT64_MAX, the "no bound" sentinel
  g = load(R"({"type":"integer","minimum":18446744073709551615,"maximum":18446744073709551615})");
  ASSERT_NE(g, nullptr);
  EXPECT_NE(
      conversion_error(R"({"type":"integer","minimum":"3"})").find("minimum must be a number"),
      std::string::npos);
}

TEST(JsonSchemaText, RulesSortedWithPrimitivesVerbatim) {
  auto r = convert(nlohmann::ordered_json::parse(
      R"({"type":"object","properties":{"a":{"type":"integer"}},"required":["a"]})"));
  ASSERT_TRUE(r.is_ok());
  EXPECT_EQ(r->gbnf,
            "a-kv ::= \"\\\"a\\\"\" space \":\" space integer\n"
            "integer ::= (\"-\"? integral-part)\n"
            "integral-part ::= [0] | [1-9] [0-9]{0,15}\n"
            "root ::= \"{\" space a-kv space \"}\"\n"
            "space ::= | \" \" | \"\\n\"{1,2} [ \\t]{0,20}\n");
}

TEST(JsonSchemaText, RefAndRemoteNames) {
  auto r = convert(nlohmann::ordered_json::parse(R"({"$ref":"https://example.com/s.json"})"));
  ASSERT_TRUE(r.is_ok());
  EXPECT_NE(r->gbnf.find("refhttps-example-com-s-json ::= object\n"), std::string::npos) << r->gbnf;
  r = convert(
      nlohmann::ordered_json::parse(R"({"$ref":"#/$defs/Foo","$defs":{"Foo":{"const":1}}})"));
  ASSERT_TRUE(r.is_ok());
  EXPECT_NE(r->gbnf.find("ref-defs-Foo ::= \"1\"\n"), std::string::npos) << r->gbnf;
}

TEST(JsonSchemaText, JsonOverloadSortsKeys) {
  auto sorted =
      to_gbnf(nlohmann::json::parse(R"({"properties":{"b":{},"a":{}},"required":["a","b"]})"));
  ASSERT_TRUE(sorted.is_ok());
  EXPECT_NE(sorted->find("a-kv \",\" space b-kv"), std::string::npos) << *sorted;
  auto ordered = to_gbnf(
      nlohmann::ordered_json::parse(R"({"properties":{"b":{},"a":{}},"required":["a","b"]})"));
  ASSERT_TRUE(ordered.is_ok());
  EXPECT_NE(ordered->find("b-kv \",\" space a-kv"), std::string::npos) << *ordered;
}

TEST(JsonSchemaText, FuzzCorpusReplays) {
  // Seeds and once-crashing inputs of tests/fuzz/corpus/json_schema must convert cleanly
  // (or fail cleanly) and, when converted, load.
  const std::vector<std::string> samples = {
      R"({"items":[],"type":"array"})",
      R"({"anyOf":[]})",
      R"({"enum":[]})",
      R"({"type":[]})",
      R"({"properties":[1,2]})",
      R"({"required":"a","properties":{"a":{}}})",
      "true",
      "false",
      "null",
      "[]",
      "7",
      R"({"items":true})",
      R"({"additionalProperties":3})",
  };
  for (const auto& s : samples) {
    SCOPED_TRACE(s);
    load(s);
  }
}

}  // namespace
}  // namespace hearth::json_schema::testing
