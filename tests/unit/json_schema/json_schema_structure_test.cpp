// Objects, arrays, allOf, $ref and pattern schemas: accepted and rejected texts.
#include <gtest/gtest.h>

#include "schema_cases.h"

namespace hearth::json_schema::testing {
namespace {

const std::vector<SchemaCase>& object_cases() {
  static const std::vector<SchemaCase> cases = {
      {"required in properties order",
       R"({"properties":{"b":{"type":"integer"},"a":{"type":"string"}},"required":["a","b","zz"]})",
       {R"({"b":1,"a":"x"})", R"({ "b" : 1, "a" : "x" })"},
       {R"({"a":"x","b":1})", R"({"b":1})", R"({"b":1,"a":"x","c":2})", R"({"b":1 ,"a":"x"})"}},
      {"optional each at most once in order",
       R"({"type":"object","properties":{"a":{"type":"integer"},"b":{"type":"integer"},"c":{"type":"integer"}}})",
       {"{}", R"({"a":1})", R"({"b":2})", R"({"c":3})", R"({"a":1,"c":3})",
        R"({"a":1,"b":2,"c":3})", R"({"b":2,"c":3})"},
       {R"({"b":2,"a":1})", R"({"a":1,"a":1})", R"({"c":3,"a":1})", R"({"d":1})", R"({,"a":1})"}},
      {"required then optional",
       R"({"properties":{"a":{"type":"integer"},"b":{"type":"integer"},"c":{"type":"integer"}},"required":["b"]})",
       {R"({"b":2})", R"({"b":2,"a":1})", R"({"b":2,"a":1,"c":3})", R"({"b":2,"c":3})"},
       {R"({"a":1,"b":2})", "{}", R"({"b":2,"c":3,"a":1})"}},
      {"additionalProperties false without properties",
       R"({"type":"object","additionalProperties":false})",
       {"{}", "{ }", "{  }"},
       {R"({"a":1})"}},
      {"additionalProperties true is any object",
       R"({"type":"object","additionalProperties":true})",
       {"{}", R"({"a":[1]})"},
       {"[]"}},
      {"additionalProperties schema without properties",
       R"({"additionalProperties":{"type":"integer"}})",
       {"{}", R"({"x":1,"y":2})", R"({"x":1, "x":2})"},
       {R"({"x":"s"})", R"({"x" :1})"}},
      {"additionalProperties empty schema means objects",
       R"({"additionalProperties":{}})",
       {R"({"x":{}})"},
       {R"({"x":1})"}},
      {"declared plus additional",
       R"({"properties":{"a":{"type":"integer"},"ab":{"type":"string"}},"required":["a"],"additionalProperties":{"type":"boolean"}})",
       {R"({"a":1})", R"({"a":1,"ab":"s"})", R"({"a":1,"x":true})",
        R"({"a":1,"ab":"s","x":true,"y":false})", R"({"a":1,"abc":true})", R"({"a":1,"":true})",
        R"({"a":1,"b":true})", R"({"a":1,"\u0061":true})"},
       {R"({"a":1,"a":true})", R"({"a":1,"ab":true})", R"({"a":1,"x":true,"ab":"s"})",
        R"({"a":1,"x" :true})", R"({"a":1,"x":1})"}},
      {"additional keys that are prefixes of declared names",
       R"({"properties":{"abc":{"type":"integer"}},"additionalProperties":{"type":"null"}})",
       {R"({"ab":null})", R"({"a":null})", R"({"abcd":null})", R"({"abc":1,"ab":null})"},
       {R"({"abc":null})", R"({"ab":1})"}},
      {"additional key escapes vs declared escaped name",
       R"({"properties":{"a\"b":{"type":"integer"},"t\tx":{"type":"integer"}},"additionalProperties":true})",
       {R"({"a\"b":1})", R"({"a\"c":[]})", R"({"a\\":1})", R"({"t\tx":1})", R"({"t\ty":1})",
        R"({"t\nx":1})"},
       {R"({"a\"b":"s"})", R"({"t\tx":"s"})", R"({"a\q":1})"}},
      {"empty property name",
       R"({"properties":{"":{"type":"integer"}},"required":[""]})",
       {R"({"":1})"},
       {"{}"}},
      {"reserved property names",
       R"({"properties":{"root":{"type":"string","maxLength":1},"string":{"type":"integer","minimum":1}},"required":["root","string"]})",
       {R"({"root":"a","string":1})"},
       {R"({"root":"ab","string":1})", R"({"root":"a","string":0})"}},
      {"property named like the additional marker",
       R"({"properties":{"*":{"type":"null"}}})",
       {"{}", R"({"*":null})"},
       {R"({"*":null,"*":null})", R"({"x":null})"}},
      {"additionalProperties null is none",
       R"({"properties":{"a":{"type":"null"}},"additionalProperties":null})",
       {R"({"a":null})", "{}"},
       {R"({"b":null})"}},
  };
  return cases;
}

