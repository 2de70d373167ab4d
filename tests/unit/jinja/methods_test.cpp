// Methods of str, list and dict called directly, against what Python's Jinja2 3.1.2 prints
// for `{% set r = x.name(*args, **kwargs) %}{{ r }}|{{ x }}` (the result, then the receiver
// after any mutation).
#include <gtest/gtest.h>

#include <tuple>

#include "builtins_test_util.h"

namespace hearth::jinja {
namespace {

using testing::FakeInterp;
using testing::is_error;
using testing::J;
using testing::make_args;

struct MethodCase {
  const char* self;
  const char* name;
  const char* positional;
  const char* keywords;
  const char* expected;  // "<result>|<receiver after the call>" or "ERROR"
};

// Expected outputs rendered by /usr/bin/python3 with python3-jinja2 3.1.2.
const MethodCase kMethodCases[] = {
    {R"("a,b,c")", "split", R"([","])", R"({})", "['a', 'b', 'c']|a,b,c"},
    {R"("a,b,c")", "split", R"([","])", R"({"maxsplit": 1})", "['a', 'b,c']|a,b,c"},
    {R"("  a  b ")", "split", R"([])", R"({})", "['a', 'b']|  a  b "},
    {R"("a b")", "split", R"([null])", R"({})", "['a', 'b']|a b"},
    {R"("a")", "split", R"([""])", R"({})", "ERROR"},
    {R"("a")", "split", R"([5])", R"({})", "ERROR"},
    {R"("a,b,c")", "rsplit", R"([",", 1])", R"({})", "['a,b', 'c']|a,b,c"},
    {R"("  a b  c  ")", "rsplit", R"([null, 1])", R"({})", "['  a b', 'c']|  a b  c  "},
    {R"("a\nb\r\nc")", "splitlines", R"([])", R"({})", "['a', 'b', 'c']|a\nb\r\nc"},
    {R"("a\nb")", "splitlines", R"([true])", R"({})", "['a\\n', 'b']|a\nb"},
    {R"(" a ")", "strip", R"([])", R"({})", "a| a "},
    {R"("xxaxx")", "strip", R"(["x"])", R"({})", "a|xxaxx"},
    {R"(" a ")", "strip", R"([])", R"({"chars": " "})", "ERROR"},
    {R"("ab")", "strip", R"([5])", R"({})", "ERROR"},
    {R"("  a ")", "lstrip", R"([])", R"({})", "a |  a "},
    {R"(" a  ")", "rstrip", R"([])", R"({})", " a| a  "},
    {R"("abcba")", "rstrip", R"(["ab"])", R"({})", "abc|abcba"},
    {R"("\u2003a\u00a0")", "strip", R"([])", R"({})", "a| a "},
    {R"("ab")", "startswith", R"(["a"])", R"({})", "True|ab"},
    {R"("ab")", "startswith", R"([["x","a"]])", R"({})", "ERROR"},
    {R"("ab")", "endswith", R"(["b", 0, 1])", R"({})", "False|ab"},
    {R"("ab")", "endswith", R"(["a", 0, 1])", R"({})", "True|ab"},
    {R"("ab")", "startswith", R"([5])", R"({})", "ERROR"},
    {R"("héllo")", "startswith", R"(["llo", 2])", R"({})", "True|héllo"},
    {R"("abcabc")", "find", R"(["c"])", R"({})", "2|abcabc"},
    {R"("abcabc")", "rfind", R"(["c"])", R"({})", "5|abcabc"},
    {R"("abcabc")", "find", R"(["c", 3])", R"({})", "5|abcabc"},
    {R"("abcabc")", "find", R"(["z"])", R"({})", "-1|abcabc"},
    {R"("ab")", "find", R"(["b", null, 5])", R"({})", "1|ab"},
    {R"("ab")", "find", R"(["b", "1"])", R"({})", "ERROR"},
    {R"("ab")", "index", R"(["z"])", R"({})", "ERROR"},
    {R"("ab")", "rindex", R"(["a"])", R"({})", "0|ab"},
    {R"("héllo")", "find", R"(["l"])", R"({})", "2|héllo"},
    {R"("abc")", "count", R"([""])", R"({})", "4|abc"},
    {R"("aaaa")", "count", R"(["aa"])", R"({})", "2|aaaa"},
    {R"("ab")", "find", R"([5])", R"({})", "ERROR"},
    {R"("aaa")", "replace", R"(["a", "b"])", R"({})", "bbb|aaa"},
    {R"("aaa")", "replace", R"(["a", "b", 2])", R"({})", "bba|aaa"},
    {R"("ab")", "replace", R"(["a", "b"])", R"({"count": 1})", "ERROR"},
    {R"("ab")", "replace", R"([1, "b"])", R"({})", "ERROR"},
    {R"("abc")", "replace", R"(["", "-"])", R"({})", "-a-b-c-|abc"},
    {R"("hello World")", "upper", R"([])", R"({})", "HELLO WORLD|hello World"},
    {R"("Straße")", "upper", R"([])", R"({})", "STRASSE|Straße"},
    {R"("ΑΣ")", "lower", R"([])", R"({})", "ας|ΑΣ"},
    {R"("hello wORLD 3rd")", "title", R"([])", R"({})", "Hello World 3Rd|hello wORLD 3rd"},
    {R"("hELLO")", "capitalize", R"([])", R"({})", "Hello|hELLO"},
    {R"("Hello")", "swapcase", R"([])", R"({})", "hELLO|Hello"},
    {R"("Straße")", "casefold", R"([])", R"({})", "strasse|Straße"},
    {R"("a")", "upper", R"([1])", R"({})", "ERROR"},
    {R"("12")", "isdigit", R"([])", R"({})", "True|12"},
    {R"("²")", "isdigit", R"([])", R"({})", "True|²"},
    {R"("²")", "isdecimal", R"([])", R"({})", "False|²"},
    {R"("½")", "isnumeric", R"([])", R"({})", "True|½"},
    {R"("ab")", "isalpha", R"([])", R"({})", "True|ab"},
    {R"("a1")", "isalnum", R"([])", R"({})", "True|a1"},
    {R"("")", "isspace", R"([])", R"({})", "False|"},
    {R"(" \t")", "isspace", R"([])", R"({})", "True| \t"},
    {R"("AB")", "isupper", R"([])", R"({})", "True|AB"},
    {R"("ab")", "islower", R"([])", R"({})", "True|ab"},
    {R"("Ab Cd")", "istitle", R"([])", R"({})", "True|Ab Cd"},
    {R"("é")", "isascii", R"([])", R"({})", "False|é"},
    {R"("a_1")", "isidentifier", R"([])", R"({})", "True|a_1"},
    {R"("a\n")", "isprintable", R"([])", R"({})", "False|a\n"},
    {R"("a")", "center", R"([5, "*"])", R"({})", "**a**|a"},
    {R"("a")", "center", R"([5, "xy"])", R"({})", "ERROR"},
    {R"("a")", "ljust", R"([3, "*"])", R"({})", "a**|a"},
    {R"("a")", "rjust", R"([3])", R"({})", "  a|a"},
    {R"("-42")", "zfill", R"([6])", R"({})", "-00042|-42"},
    {R"("a")", "zfill", R"(["5"])", R"({})", "ERROR"},
    {R"("a\tb")", "expandtabs", R"([])", R"({"tabsize": 4})", "a   b|a\tb"},
    {R"("a=b=c")", "partition", R"(["="])", R"({})", "('a', '=', 'b=c')|a=b=c"},
    {R"("a=b=c")", "rpartition", R"(["="])", R"({})", "('a=b', '=', 'c')|a=b=c"},
    {R"("abc")", "partition", R"(["x"])", R"({})", "('abc', '', '')|abc"},
    {R"("ab")", "partition", R"([""])", R"({})", "ERROR"},
    {R"("prefix-x")", "removeprefix", R"(["prefix-"])", R"({})", "x|prefix-x"},
    {R"("x.txt")", "removesuffix", R"([".txt"])", R"({})", "x|x.txt"},
    {R"(",")", "join", R"([["a","b"]])", R"({})", "a,b|,"},
    {R"(",")", "join", R"(["abc"])", R"({})", "a,b,c|,"},
    {R"(",")", "join", R"([[1]])", R"({})", "ERROR"},
    {R"("{} and {}")", "format", R"(["a", 1])", R"({})", "a and 1|{} and {}"},
    {R"("{1}{0}{1}")", "format", R"(["a", "b"])", R"({})", "bab|{1}{0}{1}"},
    {R"("{name}!")", "format", R"([])", R"({"name": "x"})", "x!|{name}!"},
    {R"("{0[a]}|{0.a}")", "format", R"([{"a": 1}])", R"({})", "1|1|{0[a]}|{0.a}"},
    {R"("{:>8.3f}|{:^7}|{:*<5}|{!r}")", "format", R"([3.14159, "mid", "ab", "q"])", R"({})",
     "   3.142|  mid  |ab***|'q'|{:>8.3f}|{:^7}|{:*<5}|{!r}"},
    {R"("{:,}|{:_b}|{:e}|{:%}|{:.0%}|{:#x}|{:08.2f}|{:+d}")", "format",
     R"([1234567, 255, 12345.678, 0.25, 0.256, 255, -3.14159, 5])", R"({})",
     "1,234,567|1111_1111|1.234568e+04|25.000000%|26%|0xff|-0003.14|+5|{:,}|{:_b}|{:e}|{:%}|{:.0%}|"
     "{:#x}|{:08.2f}|{:+d}"},
    {R"("{} {1}")", "format", R"([1, 2])", R"({})", "ERROR"},
    {R"("{1}")", "format", R"([1])", R"({})", "ERROR"},
    {R"("{a}")", "format", R"([1])", R"({})", "ERROR"},
    {R"("{{}}{}")", "format", R"(["x"])", R"({})", "{}x|{{}}{}"},
    {R"("{:5}|{:5}|{:.2}|{:.3}|{:g}|{:n}")", "format", R"([3, "s", 1234.5, 100.0, 1e16, 1234.5])",
     R"({})", "    3|s    |1.2e+03|1e+02|1e+16|1234.5|{:5}|{:5}|{:.2}|{:.3}|{:g}|{:n}"},
    {R"("{}")", "format", R"([null])", R"({})", "None|{}"},
    {R"("{:5}")", "format", R"([null])", R"({})", "ERROR"},
    {R"("}")", "format", R"([])", R"({})", "ERROR"},
    {R"("{0:{1}}")", "format", R"(["a", 4])", R"({})", "a   |{0:{1}}"},
    {R"("{!s:>4}{!a}")", "format", R"([1, "é"])", R"({})", "   1'\\xe9'|{!s:>4}{!a}"},
    {R"("Hello {name}")", "format_map", R"([{"name": "x"}])", R"({})", "Hello x|Hello {name}"},
    {R"([3,1,2])", "append", R"([4])", R"({})", "None|[3, 1, 2, 4]"},
    {R"([3,1,2])", "pop", R"([])", R"({})", "2|[3, 1]"},
    {R"([3,1,2])", "pop", R"([0])", R"({})", "3|[1, 2]"},
    {R"([])", "pop", R"([])", R"({})", "ERROR"},
    {R"([1])", "pop", R"([5])", R"({})", "ERROR"},
    {R"([1,2])", "insert", R"([-10, 9])", R"({})", "None|[9, 1, 2]"},
    {R"([1,2])", "insert", R"([1, 9])", R"({})", "None|[1, 9, 2]"},
    {R"([1,2,1])", "index", R"([1, 1])", R"({})", "2|[1, 2, 1]"},
    {R"([1])", "index", R"([5])", R"({})", "ERROR"},
    {R"([1,2,1])", "count", R"([1])", R"({})", "2|[1, 2, 1]"},
    {R"([1,2])", "reverse", R"([])", R"({})", "None|[2, 1]"},
    {R"([3,1,2])", "sort", R"([])", R"({})", "None|[1, 2, 3]"},
    {R"([3,1,2])", "sort", R"([])", R"({"reverse": true})", "None|[3, 2, 1]"},
    {R"([2,1])", "sort", R"([true])", R"({})", "ERROR"},
    {R"([1,"a"])", "sort", R"([])", R"({})", "ERROR"},
    {R"(["b","A"])", "sort", R"([])", R"({})", "None|['A', 'b']"},
    {R"([1,2])", "copy", R"([])", R"({})", "[1, 2]|[1, 2]"},
    {R"([1,2])", "clear", R"([])", R"({})", "None|[]"},
    {R"([1])", "extend", R"(["ab"])", R"({})", "None|[1, 'a', 'b']"},
    {R"([1,2,1])", "remove", R"([1])", R"({})", "None|[2, 1]"},
    {R"([1])", "remove", R"([5])", R"({})", "ERROR"},
    {R"([1])", "sort", R"([])", R"({"key": null})", "None|[1]"},
    {R"({"a":1})", "get", R"(["a"])", R"({})", "1|{'a': 1}"},
    {R"({"a":1})", "get", R"(["b"])", R"({})", "None|{'a': 1}"},
    {R"({"a":1})", "get", R"(["b", 2])", R"({})", "2|{'a': 1}"},
    {R"({"a":1})", "get", R"([[1]])", R"({})", "ERROR"},
    {R"({"a":1})", "get", R"([])", R"({"key": "a"})", "ERROR"},
    {R"({"a":1})", "setdefault", R"(["c", 3])", R"({})", "3|{'a': 1, 'c': 3}"},
    {R"({"a":1})", "setdefault", R"(["a", 3])", R"({})", "1|{'a': 1}"},
    {R"({"a":1})", "update", R"([{"e":5}])", R"({"f":6})", "None|{'a': 1, 'e': 5, 'f': 6}"},
    {R"({"a":1})", "update", R"([[["b",2]]])", R"({})", "None|{'a': 1, 'b': 2}"},
    {R"({"a":1})", "pop", R"(["a"])", R"({})", "1|{}"},
    {R"({"a":1})", "pop", R"(["zz", 0])", R"({})", "0|{'a': 1}"},
    {R"({})", "pop", R"(["x"])", R"({})", "ERROR"},
    {R"({"a":1,"f":6})", "popitem", R"([])", R"({})", "('f', 6)|{'a': 1}"},
    {R"({})", "popitem", R"([])", R"({})", "ERROR"},
    {R"({"a":1})", "copy", R"([])", R"({})", "{'a': 1}|{'a': 1}"},
    {R"({"a":1})", "clear", R"([])", R"({})", "None|{}"},
};

TEST(MethodsTest, MatchJinja2) {
  for (const MethodCase& c : kMethodCases) {
    SCOPED_TRACE(std::string(c.self) + "." + c.name + " args " + c.positional + " " + c.keywords);
    const Value self = J(c.self);
    const MethodFn fn = find_method(self.kind(), c.name);
    ASSERT_NE(fn, nullptr);
    FakeInterp interp;
    CallArgs args = make_args(c.positional, c.keywords);
    const Result<Value> result = fn(self, args, interp);
    const std::string got = result.is_ok() ? to_str(*result) + "|" + to_str(self)
                                           : "ERROR: " + result.status().message();
    if (std::string_view(c.expected) == "ERROR") {
      EXPECT_TRUE(is_error(got)) << got;
    } else {
      EXPECT_EQ(got, c.expected);
    }
  }
}

TEST(MethodsTest, LookupByKind) {
  EXPECT_NE(find_method(Kind::kString, "strip"), nullptr);
  EXPECT_NE(find_method(Kind::kString, "format"), nullptr);
  EXPECT_NE(find_method(Kind::kList, "append"), nullptr);
  EXPECT_NE(find_method(Kind::kDict, "items"), nullptr);
  EXPECT_EQ(find_method(Kind::kString, "append"), nullptr);
  EXPECT_EQ(find_method(Kind::kDict, "append"), nullptr);
  EXPECT_EQ(find_method(Kind::kInt, "real"), nullptr);
  EXPECT_EQ(find_method(Kind::kString, "__class__"), nullptr);
}

TEST(MethodsTest, TuplesOnlyCountAndIndex) {
  const Value tuple = Value::tuple({Value(1), Value(2), Value(1)});
  FakeInterp interp;
  CallArgs one = make_args("[1]");
  EXPECT_EQ(to_str(*find_method(Kind::kList, "count")(tuple, one, interp)), "2");
  CallArgs two = make_args("[2]");
  EXPECT_EQ(to_str(*find_method(Kind::kList, "index")(tuple, two, interp)), "1");
  CallArgs missing = make_args("[5]");
  // {{ (1,2).index(5) }}: ValueError tuple.index(x): x not in tuple
  EXPECT_EQ(find_method(Kind::kList, "index")(tuple, missing, interp).status().message(),
            "tuple.index(x): x not in tuple");
  CallArgs item = make_args("[3]");
  // {{ (1,2).append(1) }}: UndefinedError 'tuple object' has no attribute 'append'
  EXPECT_FALSE(find_method(Kind::kList, "append")(tuple, item, interp).is_ok());
  EXPECT_EQ(to_str(tuple), "(1, 2, 1)");
}

TEST(MethodsTest, ItemsAreTuplesAndMutationIsShared) {
  const Value dict = J(R"({"a": 1, "b": [2]})");
  FakeInterp interp;
  CallArgs none;
  const Value items = *find_method(Kind::kDict, "items")(dict, none, interp);
  EXPECT_EQ(to_str(items), "[('a', 1), ('b', [2])]");
  // The list inside is shared, as in Python: appending through items() shows in the dict.
  const Value inner = items.list_data().items[1].list_data().items[1];
  CallArgs three = make_args("[3]");
  ASSERT_TRUE(find_method(Kind::kList, "append")(inner, three, interp).is_ok());
  EXPECT_EQ(to_str(dict), "{'a': 1, 'b': [2, 3]}");
}

TEST(MethodsTest, KeysValuesItemsAreMarkedAsViews) {
  const Value dict = J(R"({"a": 1, "b": 2})");
  FakeInterp interp;
  for (const auto& [name, type, items] :
       {std::tuple{"keys", "dict_keys", "['a', 'b']"},
        std::tuple{"values", "dict_values", "[1, 2]"},
        std::tuple{"items", "dict_items", "[('a', 1), ('b', 2)]"}}) {
    CallArgs none;
    const Value view = *find_method(Kind::kDict, name)(dict, none, interp);
    ASSERT_TRUE(view.is_list());
    EXPECT_EQ(view.list_data().python_type, type);
    EXPECT_EQ(to_str(Value::list(view.list_data().items)), items);
  }
}

TEST(MethodsTest, SortKeyFunctionsAreRefused) {
  const Value list = J("[2, 1]");
  FakeInterp interp;
  CallArgs args;
  args.keyword.emplace_back("key", Value("x"));
  EXPECT_FALSE(find_method(Kind::kList, "sort")(list, args, interp).is_ok());
}

}  // namespace
}  // namespace hearth::jinja
