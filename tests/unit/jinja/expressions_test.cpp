// Expressions: literals, operators with Python's semantics and Jinja2's precedence, undefined
// values, attribute/item lookup, slices, calls, filters and tests, globals. Every expected
// output in the table is what Python's Jinja2 renders for the same template and context.
#include <gtest/gtest.h>

#include <string>

#include "template_test_util.h"

namespace hearth::jinja {
namespace {

using testing::OracleCase;
using testing::render;

const OracleCase kExpressionCases[] = {
    {"StringLiteralsBothQuotes", R"J({{ 'single' }}|{{ "double" }}|{{ 'it''s' }}|{{ "a" 'b' }})J",
     R"J({})J", R"J(single|double|its|ab)J"},
    {"StringEscapes", R"J({{ 'a\nb\tc\\d\'e\"f' }})J", R"J({})J",
     R"J(a
b	c\d'e"f)J"},
    {"StringHexAndUnicodeEscapes", R"J({{ '\x41\u00e9\U0001F600\N{BULLET}' }})J", R"J({})J",
     R"J(Aé😀•)J"},
    {"StringOctalEscape", R"J({{ '\101\0' | length }})J", R"J({})J", R"J(2)J"},
    {"StringUnknownEscapeKept", R"J({{ '\d\w\s' }})J", R"J({})J", R"J(\d\w\s)J"},
    {"StringBackslashBeforeNonAscii", R"J({{ '\é' }})J", R"J({})J", R"J(\xe9)J"},
    {"StringLineContinuation", R"J({{ 'a\
b' }})J",
     R"J({})J", R"J(ab)J"},
    {"Integers", R"J({{ 42 }}|{{ 1_000_000 }}|{{ 0x1F }}|{{ 0o17 }}|{{ 0b101 }}|{{ 0 }}|{{ 00 }})J",
     R"J({})J", R"J(42|1000000|31|15|5|0|0)J"},
    {"Floats", R"J({{ 1.5 }}|{{ 1e3 }}|{{ 1_0.5 }}|{{ 2.5E-3 }}|{{ 1e400 }}|{{ 0.1 + 0.2 }})J",
     R"J({})J", R"J(1.5|1000.0|10.5|0.0025|inf|0.30000000000000004)J"},
    {"BooleansAndNone", R"J({{ true }}{{ True }}{{ false }}{{ False }}{{ none }}{{ None }})J",
     R"J({})J", R"J(TrueTrueFalseFalseNoneNone)J"},
    {"Lists", R"J({{ [] }}{{ [1, 'a', [none]] }}{{ [1, 2,] }})J", R"J({})J",
     R"J([][1, 'a', [None]][1, 2])J"},
    {"Tuples", R"J({{ () }}{{ (1,) }}{{ (1, 'a') }}{{ ((1, 2), 3) }})J", R"J({})J",
     R"J(()(1,)(1, 'a')((1, 2), 3))J"},
    {"Dicts",
     R"J({{ {} }}{{ {'a': 1, 'b': [true]} }}{{ {1: 'x', 1.5: none} }}{{ {'a': 1, 'a': 2} }})J",
     R"J({})J", R"J({}{'a': 1, 'b': [True]}{1: 'x', 1.5: None}{'a': 2})J"},
    {"DictKeyEquality", R"J({{ {1: 'int', 1.0: 'float', true: 'bool'} }})J", R"J({})J",
     R"J({1: 'bool'})J"},
    {"PrintTupleWithoutParens", R"J({{ 1, 'two' }})J", R"J({})J", R"J((1, 'two'))J"},
    {"Arithmetic",
     R"J({{ 1 + 2 }}|{{ 7 - 10 }}|{{ 3 * 4 }}|{{ 7 / 2 }}|{{ 6 / 3 }}|{{ 7 // 2 }}|{{ 7 % 3 }}|{{ 2 ** 10 }})J",
     R"J({})J", R"J(3|-3|12|3.5|2.0|3|1|1024)J"},
    {"FloorDivisionAndModuloSigns",
     R"J({{ -7 // 2 }}|{{ 7 // -2 }}|{{ -7 % 3 }}|{{ 7 % -3 }}|{{ -7.5 // 2 }}|{{ -7.5 % 2 }}|{{ 7.5 % -2 }})J",
     R"J({})J", R"J(-4|-4|2|-2|-4.0|0.5|-0.5)J"},
    {"MixedIntFloat",
     R"J({{ 1 + 1.5 }}|{{ 2 * 0.5 }}|{{ 10 // 4.0 }}|{{ 2 ** -1 }}|{{ 2 ** 0.5 }}|{{ 4 ** 0.5 }})J",
     R"J({})J", R"J(2.5|1.0|2.0|0.5|1.4142135623730951|2.0)J"},
    {"BoolIsInt", R"J({{ true + true }}|{{ true * 3 }}|{{ -true }}|{{ 5 - false }})J", R"J({})J",
     R"J(2|3|-1|5)J"},
    {"PowerIsLeftAssociative", R"J({{ 2 ** 3 ** 2 }}|{{ -2 ** 2 }})J", R"J({})J", R"J(64|4)J"},
    {"Precedence",
     R"J({{ 1 + 2 * 3 }}|{{ (1 + 2) * 3 }}|{{ 2 * 3 ** 2 }}|{{ (1 + 2) ~ 3 * 2 }}|{{ 2 * 3 ~ 4 }}|{{ 10 - 2 - 3 }}|{{ 100 / 10 / 5 }})J",
     R"J({})J", R"J(7|9|18|36|64|5|2.0)J"},
    {"UnaryOperators", R"J({{ -5 }}|{{ +5 }}|{{ - -5 }}|{{ -(1 + 2) }}|{{ -1.5 }})J", R"J({})J",
     R"J(-5|5|5|-3|-1.5)J"},
    {"UnaryMinusBindsLooserThanFilter", R"J({{ -3 | abs }}|{{ -(3 | abs) }})J", R"J({})J",
     R"J(3|-3)J"},
    {"StringAndListOperators",
     R"J({{ 'ab' + 'cd' }}|{{ 'ab' * 3 }}|{{ 3 * 'x' }}|{{ 'x' * 0 }}|{{ 'x' * -1 }}|{{ [1] + [2] }}|{{ [0] * 3 }}|{{ (1,) + (2,) }}|{{ (1,) * 2 }})J",
     R"J({})J", R"J(abcd|ababab|xxx|||[1, 2]|[0, 0, 0]|(1, 2)|(1, 1))J"},
    {"TildeConcatenatesStrings", R"J({{ 1 ~ 'a' ~ none ~ true ~ [1] ~ nothing ~ 2.0 }})J",
     R"J({})J", R"J(1aNoneTrue[1]2.0)J"},
    {"PercentFormatting",
     R"J({{ '%s and %s' % ('a', 1) }}|{{ '%d%%' % 50 }}|{{ '%05.1f' % 3.14159 }}|{{ '%x' % 255 }}|{{ '%(k)s' % {'k': 'v'} }}|{{ '%r' % 'q' }})J",
     R"J({})J", R"J(a and 1|50%|003.1|ff|v|'q')J"},
    {"Comparisons",
     R"J({{ 1 == 1.0 }}{{ 1 != 2 }}{{ 2 > 1 }}{{ 2 >= 2 }}{{ 1 < 2 }}{{ 1 <= 0 }}{{ 'a' < 'b' }}{{ [1, 2] < [1, 3] }}{{ (1, 2) == (1, 2) }}{{ [1] == (1,) }})J",
     R"J({})J", R"J(TrueTrueTrueTrueTrueFalseTrueTrueTrueFalse)J"},
    {"ChainedComparisons", R"J({{ 1 < 2 < 3 }}{{ 1 < 3 < 2 }}{{ 3 > 2 > 1 }}{{ 1 == 1 == 1.0 }})J",
     R"J({})J", R"J(TrueFalseTrueTrue)J"},
    {"EqualityAcrossTypes",
     R"J({{ 1 == true }}{{ 0 == false }}{{ '1' == 1 }}{{ none == none }}{{ none == false }}{{ {'a': [1]} == {'a': [1]} }})J",
     R"J({})J", R"J(TrueTrueFalseTrueFalseTrue)J"},
    {"Membership",
     R"J({{ 'b' in 'abc' }}{{ 'x' not in 'abc' }}{{ 2 in [1, 2] }}{{ 'k' in {'k': 1} }}{{ 1.0 in [1] }}{{ 'a' in nothing }})J",
     R"J({})J", R"J(TrueTrueTrueTrueTrueFalse)J"},
    {"LogicReturnsOperands",
     R"J({{ 0 or 'x' }}|{{ 'a' and 'b' }}|{{ '' and 'b' }}|{{ none or [] }}|{{ not 0 }}|{{ not 'a' }}|{{ 1 and 0 or 5 }})J",
     R"J({})J", R"J(x|b||[]|True|False|5)J"},
    {"NotBindsLooserThanComparison",
     R"J({{ not 1 == 2 }}|{{ not 1 in [1] }}|{{ not none is none }})J", R"J({})J",
     R"J(True|False|False)J"},
    {"AndBindsTighterThanOr", R"J({{ true or false and false }}|{{ (true or false) and false }})J",
     R"J({})J", R"J(True|False)J"},
    {"ShortCircuitSkipsErrors", R"J({{ false and (1 / 0) }}|{{ true or undefined_name.attr }})J",
     R"J({})J", R"J(False|True)J"},
    {"ConditionalExpression",
     R"J({{ 'yes' if 1 else 'no' }}|{{ 'yes' if 0 else 'no' }}|{{ 'a' if false else 'b' if true else 'c' }}|[{{ 'x' if false }}])J",
     R"J({})J", R"J(yes|no|b|[])J"},
    {"ConditionalWithoutElseIsUndefined", R"J({{ ('x' if false) is defined }})J", R"J({})J",
     R"J(False)J"},
    {"UndefinedPrintsEmpty",
     R"J([{{ missing }}][{{ missing | length }}][{{ missing is defined }}][{{ missing is undefined }}])J",
     R"J({})J", R"J([][0][False][True])J"},
    {"UndefinedIsFalsyAndIterable",
     R"J({% if not missing %}falsy{% endif %}{% for x in missing %}never{% endfor %})J", R"J({})J",
     R"J(falsy)J"},
    {"UndefinedEqualsOnlyUndefined",
     R"J({{ missing == other_missing }}{{ missing == none }}{{ missing != '' }})J", R"J({})J",
     R"J(TrueFalseTrue)J"},
    {"UndefinedConcatenatesAsEmpty", R"J([{{ 'a' ~ missing ~ 'b' }}])J", R"J({})J", R"J([ab])J"},
    {"UndefinedDefaultFilter",
     R"J({{ missing | default('fallback') }}|{{ none | default('x') }}|{{ none | default('x', true) }})J",
     R"J({})J", R"J(fallback|None|x)J"},
    {"NoneAndBoolPrint", R"J({{ none }}|{{ true }}|{{ [none, true] }})J", R"J({})J",
     R"J(None|True|[None, True])J"},
    {"FloatPrinting",
     R"J({{ 1.0 }}|{{ 0.1 }}|{{ 1e16 }}|{{ 1e-5 }}|{{ 123456789.0 }}|{{ 3 / 4 }}|{{ -0.0 }})J",
     R"J({})J", R"J(1.0|0.1|1e+16|1e-05|123456789.0|0.75|-0.0)J"},
    {"AttributeLookupPrefersMethods",
     R"J({{ d.items is defined }}|{{ d['items'] }}|{{ d.content }})J",
     R"J({"d": {"items": "key", "content": "c"}})J", R"J(True|key|c)J"},
    {"ItemLookupPrefersKeys",
     R"J({{ d['content'] }}|{{ d.get('content') }}|{{ d['keys'] is defined }})J",
     R"J({"d": {"content": "c"}})J", R"J(c|c|True)J"},
    {"ListIndexing",
     R"J({{ l[0] }}{{ l[-1] }}{{ l.1 }}|{{ l[5] is defined }}|{{ l['x'] is defined }})J",
     R"J({"l": ["a", "b", "c"]})J", R"J(acb|False|False)J"},
    {"StringIndexingByCodePoint", R"J({{ s[0] }}{{ s[1] }}{{ s[-1] }})J",
     R"J({"s": "h\u00e9llo\ud83d\ude00"})J", R"J(hé😀)J"},
    {"TupleAndDictKeys", R"J({{ d[1] }}{{ d[1.0] }}{{ d[true] }})J",
     R"J({"d": {"1": "string key"}})J", R"J()J"},
    {"NestedAccess",
     R"J({{ messages[0].content }}|{{ messages[0]['tool_calls'][0].function.name }}|{{ messages.0.content }})J",
     R"J({"messages": [{"content": "hi", "tool_calls": [{"function": {"name": "f"}}]}]})J",
     R"J(hi|f|hi)J"},
    {"MissingAttributesAreUndefined",
     R"J({{ d.nope is defined }}|{{ d['nope'] is defined }}|{{ l.nope is defined }}|{{ s.nope is defined }}|{{ n.nope is defined }})J",
     R"J({"d": {}, "l": [], "s": "", "n": null})J", R"J(False|False|False|False|False)J"},
    {"SandboxHidesDunderAttributes", R"J({{ d.__class__ is defined }}|{{ d._private }})J",
     R"J({"d": {"_private": "ok"}})J", R"J(False|ok)J"},
    {"Slices",
     R"J({{ l[1:3] }}|{{ l[:2] }}|{{ l[2:] }}|{{ l[-2:] }}|{{ l[::2] }}|{{ l[::-1] }}|{{ l[5:] }}|{{ l[-10:1] }}|{{ l[3:1] }}|{{ l[3:1:-1] }})J",
     R"J({"l": [0, 1, 2, 3, 4]})J",
     R"J([1, 2]|[0, 1]|[2, 3, 4]|[3, 4]|[0, 2, 4]|[4, 3, 2, 1, 0]|[]|[0]|[]|[3, 2])J"},
    {"StringSlicesByCodePoint", R"J({{ s[1:3] }}|{{ s[::-1] }}|{{ s[-2:] }}|{{ s[:none] }})J",
     R"J({"s": "a\u00e9\ud83d\ude00bc"})J", R"J(é😀|cb😀éa|bc|aé😀bc)J"},
    {"TupleSlices", R"J({{ (1, 2, 3)[1:] }}|{{ (1, 2, 3)[:1] }})J", R"J({})J", R"J((2, 3)|(1,))J"},
    {"MethodCalls",
     R"J({{ ' x '.strip() }}|{{ 'a,b'.split(',') }}|{{ 'abc'.upper() }}|{{ d.get('k', 'default') }}|{{ 'x'.startswith('x') }})J",
     R"J({"d": {}})J", R"J(x|['a', 'b']|ABC|default|True)J"},
    {"ListMethodsMutate",
     R"J({% set l = [1] %}{% set _ = l.append(2) %}{{ l }}|{{ l.pop() }}{{ l }})J", R"J({})J",
     R"J([1, 2]|2[1])J"},
    {"CallWithStarArgs",
     R"J({% macro m(a, b, c=0) %}{{ a }}{{ b }}{{ c }}{% endmacro %}{{ m(*[1, 2]) }}|{{ m(1, **{'b': 5, 'c': 6}) }}|{{ m(*[1], **{'b': 2}) }})J",
     R"J({})J", R"J(120|156|120)J"},
    {"CallWithTrailingComma", R"J({% macro m(a, b) %}{{ a }}{{ b }}{% endmacro %}{{ m(1, 2,) }})J",
     R"J({})J", R"J(12)J"},
    {"FiltersChain",
     R"J({{ 'Hello' | upper | replace('L', '_') }}|{{ [3, 1, 2] | sort | join('-') }}|{{ 'x' | center(5) }}|)J",
     R"J({})J", R"J(HE__O|1-2-3|  x  |)J"},
    {"FilterArgumentsWithKeywords",
     R"J({{ [1, 2, 3] | join(d='-') if false else ([1, 2, 3] | join('-')) }}|{{ 'a b' | replace(' ', '_') }})J",
     R"J({})J", R"J(1-2-3|a_b)J"},
    {"FiltersOnExpressions",
     R"J({{ (1, 2) | list }}|{{ 'a' ~ 'b' | upper }}|{{ ('a' ~ 'b') | upper }})J", R"J({})J",
     R"J([1, 2]|aB|AB)J"},
    {"TestsWithAndWithoutArguments",
     R"J({{ 4 is divisibleby 2 }}|{{ 5 is divisibleby(2) }}|{{ 3 is odd }}|{{ x is none }}|{{ x is not none }}|{{ 'a' is string }}|{{ 1 is number }})J",
     R"J({"x": null})J", R"J(True|False|True|True|False|True|True)J"},
    {"TestsWithPostfixArgument",
     R"J({{ 2 is sameas l[0] }}|{{ 'a' is in ['a'] }}|{{ 3 is gt 2 }})J", R"J({"l": [2]})J",
     R"J(True|True|True)J"},
    {"TestBindsLikeFilter", R"J({{ 1 + 2 is odd }}|{{ (1 + 2) is odd }})J", R"J({})J",
     R"J(1|True)J"},
    {"RangeGlobal",
     R"J({{ range(3) | list }}|{{ range(1, 4) | list }}|{{ range(10, 0, -3) | list }}|{{ range(0) | list }}|{{ range(5, 1) | list }})J",
     R"J({})J", R"J([0, 1, 2]|[1, 2, 3]|[10, 7, 4, 1]|[]|[])J"},
    {"DictGlobal",
     R"J({{ dict(a=1, b='x') }}|{{ dict([['k', 'v']]) }}|{{ dict({'a': 1}, b=2) }}|{{ dict() }})J",
     R"J({})J", R"J({'a': 1, 'b': 'x'}|{'k': 'v'}|{'a': 1, 'b': 2}|{})J"},
    {"CyclerGlobal",
     R"J({% set c = cycler('odd', 'even') %}{{ c.next() }} {{ c.next() }} {{ c.next() }} {{ c.current }}{% set _ = c.reset() %} {{ c.next() }})J",
     R"J({})J", R"J(odd even odd even odd)J"},
    {"JoinerGlobal",
     R"J({% set pipe = joiner(' | ') %}{% for x in 'abc' %}{{ pipe() }}{{ x }}{% endfor %})J",
     R"J({})J", R"J(a | b | c)J"},
    {"NamespaceGlobal",
     R"J({% set ns = namespace(a=1) %}{% set ns.b = ns.a + 1 %}{{ ns.b }}|{{ ns }})J", R"J({})J",
     R"J(2|<Namespace {'a': 1, 'b': 2}>)J"},
    {"MarkupConcatenationEscapes",
     R"J({{ '<b>' | safe + '<i>' }}|{{ '<i>' + '<b>' | safe }}|{{ ('<b>' | safe) * 2 }}|{{ '<%s>' | safe % '&' }}|{{ ('<b>' | safe) ~ '<i>' }})J",
     R"J({})J", R"J(<b>&lt;i&gt;|&lt;i&gt;<b>|<b><b>|<&amp;>|<b><i>)J"},
    {"JsonContextValues", R"J({{ i }}|{{ f }}|{{ b }}|{{ n }}|{{ s }}|{{ l }}|{{ o }})J",
     R"J({"i": 3, "f": 2.5, "b": true, "n": null, "s": "str", "l": [1, "a"], "o": {"k": [null]}})J",
     R"J(3|2.5|True|None|str|[1, 'a']|{'k': [None]})J"},
    {"JsonIntegralFloatStaysFloat", R"J({{ f }}|{{ f * 2 }})J", R"J({"f": 2.0})J", R"J(2.0|4.0)J"},
    {"UnicodeText", R"J({{ s | length }}|{{ s | upper }}|{{ s[1] }})J",
     R"J({"s": "\u00e9\ud83d\ude00\u4e2d"})J", R"J(3|É😀中|😀)J"},
};

class ExpressionTest : public ::testing::TestWithParam<OracleCase> {};

TEST_P(ExpressionTest, RendersLikeJinja2) {
  const OracleCase& c = GetParam();
  EXPECT_EQ(render(c.source, c.context), c.expected) << c.source;
}

INSTANTIATE_TEST_SUITE_P(Jinja2, ExpressionTest, ::testing::ValuesIn(kExpressionCases),
                         testing::case_name);

// 2026-08-29 05:20:00 UTC: the same month in every time zone.
constexpr std::time_t kPinnedTime = 1788000000;

TEST(ExpressionTest, StrftimeNowUsesTheRenderClock) {
  RenderOptions options;
  options.now = [] { return kPinnedTime; };
  EXPECT_EQ(render("{{ strftime_now('%Y-%m') }}|{{ strftime_now('%B %Y') }}", "{}", options),
            "2026-08|August 2026");
}

TEST(ExpressionTest, StrftimeNowHasNoTimeZone) {
  // Python formats a naive datetime: %z and %Z are empty.
  RenderOptions options;
  options.now = [] { return kPinnedTime; };
  EXPECT_EQ(render("[{{ strftime_now('%Z%z') }}]", "{}", options), "[]");
}

TEST(ExpressionTest, ContextKeysTheTemplateNeverNamesAreIgnored) {
  EXPECT_EQ(render("{{ a }}", R"({"a": 1, "unused": {"deep": [1, 2, 3]}})"), "1");
}

TEST(ExpressionTest, ContextOverridesGlobals) {
  EXPECT_EQ(render("{{ range }}", R"({"range": "mine"})"), "mine");
}

TEST(ExpressionTest, NullContextRendersWithoutVariables) {
  Result<Template> parsed = Template::parse("[{{ x }}]");
  ASSERT_TRUE(parsed.is_ok());
  Result<std::string> output = parsed->render(nlohmann::ordered_json());
  ASSERT_TRUE(output.is_ok()) << output.status().message();
  EXPECT_EQ(*output, "[]");
}

TEST(ExpressionTest, NonObjectContextIsRejected) {
  Result<Template> parsed = Template::parse("x");
  ASSERT_TRUE(parsed.is_ok());
  Result<std::string> output = parsed->render(nlohmann::ordered_json::array());
  ASSERT_FALSE(output.is_ok());
  EXPECT_EQ(output.status().code(), ErrorCode::kInvalidArgument);
}

TEST(ExpressionTest, RenderingTwiceStartsFromScratch) {
  Result<Template> parsed = Template::parse(
      "{% set ns = namespace(n=0) %}{% for x in xs %}{% set ns.n = ns.n + x %}{% endfor %}"
      "{{ ns.n }}");
  ASSERT_TRUE(parsed.is_ok());
  auto first = parsed->render(nlohmann::ordered_json::parse(R"({"xs": [1, 2]})"));
  auto second = parsed->render(nlohmann::ordered_json::parse(R"({"xs": [10]})"));
  ASSERT_TRUE(first.is_ok() && second.is_ok());
  EXPECT_EQ(*first, "3");
  EXPECT_EQ(*second, "10");
}

}  // namespace
}  // namespace hearth::jinja
