// The bounded JSON parser: the same values as nlohmann's parser for ordinary texts, the
// limits refused while parsing (so a text nested 100,000 levels deep is refused without
// being built), and objects of many keys built without the quadratic key search.
#include "base/json_parse.h"

#include <gtest/gtest.h>

#include <string>

namespace hearth {
namespace {

using Json = nlohmann::ordered_json;

std::string nested_arrays(size_t depth) {
  return std::string(depth, '[') + std::string(depth, ']');
}

std::string object_of(size_t keys) {
  std::string text = "{";
  for (size_t i = 0; i < keys; ++i) {
    text += (i ? ",\"k" : "\"k") + std::to_string(i) + "\":" + std::to_string(i);
  }
  return text + "}";
}

TEST(JsonParse, GivesWhatTheLibraryGives) {
  for (const char* text :
       {R"({"b": 1, "a": [true, null, -2, 3.5, "x\u00e9"], "c": {"d": {}}})", "[]", "\"s\"", "0",
        "18446744073709551615", "-9223372036854775808", R"({"": [[], [{}]]})"}) {
    auto got = parse_json(text);
    ASSERT_TRUE(got.is_ok()) << text << ": " << got.status().message();
    EXPECT_EQ(got.value(), Json::parse(text)) << text;
    EXPECT_EQ(got.value().dump(), Json::parse(text).dump()) << "key order of " << text;
  }
}

TEST(JsonParse, DuplicateKeysKeepTheFirstPlaceAndTheLastValue) {
  // Small objects scan, large ones hash: both behave as nlohmann's parser.
  for (size_t filler : {0, 40}) {
    std::string text = R"({"a": 1, "b": 2)";
    for (size_t i = 0; i < filler; ++i) text += ",\"f" + std::to_string(i) + "\":0";
    text += R"(, "a": {"x": [3]}})";
    auto got = parse_json(text);
    ASSERT_TRUE(got.is_ok()) << got.status().message();
    EXPECT_EQ(got.value().dump(), Json::parse(text).dump());
    EXPECT_EQ(got.value().begin().key(), "a");
    EXPECT_EQ(got.value()["a"]["x"][0], 3);
  }
}

TEST(JsonParse, RefusesWhatIsNotJson) {
  for (const char* text :
       {"", "{", "[1,]", "{\"a\" 1}", "NaN", "[Infinity]", "\"\xff\"", "1 2", "\"\\ud800\""}) {
    auto got = parse_json(text);
    ASSERT_FALSE(got.is_ok()) << text;
    EXPECT_EQ(got.status().code(), ErrorCode::kInvalidArgument);
    EXPECT_EQ(got.status().message().find("[json.exception"), std::string::npos)
        << got.status().message();
  }
}

TEST(JsonParse, RefusesNumbersADoubleCannotHold) {
  auto got = parse_json("{\"a\": [1e400]}");
  ASSERT_FALSE(got.is_ok());
  // The library reports it ("number overflow parsing '1e400'"); the builder would too.
  EXPECT_NE(got.status().message().find("1e400"), std::string::npos) << got.status().message();
  EXPECT_TRUE(parse_json("[1e300, -1e-400]").is_ok());
}

TEST(JsonParse, DepthIsCountedOutsideStrings) {
  JsonLimits limits;
  limits.max_depth = 3;
  EXPECT_TRUE(parse_json(R"({"a": [1, {"b": "[[[[{{{{"}]})", limits).is_ok());
  EXPECT_FALSE(parse_json(R"({"a": [1, {"b": []}]})", limits).is_ok());
  EXPECT_TRUE(parse_json(nested_arrays(512)).is_ok());
  auto deep = parse_json(nested_arrays(513));
  ASSERT_FALSE(deep.is_ok());
  EXPECT_NE(deep.status().message().find("nested deeper than 512 levels"), std::string::npos)
      << deep.status().message();
}

TEST(JsonParse, AVeryDeepTextIsRefusedWithoutBeingBuilt) {
  // 200,000 levels: copying, comparing or printing such a value would recurse that deep.
  auto got = parse_json(nested_arrays(200000));
  ASSERT_FALSE(got.is_ok());
  EXPECT_NE(got.status().message().find("nested deeper"), std::string::npos);
  auto objects = parse_json(std::string(200000, '{'));
  EXPECT_FALSE(objects.is_ok());
}

TEST(JsonParse, KeysPerObjectAreLimited) {
  JsonLimits limits;
  limits.max_object_keys = 100;
  EXPECT_TRUE(parse_json(object_of(100), limits).is_ok());
  auto got = parse_json(object_of(101), limits);
  ASSERT_FALSE(got.is_ok());
  EXPECT_NE(got.status().message().find("more than 100 keys"), std::string::npos);
  // A duplicate does not count twice.
  EXPECT_TRUE(parse_json(R"({"a":1,"a":2,"a":3})", JsonLimits{8, 1, 100}).is_ok());
}

TEST(JsonParse, ValuesPerTextAreLimited) {
  JsonLimits limits;
  limits.max_values = 5;
  EXPECT_TRUE(parse_json("[1,2,3,4]", limits).is_ok());  // the array is a value too
  auto got = parse_json("[1,2,3,4,5]", limits);
  ASSERT_FALSE(got.is_ok());
  EXPECT_NE(got.status().message().find("more than 5 values"), std::string::npos);
}

TEST(JsonParse, ALargeObjectIsBuiltWholeAndInOrder) {
  const size_t n = JsonLimits{}.max_object_keys;
  auto got = parse_json(object_of(n));
  ASSERT_TRUE(got.is_ok()) << got.status().message();
  ASSERT_EQ(got.value().size(), n);
  size_t i = 0;
  for (const auto& [key, value] : got.value().items()) {
    EXPECT_EQ(key, "k" + std::to_string(i));
    EXPECT_EQ(value, i);
    ++i;
  }
  EXPECT_FALSE(parse_json(object_of(n + 1)).is_ok());
}

TEST(JsonParse, LibraryTagsAreRemoved) {
  EXPECT_EQ(without_json_library_tags("[json.exception.parse_error.101] parse error"),
            "parse error");
  EXPECT_EQ(without_json_library_tags(std::string(2000, 'x'), 10), std::string(10, 'x') + "...");
}

}  // namespace
}  // namespace hearth