const std::vector<SchemaCase>& array_cases() {
  static const std::vector<SchemaCase> cases = {
      {"items",
       R"({"type":"array","items":{"type":"integer"}})",
       {"[]", "[1]", "[1,2,3]", "[ 1, 2 ]"},
       {"[1 ,2]", "[\"a\"]", "[1,]"}},
      {"min and max items",
       R"({"items":{"type":"boolean"},"minItems":2,"maxItems":3})",
       {"[true,false]", "[true,true,true]"},
       {"[]", "[true]", "[true,true,true,true]"}},
      {"max items zero",
       R"({"items":{"type":"boolean"},"maxItems":0})",
       {"[]", "[  ]"},
       {"[true]"}},
      {"optional single item",
       R"({"items":{"type":"null"},"maxItems":1})",
       {"[]", "[null]"},
       {"[null,null]"}},
      {"min one",
       R"({"items":{"type":"null"},"minItems":1})",
       {"[null]", "[null,null,null]"},
       {"[]"}},
      {"non-integer maxItems ignored",
       R"({"items":{"type":"null"},"maxItems":1.5})",
       {"[null,null,null]"},
       {}},
      {"min/max without items ignored",
       R"({"type":"array","minItems":2,"maxItems":2})",
       {"[]", "[1,2,3]"},
       {}},
      {"tuple items",
       R"({"items":[{"type":"integer"},{"type":"string"}]})",
       {"[1,\"a\"]", "[ 1, \"a\" ]"},
       {"[1]", "[1,\"a\",2]", "[\"a\",1]", "[1 ,\"a\"]"}},
      {"prefixItems tuple",
       R"({"prefixItems":[{"type":"null"}],"items":false,"type":"array"})",
       {"[null]", "[1]"},
       {}},
      {"prefixItems only",
       R"({"prefixItems":[{"type":"null"},{"type":"boolean"}]})",
       {"[null,true]"},
       {"[null]", "[null,true,false]"}},
      {"items over cap are unbounded",
       R"({"items":{"type":"null"},"maxItems":100000})",
       {"[null,null]"},
       {}},
  };
  return cases;
}

const std::vector<SchemaCase>& all_of_ref_cases() {
  static const std::vector<SchemaCase> cases = {
      {"allOf merges properties, all required",
       R"({"allOf":[{"properties":{"a":{"type":"integer"}}},{"$ref":"#/$defs/B"}],"$defs":{"B":{"properties":{"b":{"type":"string"}}}}})",
       {R"({"a":1,"b":"x"})"},
       {R"({"a":1})", R"({"b":"x","a":1})", R"({"a":1,"b":"x","c":1})"}},
      {"allOf anyOf members optional",
       R"({"allOf":[{"properties":{"a":{"type":"integer"}}},{"anyOf":[{"properties":{"b":{"type":"null"}}},{"properties":{"c":{"type":"null"}}}]}]})",
       {R"({"a":1})", R"({"a":1,"b":null})", R"({"a":1,"b":null,"c":null})", R"({"a":1,"c":null})"},
       {R"({"b":null})"}},
      {"allOf enum intersection",
       R"({"type":"string","allOf":[{"enum":["a","b","c"]},{"enum":["c","b","z"]}]})",
       {R"("b")", R"("c")"},
       {R"("a")", R"("z")"}},
      {"$ref into $defs",
       R"({"$ref":"#/$defs/N","$defs":{"N":{"type":"integer","minimum":1,"maximum":3}}})",
       {"1", "3"},
       {"0", "4"}},
      {"$ref with array index",
       R"({"properties":{"x":{"$ref":"#/$defs/L/1"}},"required":["x"],"$defs":{"L":[{"type":"string"},{"type":"null"}]}})",
       {R"({"x":null})"},
       {R"({"x":"s"})"}},
      {"recursive $ref",
       R"({"$ref":"#/definitions/T","definitions":{"T":{"type":"object","properties":{"v":{"type":"integer"},"kids":{"type":"array","items":{"$ref":"#/definitions/T"}}},"required":["v"]}}})",
       {R"({"v":1})", R"({"v":1,"kids":[{"v":2},{"v":3,"kids":[]}]})"},
       {R"({"v":1,"kids":[{}]})"}},
      // The root's $ref hides the $defs from the up-front walk: the inner refs are
      // resolved when reached (the reference reads them as any value).
      {"$ref chain under a root $ref",
       R"({"$defs":{"a":{"type":"object","properties":{"x":{"$ref":"#/$defs/b"}},"required":["x"]},"b":{"type":"integer"}},"$ref":"#/$defs/a"})",
       {R"({"x":1})", R"({"x":-20})"},
       {R"({"x":"s"})", R"({"x":{}})", "{}"}},
      {"$ref to a $ref to a $ref",
       R"({"definitions":{"a":{"$ref":"#/definitions/b"},"b":{"$ref":"#/definitions/c"},"c":{"type":"string","maxLength":3}},"$ref":"#/definitions/a"})",
       {R"("abc")", R"("")"},
       {R"("abcd")", "1", "{}"}},
      {"$ref siblings ignored",
       R"({"$ref":"#/$defs/A","type":"string","$defs":{"A":{"type":"null"}}})",
       {"null"},
       {"\"s\""}},
      {"$ref to a property",
       R"({"properties":{"a":{"type":"boolean"},"b":{"$ref":"#/properties/a"}},"required":["a","b"]})",
       {R"({"a":true,"b":false})"},
       {R"({"a":true,"b":1})"}},
      {"remote ref without fragment is object",
       R"({"$ref":"https://example.com/s.json"})",
       {"{}", R"({"a":1})"},
       {"1"}},
  };
  return cases;
}

