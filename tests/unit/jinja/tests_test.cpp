// The builtin tests called directly, against what Python's Jinja2 3.1.2 prints for
// `{{ x is name(*args) }}` (operator-named tests through select(), as templates use them).
#include <gtest/gtest.h>

#include "builtins_test_util.h"

namespace hearth::jinja {
namespace {

using testing::is_error;
using testing::J;
using testing::test;

struct TestCase {
  const char* name;
  const char* input;
  const char* positional;
  const char* expected;  // "True", "False" or "ERROR"
};

// Expected outputs rendered by /usr/bin/python3 with python3-jinja2 3.1.2.
const TestCase kTestCases[] = {
    {"odd", R"(3)", R"([])", "True"},
    {"odd", R"(3.0)", R"([])", "True"},
    {"odd", R"(true)", R"([])", "True"},
    {"odd", R"(-3)", R"([])", "True"},
    {"even", R"(2.5)", R"([])", "False"},
    {"even", R"(-4)", R"([])", "True"},
    {"odd", R"(null)", R"([])", "ERROR"},
    {"odd", R"("ab")", R"([])", "ERROR"},
    {"even", R"("%s")", R"([])", "False"},
    {"odd", R"(1)", R"([2])", "ERROR"},
    {"divisibleby", R"(10)", R"([3])", "False"},
    {"divisibleby", R"(9)", R"([3.0])", "True"},
    {"divisibleby", R"(7.5)", R"([2.5])", "True"},
    {"divisibleby", R"(3)", R"([0])", "ERROR"},
    {"divisibleby", R"(3.0)", R"([0])", "ERROR"},
    {"divisibleby", R"(-9)", R"([3])", "True"},
    {"divisibleby", R"(9)", R"([-3])", "True"},
    {"filter", R"("upper")", R"([])", "True"},
    {"filter", R"("x")", R"([])", "False"},
    {"filter", R"(5)", R"([])", "False"},
    {"filter", R"([1])", R"([])", "ERROR"},
    {"test", R"("odd")", R"([])", "True"},
    {"test", R"("upper")", R"([])", "True"},
    {"test", R"("==")", R"([])", "True"},
    {"boolean", R"(1)", R"([])", "False"},
    {"boolean", R"(true)", R"([])", "True"},
    {"integer", R"(true)", R"([])", "False"},
    {"integer", R"(3)", R"([])", "True"},
    {"integer", R"(3.0)", R"([])", "False"},
    {"float", R"(1.0)", R"([])", "True"},
    {"float", R"(1)", R"([])", "False"},
    {"number", R"(true)", R"([])", "True"},
    {"number", R"(1.5)", R"([])", "True"},
    {"number", R"("a")", R"([])", "False"},
    {"number", R"(null)", R"([])", "False"},
    {"upper", R"("AB")", R"([])", "True"},
    {"upper", R"("AB1")", R"([])", "True"},
    {"upper", R"("1")", R"([])", "False"},
    {"lower", R"("ab1")", R"([])", "True"},
    {"lower", R"(5)", R"([])", "False"},
    {"lower", R"(null)", R"([])", "False"},
    {"upper", R"("ÀÉ")", R"([])", "True"},
    {"lower", R"("ß")", R"([])", "True"},
    {"mapping", R"({})", R"([])", "True"},
    {"mapping", R"([])", R"([])", "False"},
    {"sequence", R"("a")", R"([])", "True"},
    {"sequence", R"({})", R"([])", "True"},
    {"sequence", R"(5)", R"([])", "False"},
    {"sequence", R"(null)", R"([])", "False"},
    {"sequence", R"([])", R"([])", "True"},
    {"iterable", R"("a")", R"([])", "True"},
    {"iterable", R"(5)", R"([])", "False"},
    {"iterable", R"({})", R"([])", "True"},
    {"iterable", R"([])", R"([])", "True"},
    {"iterable", R"(null)", R"([])", "False"},
    {"string", R"("a")", R"([])", "True"},
    {"string", R"(1)", R"([])", "False"},
    {"none", R"(null)", R"([])", "True"},
    {"none", R"(0)", R"([])", "False"},
    {"true", R"(true)", R"([])", "True"},
    {"true", R"(1)", R"([])", "False"},
    {"false", R"(false)", R"([])", "True"},
    {"false", R"(0)", R"([])", "False"},
    {"sameas", R"(null)", R"([null])", "True"},
    {"sameas", R"(1)", R"([1])", "True"},
    {"sameas", R"(true)", R"([1])", "False"},
    {"sameas", R"(true)", R"([true])", "True"},
    {"sameas", R"(1000)", R"([1000])", "False"},
    {"sameas", R"(1.0)", R"([1.0])", "False"},
    {"sameas", R"([])", R"([[]])", "False"},
    {"sameas", R"("a")", R"(["a"])", "True"},
    {"escaped", R"("a")", R"([])", "False"},
    {"callable", R"(1)", R"([])", "False"},
    {"callable", R"("a")", R"([])", "False"},
    {"in", R"(1)", R"([[1,2]])", "True"},
    {"in", R"("a")", R"(["cat"])", "True"},
    {"in", R"("k")", R"([{"k":1}])", "True"},
    {"in", R"(1)", R"([5])", "ERROR"},
    {"in", R"(3)", R"([[1,2]])", "False"},
    {"in", R"([1])", R"([[[1]]])", "True"},
    {"eq", R"(1)", R"([1.0])", "True"},
    {"==", R"(1)", R"([true])", "True"},
    {"equalto", R"("a")", R"(["a"])", "True"},
    {"ne", R"(1)", R"([2])", "True"},
    {"!=", R"("a")", R"(["a"])", "False"},
    {"gt", R"(2)", R"([1])", "True"},
    {">", R"(1)", R"([2])", "False"},
    {"greaterthan", R"(2.5)", R"([2])", "True"},
    {"lt", R"("a")", R"(["b"])", "True"},
    {"<", R"("b")", R"(["a"])", "False"},
    {"lessthan", R"(1)", R"([true])", "False"},
    {"ge", R"(1)", R"(["a"])", "ERROR"},
    {"ge", R"(2)", R"([2])", "True"},
    {">=", R"([1,2])", R"([[1,1]])", "True"},
    {"le", R"([1,2])", R"([[1,2]])", "True"},
    {"<=", R"("x")", R"(["x"])", "True"},
    {"le", R"(null)", R"([null])", "ERROR"},
    {"defined", R"(1)", R"([])", "True"},
    {"undefined", R"(1)", R"([])", "False"},
    {"defined", R"(null)", R"([])", "True"},
};

TEST(TestsTest, MatchJinja2) {
  for (const TestCase& c : kTestCases) {
    SCOPED_TRACE(std::string(c.name) + " on " + c.input + " args " + c.positional);
    const std::string got = test(c.name, J(c.input), c.positional);
    if (std::string_view(c.expected) == "ERROR") {
      EXPECT_TRUE(is_error(got)) << got;
    } else {
      EXPECT_EQ(got, c.expected);
    }
  }
}

TEST(TestsTest, EveryJinja2TestIsKnown) {
  for (const char* name :
       {"odd",    "even",     "divisibleby", "defined",     "undefined", "filter",   "test",
        "none",   "boolean",  "false",       "true",        "integer",   "float",    "lower",
        "upper",  "string",   "mapping",     "number",      "sequence",  "iterable", "callable",
        "sameas", "escaped",  "in",          "==",          "eq",        "equalto",  "!=",
        "ne",     ">",        "gt",          "greaterthan", "ge",        ">=",       "<",
        "lt",     "lessthan", "<=",          "le"}) {
    EXPECT_NE(find_test(name), nullptr) << name;
  }
  EXPECT_EQ(find_test("nope"), nullptr);
}

TEST(TestsTest, UndefinedValues) {
  const Value undefined = Value::undefined("'x' is undefined");
  // {{ x is defined }} False, {{ x is undefined }} True; an undefined value is iterable,
  // a sequence and (Jinja2's Undefined has __call__) callable, but not a number or mapping.
  EXPECT_EQ(test("defined", undefined), "False");
  EXPECT_EQ(test("undefined", undefined), "True");
  EXPECT_EQ(test("none", undefined), "False");
  EXPECT_EQ(test("iterable", undefined), "True");
  EXPECT_EQ(test("sequence", undefined), "True");
  EXPECT_EQ(test("callable", undefined), "True");
  EXPECT_EQ(test("number", undefined), "False");
  EXPECT_EQ(test("mapping", undefined), "False");
  EXPECT_EQ(test("string", undefined), "False");
  EXPECT_EQ(test("odd", undefined), "ERROR: 'x' is undefined");
  EXPECT_EQ(test("in", J("1"), "[]"), "ERROR: test_in() missing required argument 'other'");
}

TEST(TestsTest, SameasUsesIdentityForContainers) {
  const Value list = J("[1]");
  testing::FakeInterp interp;
  CallArgs args;
  args.positional.push_back(list);
  EXPECT_TRUE(*find_test("sameas")(list, args, interp));
  CallArgs other;
  other.positional.push_back(J("[1]"));
  EXPECT_FALSE(*find_test("sameas")(list, other, interp));
}

TEST(TestsTest, EscapedSeesMarkup) {
  EXPECT_EQ(test("escaped", Value::safe_string("<b>")), "True");
  EXPECT_EQ(test("escaped", Value("<b>")), "False");
}

}  // namespace
}  // namespace hearth::jinja
