// Errors: every parse and render failure is a Status "line L, column C: <reason>". The reasons
// are the messages Python's Jinja2 gives for the same template (checked against it); the
// positions point at the offending token: the tag name, the operator, the `.` or `[` of a
// lookup, the `(` of a call, the filter name, the `is` of a test.
#include <gtest/gtest.h>

#include <string>

#include "template_test_util.h"

namespace hearth::jinja {
namespace {

using testing::failure;

struct ErrorCase {
  const char* name;
  const char* source;
  const char* message;
};

std::string error_case_name(const ::testing::TestParamInfo<ErrorCase>& info) {
  return info.param.name;
}

// Variables every render case sees.
constexpr const char* kContext =
    R"({"d": {}, "l": [1], "s": "str", "messages": [{"content": "hi"}]})";

const ErrorCase kParseErrors[] = {
    {"UnclosedVariable", "{{ x",
     "line 1, column 5: unexpected end of template, expected 'end of print statement'."},
    {"UnclosedFor", "{% for x in y %}",
     "line 1, column 17: Unexpected end of template. Jinja was looking for the following tags: "
     "'endfor' or 'else'. The innermost block that needs to be closed is 'for'."},
    {"WrongEndTag", "{% if x %}\n  {% endfor %}",
     "line 2, column 6: Encountered unknown tag 'endfor'. Jinja was looking for the following "
     "tags: "
     "'elif' or 'else' or 'endif'. The innermost block that needs to be closed is 'if'."},
    {"NestingMistake", "{% if x %}{% for y in z %}{% endif %}",
     "line 1, column 30: Encountered unknown tag 'endif'. You probably made a nesting mistake. "
     "Jinja is expecting this tag, but currently looking for 'endfor' or 'else'. The innermost "
     "block that needs to be closed is 'for'."},
    {"StrayEndTag", "{% endif %}", "line 1, column 4: Encountered unknown tag 'endif'."},
    {"UnknownTag", "a\n{% frobnicate %}",
     "line 2, column 4: Encountered unknown tag 'frobnicate'."},
    {"ElifAfterElse", "{% if x %}{% else %}{% elif y %}{% endif %}",
     "line 1, column 24: Encountered unknown tag 'elif'. Jinja was looking for the following tags: "
     "'endif'. The innermost block that needs to be closed is 'if'."},
    {"EmptyTag", "{% %}", "line 1, column 4: tag name expected"},
    {"EmptyExpression", "{{ }}",
     "line 1, column 4: Expected an expression, got 'end of print statement'"},
    {"DanglingOperator", "{{ 'a' ~ }}", "line 1, column 10: unexpected 'end of print statement'"},
    {"ExpectedEndOfStatement", "{% set x.y.z = 2 %}",
     "line 1, column 11: expected token 'end of statement block', got '.'"},
    {"AdjacentIntegers", "{{ 007 }}",
     "line 1, column 6: expected token 'end of print statement', got 'integer'"},
    {"AssignToConstant", "{% set 1 = 2 %}", "line 1, column 8: can't assign to 'const'"},
    {"AssignToList", "{% set [a] = [1] %}", "line 1, column 8: can't assign to 'list'"},
    {"DefaultBeforeRequired", "{% macro m(a=1, b) %}{% endmacro %}",
     "line 1, column 18: non-default argument follows default argument"},
    {"CallBlockNeedsCall", "{% call m %}{% endcall %}", "line 1, column 4: expected call"},
    {"PositionalAfterKeyword", "{{ f(a=1, 2) }}",
     "line 1, column 5: invalid syntax for function call expression"},
    {"BadAttributeName", "{{ a.'b' }}", "line 1, column 6: expected name or number"},
    {"ChainedTests", "{{ a is defined is defined }}",
     "line 1, column 17: You cannot chain multiple tests with is"},
    {"SliceInTupleSubscript", "{{ x[1:2, 3] }}", "line 1, column 6: invalid syntax"},
    {"UnknownFilter", "{{ x | nope }}", "line 1, column 8: No filter named 'nope'."},
    {"UnknownTest", "{{ x is nope }}", "line 1, column 6: No test named 'nope'."},
    {"LoopAsTarget", "{% for loop in x %}{% endfor %}",
     "line 1, column 8: Can't assign to special loop variable in for-loop target"},
    {"CallerWithoutDefault", "{% macro m(caller) %}{{ caller() }}{% endmacro %}",
     "line 1, column 4: When defining macros or call blocks the special \"caller\" argument must "
     "be omitted or be given a default."},
    {"BreakOutsideLoop", "{% break %}", "line 1, column 4: 'break' outside loop"},
    {"ContinueInMacro", "{% for x in y %}{% macro m() %}{% continue %}{% endmacro %}{% endfor %}",
     "line 1, column 35: 'continue' not properly in loop"},
    {"Include", "{% include 'other.jinja' %}",
     "line 1, column 4: the 'include' tag is not supported"},
    {"Extends", "{% extends 'base.jinja' %}",
     "line 1, column 4: the 'extends' tag is not supported"},
    {"Import", "{% import 'm.jinja' as m %}",
     "line 1, column 4: the 'import' tag is not supported"},
    {"FromImport", "{% from 'm.jinja' import x %}",
     "line 1, column 4: the 'from' tag is not supported"},
    {"Block", "{% block body %}{% endblock %}",
     "line 1, column 4: the 'block' tag is not supported"},
    {"LexerError", "x\n{{ a ! b }}", "line 2, column 6: unexpected char '!' at 7"},
};

class ParseErrorTest : public ::testing::TestWithParam<ErrorCase> {};

TEST_P(ParseErrorTest, ReportsJinja2ReasonAtPosition) {
  const ErrorCase& c = GetParam();
  Result<Template> parsed = Template::parse(c.source);
  ASSERT_FALSE(parsed.is_ok()) << c.source;
  EXPECT_EQ(parsed.status().code(), ErrorCode::kInvalidArgument);
  EXPECT_EQ(parsed.status().message(), c.message);
}

INSTANTIATE_TEST_SUITE_P(Jinja2, ParseErrorTest, ::testing::ValuesIn(kParseErrors),
                         error_case_name);

const ErrorCase kRenderErrors[] = {
    {"UndefinedAttributeOfUndefined", "{{ x.y }}", "line 1, column 5: 'x' is undefined"},
    {"MissingDictAttribute", "{{ d.a.b }}", "line 1, column 7: 'dict object' has no attribute 'a'"},
    {"MissingListElement", "{{ l[5].x }}", "line 1, column 8: list object has no element 5"},
    {"MissingListAttribute", "{{ l.nope.x }}",
     "line 1, column 10: 'list object' has no attribute 'nope'"},
    {"AttributeOfNone", "{{ none.x.y }}", "line 1, column 10: 'None' has no attribute 'x'"},
    {"IntPlusStr", "{{ 1 + 'a' }}",
     "line 1, column 6: unsupported operand type(s) for +: 'int' and 'str'"},
    {"StrPlusInt", "{{ 'a' + 1 }}",
     "line 1, column 8: can only concatenate str (not \"int\") to str"},
    {"StrPlusUndefined", "{{ 'a' + nope }}", "line 1, column 8: 'nope' is undefined"},
    {"UndefinedArithmetic", "{{ nope * 2 }}", "line 1, column 9: 'nope' is undefined"},
    {"UnaryMinusOnStr", "{{ -'a' }}", "line 1, column 4: bad operand type for unary -: 'str'"},
    {"DivisionByZero", "{{ 1 / 0 }}", "line 1, column 6: division by zero"},
    {"FloorDivisionByZero", "{{ 1 // 0 }}", "line 1, column 6: integer division or modulo by zero"},
    {"ModuloByZero", "{{ 1 % 0 }}", "line 1, column 6: integer modulo by zero"},
    {"FloatModuloByZero", "{{ 1.5 % 0 }}", "line 1, column 8: float modulo"},
    {"OrderingStrAndInt", "{{ 'a' < 1 }}",
     "line 1, column 8: '<' not supported between instances of 'str' and 'int'"},
    {"OrderingListAndTuple", "{{ [1] >= (1,) }}",
     "line 1, column 8: '>=' not supported between instances of 'list' and 'tuple'"},
    {"OrderingWithUndefined", "{{ nope < 1 }}", "line 1, column 9: 'nope' is undefined"},
    {"InStringNeedsString", "{{ 1 in 'abc' }}",
     "line 1, column 6: 'in <string>' requires string as left operand, not int"},
    {"UnhashableKey", "{{ [1] in {} }}", "line 1, column 8: unhashable type: 'list'"},
    {"CallString", "{{ s() }}", "line 1, column 5: 'str' object is not callable"},
    {"CallUndefined", "{{ nope() }}", "line 1, column 8: 'nope' is undefined"},
    {"CallMissingMethod", "{{ 'abc'.nope() }}",
     "line 1, column 14: 'str object' has no attribute 'nope'"},
    {"IterateInt", "{% for x in 5 %}{% endfor %}",
     "line 1, column 13: 'int' object is not iterable"},
    {"UnpackInt", "{% for a, b in [1] %}{% endfor %}",
     "line 1, column 8: cannot unpack non-iterable int object"},
    {"UnpackTooMany", "{% set a, b = 'abc' %}",
     "line 1, column 8: too many values to unpack (expected 2)"},
    {"MacroTooManyArguments", "{% macro m(a) %}{% endmacro %}{{ m(1, 2) }}",
     "line 1, column 35: macro 'm' takes not more than 1 argument(s)"},
    {"MacroUnknownKeyword", "{% macro m(a) %}{% endmacro %}{{ m(b=1) }}",
     "line 1, column 35: macro 'm' takes no keyword argument 'b'"},
    {"CallBlockWithoutCaller", "{% macro m(a) %}{% endmacro %}{% call m(1) %}{% endcall %}",
     "line 1, column 40: macro 'm' was invoked with two values for the special caller argument. "
     "This is most likely a bug."},
    {"SetAttributeOnString", "{% set s = 'x' %}{% set s.a = 1 %}",
     "line 1, column 21: cannot assign attribute on non-namespace object"},
    {"LoopNotRecursive", "{% for x in [1] %}{{ loop([2]) }}{% endfor %}",
     "line 1, column 26: The loop must have the 'recursive' marker to be called recursively."},
    {"RangeTooBig", "{{ range(200000) }}",
     "line 1, column 9: Range too big. The sandbox blocks ranges larger than MAX_RANGE (100000)."},
    {"RangeZeroStep", "{{ range(1, 2, 0) }}", "line 1, column 9: range() arg 3 must not be zero"},
    {"SliceZeroStep", "{{ l[::0] }}", "line 1, column 6: slice step cannot be zero"},
    {"StarArgsNotIterable", "{{ range(*1) }}",
     "line 1, column 11: Value after * must be an iterable, not int"},
    {"DictUpdateSequence", "{{ dict([[1, 2, 3]]) }}",
     "line 1, column 8: dictionary update sequence element #0 has length 3; 2 is required"},
    {"UnknownFilterInTakenBranch", "{% if true %}{{ x | nope }}{% endif %}",
     "line 1, column 21: No filter named 'nope' found."},
    {"UnknownTestInTest", "{% if x is nope %}{% endif %}",
     "line 1, column 9: No test named 'nope' found."},
    {"InlineIfWithoutElse", "{{ (1 if false).x }}",
     "line 1, column 16: the inline if-expression on line 1 evaluated to false and no else section "
     "was defined."},
    {"LoopOutsideLoop", "{{ loop.index }}", "line 1, column 8: 'loop' is undefined"},
    {"MissingLoopAttribute", "{% for x in [1] %}{{ loop.nope.x }}{% endfor %}",
     "line 1, column 31: 'jinja2.runtime.LoopContext object' has no attribute 'nope'"},
    {"SandboxedAttribute", "{{ d.__class__.x }}",
     "line 1, column 15: access to attribute '__class__' of 'dict' object is unsafe."},
    {"PositionOnLaterLine",
     "line one\n{% for m in messages %}\n  {{ m.content.upper() + 1 }}\n{% endfor %}",
     "line 3, column 24: can only concatenate str (not \"int\") to str"},
};

class RenderErrorTest : public ::testing::TestWithParam<ErrorCase> {};

TEST_P(RenderErrorTest, ReportsJinja2ReasonAtPosition) {
  const ErrorCase& c = GetParam();
  Status status = failure(c.source, kContext);
  ASSERT_FALSE(status.is_ok()) << c.source;
  EXPECT_EQ(status.code(), ErrorCode::kInvalidArgument);
  EXPECT_EQ(status.message(), c.message);
}

INSTANTIATE_TEST_SUITE_P(Jinja2, RenderErrorTest, ::testing::ValuesIn(kRenderErrors),
                         error_case_name);

TEST(RaiseExceptionTest, MessageIsVerbatim) {
  Status status = failure("{{ raise_exception('Only user and assistant roles are supported!') }}");
  EXPECT_EQ(status.code(), ErrorCode::kInvalidArgument);
  EXPECT_EQ(status.message(), "line 1, column 19: Only user and assistant roles are supported!");
}

TEST(RaiseExceptionTest, PositionIsWhereItIsCalledInsideAMacro) {
  Status status = failure(
      "{% macro check(m) %}\n"
      "{% if m.role != 'user' %}{{ raise_exception('bad role: ' ~ m.role) }}{% endif %}\n"
      "{% endmacro %}\n"
      "{{ check({'role': 'x'}) }}");
  EXPECT_EQ(status.message(), "line 2, column 44: bad role: x");
}

TEST(RaiseExceptionTest, ErrorFromMacroCalledByFilterKeepsItsPosition) {
  // map() calls the macro through the builtins; the position is still the macro's.
  Status status = failure(
      "{% macro boom(x) %}{{ raise_exception('no ' ~ x) }}{% endmacro %}"
      "{{ [1] | map('string') | list }}{{ boom(2) }}");
  EXPECT_EQ(status.message(), "line 1, column 38: no 2");
}

TEST(RaiseExceptionTest, ConditionalRaiseOnlyWhenReached) {
  EXPECT_EQ(testing::render("{% if false %}{{ raise_exception('x') }}{% endif %}ok"), "ok");
}

}  // namespace
}  // namespace hearth::jinja