const std::vector<SchemaCase>& pattern_cases() {
  static const std::vector<SchemaCase> cases = {
      {"pattern literal and classes",
       R"({"type":"string","pattern":"^[a-z]+-[0-9]{2,3}$"})",
       {R"("abc-12")", R"("x-123")"},
       {R"("abc-1")", R"("abc-1234")", R"("ABC-12")", "abc-12"}},
      {"pattern alternation and groups",
       R"({"pattern":"^(ab|cd)*(?:x|y)?$"})",
       {R"("")", R"("abcdab")", R"("x")", R"("cdy")"},
       {R"("abc")", R"("xy")"}},
      {"pattern dot",
       R"({"pattern":"^a.c$"})",
       {R"("abc")",
        "\"a\xC3\xA9"
        "c\"",
        R"("a"c")"},
       {"\"a\nc\"", "\"a\rc\"", R"("ac")"}},
      {"pattern escaped metachars",
       R"({"pattern":"^\\$\\.\\(\\)\\*\\+\\?\\[\\]\\{\\}\\|\\^$"})",
       {R"("$.()*+?[]{}|^")"},
       {R"("$")"}},
      {"pattern quantifier forms",
       R"({"pattern":"^a{3}b{2,}c{,2}d?$"})",
       {R"("aaabb")", R"("aaabbbbccd")"},
       {R"("aabb")", R"("aaab")", R"("aaabbccc")"}},
      {"pattern negated class and gbnf escapes",
       R"({"pattern":"^[^a\\n]\\[?[\\x41-\\x43\\]]$"})",
       {R"("bA")", R"("b]")", "\"\xC3\xA9\x43\""},
       {R"("aA")", R"("bD")"}},
      {"pattern raw quotes", R"({"pattern":"^[\"\\\\]$"})", {"\"\"\"", R"("\")"}, {R"("a")"}},
      {"pattern multibyte quantified",
       "{\"pattern\":\"^\xC3\xA9+$\"}",
       {"\"\xC3\xA9\xC3\xA9\""},
       {R"("")"}},
      {"unanchored pattern is a string", R"({"pattern":"[0-9]+"})", {R"("anything")"}, {"1"}},
      {"unsupported \\d is a string", R"({"type":"string","pattern":"^\\d+$"})", {R"("abc")"}, {}},
      {"unsupported lookahead is a string", R"({"pattern":"^(?=a)a$"})", {R"("zz")"}, {}},
      {"only the subschema degrades",
       R"({"properties":{"a":{"pattern":"^\\w$"},"b":{"pattern":"^x$"}},"required":["a","b"]})",
       {R"({"a":"anything","b":"x"})"},
       {R"({"a":"q","b":"y"})"}},
      {"pattern repetition over cap is unbounded",
       R"({"pattern":"^a{0,5000}$"})",
       {R"("aaaa")"},
       {R"("b")"}},
      {"pattern nullable loop degrades", R"({"pattern":"^(a*)*$"})", {R"("zz")"}, {}},
  };
  return cases;
}

TEST(JsonSchemaAccept, Objects) {
  for (const auto& c : object_cases()) check_case(c);
}
TEST(JsonSchemaAccept, Arrays) {
  for (const auto& c : array_cases()) check_case(c);
}
TEST(JsonSchemaAccept, AllOfAndRefs) {
  for (const auto& c : all_of_ref_cases()) check_case(c);
}
TEST(JsonSchemaAccept, Patterns) {
  for (const auto& c : pattern_cases()) check_case(c);
}

}  // namespace
}  // namespace hearth::json_schema::testing
