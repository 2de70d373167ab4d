// Accepted and rejected texts for schemas covering every dispatch row of spec 5.2 and the
// features of sections 5.1-5.8.
#include <gtest/gtest.h>

#include "schema_cases.h"

namespace hearth::json_schema::testing {
namespace {

const std::vector<SchemaCase>& primitive_cases() {
  static const std::vector<SchemaCase> cases = {
      {"integer",
       R"({"type":"integer"})",
       {"0", "-0", "123", "-45", "1234567890123456"},
       {"01", "+1", "1.0", "12345678901234567", " 1", "1 ", "", "1e5", "--1"}},
      {"number",
       R"({"type":"number"})",
       {"0", "-1.5", "3.1415926535897932", "1e10", "1E-5", "2.5e+3", "-0.0"},
       {"01", "1.", ".5", "1e", "1.12345678901234567", "1e01", "+1", "NaN"}},
      {"boolean", R"({"type":"boolean"})", {"true", "false"}, {"True", "1", "null", " true"}},
      {"null", R"({"type":"null"})", {"null"}, {"nul", "Null", "{}"}},
      {"string escapes",
       R"({"type":"string"})",
       {R"("")", R"("abc")", R"("a\"b")", R"("\\")", R"("\n\t\r\b\f")", R"("\u00e9\uABCD")",
        "\"h\xC3\xA9llo \xF0\x9F\x98\x80\""},
       {R"("\/")", R"("\x41")", R"("\u12")", "\"a\nb\"", "\"a\tb\"", "\"\x7F\"", "\"\x01\"",
        R"("abc)", R"(abc")", R"("a"b")", R"("\")"}},
      {"array",
       R"({"type":"array"})",
       {"[]", "[ ]", "[1,2]", "[1, \"a\", {\"k\": [null]}]", "[\n  1,\n  2\n]"},
       {"[1 ,2]", "[,]", "[1,]", "[1 2]"}},
      {"empty schema is any object",
       "{}",
       {"{}", R"({"a":1})", R"({"a": {"b": [true]}, "c": null})", "{ \"a\":1 }"},
       {"1", "[]", "\"s\"", R"({"a" :1})", R"({"a":1 ,"b":2})", "{\"a\":1,}"}},
      {"description only is any value",
       R"({"description":"anything"})",
       {"1", "[]", "\"s\"", "{}", "null", "true", "-2.5e3"},
       {"", "01", "nul"}},
      {"whitespace rule",
       R"({"type":"object","properties":{"a":{"type":"integer"}},"required":["a"]})",
       {R"({"a":1})", R"({ "a" : 1 })", "{\n\n\t\"a\":\n 1\n}", "{\n                    \"a\":1}",
        "{\n\n\t\t\t\t\t\t\t\t\t\t\t\t\t\t\t\t\t\t\t\t\"a\":1}"},
       {"{\n\n\n\"a\":1}", "{\n                     \"a\":1}", "{  \"a\":1}", "{\t\"a\":1}",
        R"( {"a":1})", R"({"a":1} )", "{\r\n\"a\":1}", R"({"a":1  })"}},
      {"uuid",
       R"({"type":"string","format":"uuid"})",
       {R"("123e4567-e89b-12d3-a456-426614174000")", R"("ABCDEFAB-CDEF-ABCD-EFAB-CDEFABCDEFAB")"},
       {R"("123e4567e89b12d3a456426614174000")", R"("123e4567-e89b-12d3-a456-42661417400g")",
        "123e4567-e89b-12d3-a456-426614174000"}},
      {"uuid4 without type",
       R"({"format":"uuid4"})",
       {R"("00000000-0000-0000-0000-000000000000")"},
       {R"("x")"}},
      {"date",
       R"({"type":"string","format":"date"})",
       {R"("2024-01-31")", R"("0000-12-01")"},
       {R"("2024-13-01")", R"("2024-00-10")", R"("2024-01-32")", R"("2024-1-01")", "2024-01-01"}},
      {"time",
       R"({"type":"string","format":"time"})",
       {R"("23:59:59Z")", R"("00:00:00.123+05:30")", R"("12:30:00-23:59")"},
       {R"("24:00:00Z")", R"("12:60:00Z")", R"("12:00:00")", R"("12:00:00.1Z")"}},
      {"date-time",
       R"({"format":"date-time"})",
       {R"("2024-02-29T10:00:00Z")"},
       {R"("2024-02-29 10:00:00Z")", R"("2024-02-29")"}},
      {"unknown format is a plain string",
       R"({"type":"string","format":"email"})",
       {R"("not an email")"},
       {"1"}},
  };
  return cases;
}

const std::vector<SchemaCase>& string_and_integer_cases() {
  static const std::vector<SchemaCase> cases = {
      {"string length",
       R"({"type":"string","minLength":2,"maxLength":4})",
       {R"("ab")", R"("abcd")", R"("\n\u0041")", "\"\xC3\xA9\xC3\xA9\""},
       {R"("a")", R"("abcde")", R"("")"}},
      {"string min only",
       R"({"type":"string","minLength":3})",
       {R"("abc")", R"("abcdefghijklmnop")"},
       {R"("ab")"}},
      {"string max zero", R"({"type":"string","maxLength":0})", {R"("")"}, {R"("a")"}},
      {"string length over cap is unbounded",
       R"({"type":"string","maxLength":5000})",
       {R"("")", "\"" + std::string(2500, 'x') + "\""},
       {}},
      {"integer -5..123",
       R"({"type":"integer","minimum":-5,"maximum":123})",
       {"-5", "-1", "-0", "0", "9", "10", "99", "100", "123"},
       {"-6", "124", "200", "1000", "007", "-05", "+3"}},
      {"integer >= 0",
       R"({"type":"integer","minimum":0})",
       {"0", "1", "9999999999999999"},
       {"-1", "-0", "10000000000000000", "01"}},
      {"integer exclusive",
       R"({"type":"integer","exclusiveMinimum":0,"exclusiveMaximum":10})",
       {"1", "9"},
       {"0", "10", "-0"}},
      {"integer single value",
       R"({"type":"integer","minimum":42,"maximum":42})",
       {"42"},
       {"41", "43", "420", "4"}},
      {"integer max only",
       R"({"type":"integer","maximum":5})",
       {"5", "0", "-1", "-9999999999999999"},
       {"6", "10", "-0", "-10000000000000000"}},
      {"integer negative max",
       R"({"type":"integer","maximum":-10})",
       {"-10", "-11", "-9999999999999999"},
       {"-9", "0", "10", "-0"}},
      {"integer negative min only",
       R"({"type":"integer","minimum":-20})",
       {"-20", "-0", "0", "9999999999999999"},
       {"-21", "-100", "10000000000000000"}},
      {"integer min 17 digits",
       R"({"type":"integer","minimum":12345678901234567})",
       {"12345678901234567", "99999999999999999"},
       {"12345678901234566", "9999999999999999"}},
      {"integer int64 limits",
       R"({"type":"integer","minimum":-9223372036854775807,"maximum":9223372036854775806})",
       {"-9223372036854775807", "9223372036854775806", "0", "-0"},
       {"-9223372036854775808", "9223372036854775807", "10000000000000000000"}},
      {"integer min sentinel",
       R"({"type":"integer","minimum":-9223372036854775808,"maximum":3})",
       {"3", "-9999999999999999"},
       {"4", "-10000000000000000"}},
      {"integer float bounds truncate",
       R"({"type":"integer","minimum":1.7,"maximum":3.9})",
       {"1", "3"},
       {"0", "4"}},
      {"number bounds ignored", R"({"type":"number","minimum":5})", {"-3.5"}, {}},
  };
  return cases;
}

const std::vector<SchemaCase>& const_enum_union_cases() {
  static const std::vector<SchemaCase> cases = {
      {"const object",
       R"({"const":{"b":1,"a":[true,null]}})",
       {R"({"b":1,"a":[true,null]})"},
       {R"({"a":[true,null],"b":1})", R"({"b": 1,"a":[true,null]})"}},
      {"const string with escapes",
       R"({"const":"a\"b\\c\n\u007f"})",
       {"\"a\\\"b\\\\c\\n\x7F\""},
       {"\"a\\\"b\\\\c\\n\""}},
      {"enum mixed",
       R"({"enum":["red",1,null,2.5,{"x":"y"}]})",
       {R"("red")", "1", "null", "2.5", R"({"x":"y"})"},
       {R"("blue")", "2", "red"}},
      {"enum over type", R"({"type":"integer","enum":["a"]})", {R"("a")"}, {"1"}},
      {"anyOf",
       R"({"anyOf":[{"type":"integer"},{"type":"string","maxLength":1}]})",
       {"5", R"("")", R"("x")"},
       {R"("xy")", "null"}},
      {"oneOf wins over anyOf, not exclusive",
       R"({"oneOf":[{"type":"integer"},{"type":"number"}],"anyOf":[{"type":"null"}]})",
       {"1", "1.5"},
       {"null"}},
      {"anyOf ignores siblings",
       R"({"anyOf":[{"type":"null"}],"properties":{"a":{"type":"integer"}}})",
       {"null"},
       {"{}"}},
      {"type array",
       R"({"type":["string","null"],"maxLength":1})",
       {R"("a")", "null"},
       {R"("ab")", "1"}},
      {"type array with object",
       R"({"type":["object","integer"],"properties":{"a":{"const":1}},"required":["a"]})",
       {R"({"a":1})", "7"},
       {"{}"}},
  };
  return cases;
}

TEST(JsonSchemaAccept, Primitives) {
  for (const auto& c : primitive_cases()) check_case(c);
}
TEST(JsonSchemaAccept, StringsAndIntegers) {
  for (const auto& c : string_and_integer_cases()) check_case(c);
}
TEST(JsonSchemaAccept, ConstEnumUnion) {
  for (const auto& c : const_enum_union_cases()) check_case(c);
}

}  // namespace
}  // namespace hearth::json_schema::testing
