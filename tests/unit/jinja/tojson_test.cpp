// Hugging Face's tojson: json.dumps(x, ensure_ascii=False, indent=..., separators=...,
// sort_keys=...) byte for byte. Expected values are what /usr/bin/python3's json.dumps printed.
#include "jinja/tojson.h"

#include <gtest/gtest.h>

#include <limits>

#include "builtins_test_util.h"

namespace hearth::jinja {
namespace {

using testing::J;

std::string dumps_json(std::string_view json, const JsonDumpOptions& options = {}) {
  auto result = json_dumps(J(json), options);
  return result.is_ok() ? *result : "ERROR: " + result.status().message();
}

std::string dumps(const Value& value, const JsonDumpOptions& options = {}) {
  auto result = json_dumps(value, options);
  return result.is_ok() ? *result : "ERROR: " + result.status().message();
}

TEST(TojsonTest, MatchesPythonJsonDumps) {
  {
    JsonDumpOptions o;
    EXPECT_EQ(dumps_json(R"({"a":[1,2,{}],"b":[],"c":{"d":null}})", o),
              "{\"a\": [1, 2, {}], \"b\": [], \"c\": {\"d\": null}}");
  }
  {
    JsonDumpOptions o;
    o.indent = std::string("  ");
    EXPECT_EQ(dumps_json(R"({"a":[1,2,{}],"b":[],"c":{"d":null}})", o),
              "{\n  \"a\": [\n    1,\n    2,\n    {}\n  ],\n  \"b\": [],\n  \"c\": {\n    \"d\": "
              "null\n  }\n}");
  }
  {
    JsonDumpOptions o;
    o.indent = std::string("");
    EXPECT_EQ(dumps_json(R"({"a":[1]})", o), "{\n\"a\": [\n1\n]\n}");
  }
  {
    JsonDumpOptions o;
    o.indent = std::string("\t");
    EXPECT_EQ(dumps_json(R"([1,[2,[3]]])", o),
              "[\n\t1,\n\t[\n\t\t2,\n\t\t[\n\t\t\t3\n\t\t]\n\t]\n]");
  }
  {
    JsonDumpOptions o;
    o.indent = std::string("");
    EXPECT_EQ(dumps_json(R"({"a":[1]})", o), "{\n\"a\": [\n1\n]\n}");
  }
  {
    JsonDumpOptions o;
    EXPECT_EQ(dumps_json(R"("\u007f\u0000\u2028é😀\"\\\b\f\n\r\t\u001f")", o),
              "\"\x7f"
              "\\u0000\xe2\x80\xa8"
              "é😀\\\"\\\\\\b\\f\\n\\r\\t\\u001f\"");
  }
  {
    JsonDumpOptions o;
    o.ensure_ascii = true;
    EXPECT_EQ(dumps_json(R"("é😀\u0001")", o), "\"\\u00e9\\ud83d\\ude00\\u0001\"");
  }
  {
    JsonDumpOptions o;
    EXPECT_EQ(
        dumps_json(
            R"([1.0, -0.0, 1e16, 1e-7, 0.1, 123456789.123, 5e-324, 1.7976931348623157e308, -5, 0, 9007199254740993])",
            o),
        "[1.0, -0.0, 1e+16, 1e-07, 0.1, 123456789.123, 5e-324, 1.7976931348623157e+308, -5, 0, "
        "9007199254740993]");
  }
  {
    JsonDumpOptions o;
    EXPECT_EQ(dumps_json(R"([true, false, null, "x"])", o), "[true, false, null, \"x\"]");
  }
  {
    JsonDumpOptions o;
    o.item_separator = ",";
    o.key_separator = ":";
    EXPECT_EQ(dumps_json(R"([1,2])", o), "[1,2]");
  }
  {
    JsonDumpOptions o;
    o.indent = std::string("  ");
    o.item_separator = ", ";
    o.key_separator = ": ";
    EXPECT_EQ(dumps_json(R"({"a":1,"b":[2]})", o), "{\n  \"a\": 1, \n  \"b\": [\n    2\n  ]\n}");
  }
  {
    JsonDumpOptions o;
    o.sort_keys = true;
    EXPECT_EQ(dumps_json(R"({"b":1,"a":{"d":1,"c":2}})", o),
              "{\"a\": {\"c\": 2, \"d\": 1}, \"b\": 1}");
  }
  {
    JsonDumpOptions o;
    o.sort_keys = true;
    EXPECT_EQ(dumps_json(R"({"b":1,"B":2,"a":3,"é":4,"Z":5})", o),
              "{\"B\": 2, \"Z\": 5, \"a\": 3, \"b\": 1, \"é\": 4}");
  }
  {
    JsonDumpOptions o;
    EXPECT_EQ(
        dumps_json(
            R"([{"type":"function","function":{"name":"get_weather","description":"Get the weather","parameters":{"type":"object","properties":{"location":{"type":"string"}},"required":["location"]}}}])",
            o),
        "[{\"type\": \"function\", \"function\": {\"name\": \"get_weather\", \"description\": "
        "\"Get the weather\", \"parameters\": {\"type\": \"object\", \"properties\": "
        "{\"location\": {\"type\": \"string\"}}, \"required\": [\"location\"]}}}]");
  }
  {
    JsonDumpOptions o;
    o.indent = std::string("    ");
    EXPECT_EQ(
        dumps_json(
            R"([{"type":"function","function":{"name":"get_weather","parameters":{"type":"object","properties":{"location":{"type":"string"}}}}}])",
            o),
        "[\n    {\n        \"type\": \"function\",\n        \"function\": {\n            \"name\": "
        "\"get_weather\",\n            \"parameters\": {\n                \"type\": \"object\",\n  "
        "              \"properties\": {\n                    \"location\": {\n                    "
        "    \"type\": \"string\"\n                    }\n                }\n            }\n       "
        " }\n    }\n]");
  }
  {
    JsonDumpOptions o;
    o.indent = std::string("  ");
    EXPECT_EQ(dumps_json(R"({})", o), "{}");
  }
  {
    JsonDumpOptions o;
    o.indent = std::string("  ");
    EXPECT_EQ(dumps_json(R"([])", o), "[]");
  }
  {
    JsonDumpOptions o;
    EXPECT_EQ(dumps_json(R"("")", o), "\"\"");
  }
  {
    JsonDumpOptions o;
    EXPECT_EQ(dumps_json(R"({"":""})", o), "{\"\": \"\"}");
  }
}

TEST(TojsonTest, NonStringKeysConvertLikePython) {
  // json.dumps({1: 2, 1.5: 3, True: 4, None: 5, 2e20: 1, False: 0, nan: 1, inf: 2})
  Value dict = Value::dict();
  dict.dict_data().set(Value(1), Value(2));
  dict.dict_data().set(Value(1.5), Value(3));
  dict.dict_data().set(Value(true), Value(4));  // the same key as 1, as in Python
  dict.dict_data().set(Value::none(), Value(5));
  dict.dict_data().set(Value(2e20), Value(1));
  dict.dict_data().set(Value(false), Value(0));
  dict.dict_data().set(Value(std::numeric_limits<double>::quiet_NaN()), Value(1));
  dict.dict_data().set(Value(std::numeric_limits<double>::infinity()), Value(2));
  EXPECT_EQ(dumps(dict),
            R"({"1": 4, "1.5": 3, "null": 5, "2e+20": 1, "false": 0, "NaN": 1, "Infinity": 2})");
  Value tuple_key = Value::dict();
  tuple_key.dict_data().set(Value::tuple({Value(1), Value(2)}), Value(3));
  EXPECT_EQ(dumps(tuple_key), "ERROR: keys must be str, int, float, bool or None, not tuple");
}

TEST(TojsonTest, NonFiniteFloatsAndTuples) {
  const double inf = std::numeric_limits<double>::infinity();
  EXPECT_EQ(dumps(Value::list(
                {Value(std::numeric_limits<double>::quiet_NaN()), Value(inf), Value(-inf)})),
            "[NaN, Infinity, -Infinity]");
  EXPECT_EQ(dumps(Value::tuple({Value(1), Value::tuple({Value(2)})})), "[1, [2]]");
}

TEST(TojsonTest, UnserializableValuesAreTypeErrors) {
  EXPECT_EQ(dumps(Value::undefined("'x' is undefined")),
            "ERROR: Object of type Undefined is not JSON serializable");
  Value dict = J(R"({"a": 1})");
  dict.dict_data().set(Value("b"), Value::undefined());
  EXPECT_EQ(dumps(dict), "ERROR: Object of type Undefined is not JSON serializable");
}

TEST(TojsonTest, IteratorsAndViewsAreNotSerializable) {
  Value keys = J(R"(["a"])");
  keys.list_data().python_type = "dict_keys";
  // json.dumps({'a': 1}.keys()): TypeError Object of type dict_keys is not JSON serializable
  EXPECT_EQ(dumps(keys), "ERROR: Object of type dict_keys is not JSON serializable");
}

TEST(TojsonTest, SortKeysRefusesMixedKeyTypes) {
  Value dict = Value::dict();
  dict.dict_data().set(Value(1), Value(2));
  dict.dict_data().set(Value("a"), Value(3));
  JsonDumpOptions options;
  options.sort_keys = true;
  // json.dumps({1: 2, 'a': 3}, sort_keys=True): TypeError '<' not supported between ...
  const std::string got = dumps(dict, options);
  EXPECT_EQ(got.rfind("ERROR: '<' not supported between instances of", 0), 0u) << got;
  EXPECT_EQ(dumps(dict), R"({"1": 2, "a": 3})");
}

TEST(TojsonTest, CircularReferencesAreDetected) {
  Value list = Value::list({Value(1)});
  list.list_data().items.push_back(list);
  EXPECT_EQ(dumps(list), "ERROR: Circular reference detected");
  list.list_data().items.pop_back();  // break the cycle so the list can be freed
  // The same container twice, not nested in itself, is fine.
  const Value shared = J("[1]");
  EXPECT_EQ(dumps(Value::list({shared, shared})), "[[1], [1]]");
}

}  // namespace
}  // namespace hearth::jinja
