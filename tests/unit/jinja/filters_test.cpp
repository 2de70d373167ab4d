// The builtin filters called directly, against what Python's Jinja2 3.1.2 prints for
// `{{ x|name(*args, **kwargs) }}` in Hugging Face's configuration (generator results through
// |list). "ERROR" rows are where Jinja2 raises.
#include <gtest/gtest.h>

#include "builtins_test_util.h"
#include "jinja/pystr.h"

namespace hearth::jinja {
namespace {

using testing::FakeInterp;
using testing::filter;
using testing::is_error;
using testing::J;

struct FilterCase {
  const char* name;
  const char* input;
  const char* positional;
  const char* keywords;
  const char* expected;  // "ERROR" where Jinja2 raises
};

// Expected outputs rendered by /usr/bin/python3 with python3-jinja2 3.1.2.
const FilterCase kFilterCases[] = {
    {"abs", R"(-3)", R"([])", R"({})", "3"},
    {"abs", R"(-2.5)", R"([])", R"({})", "2.5"},
    {"abs", R"(true)", R"([])", R"({})", "1"},
    {"abs", R"("x")", R"([])", R"({})", "ERROR"},
    {"attr", R"({"a": 1})", R"(["a"])", R"({})", ""},
    {"attr", R"("ab")", R"(["nope"])", R"({})", ""},
    {"batch", R"([1,2,3,4,5])", R"([2])", R"({})", "[[1, 2], [3, 4], [5]]"},
    {"batch", R"([1,2,3,4,5])", R"([2, "x"])", R"({})", "[[1, 2], [3, 4], [5, 'x']]"},
    {"batch", R"([1,2])", R"([0])", R"({})", "[[], [1, 2]]"},
    {"batch", R"([1,2,3])", R"([5, 0])", R"({})", "[[1, 2, 3, 0, 0]]"},
    {"capitalize", R"("hELLO wORLD")", R"([])", R"({})", "Hello world"},
    {"capitalize", R"("ßtraße")", R"([])", R"({})", "Sstraße"},
    {"capitalize", R"(5)", R"([])", R"({})", "5"},
    {"center", R"("abc")", R"([9])", R"({})", "   abc   "},
    {"center", R"("ab")", R"([9])", R"({})", "    ab   "},
    {"center", R"("abc")", R"([])", R"({})",
     "                                      abc                                       "},
    {"center", R"("ab")", R"(["x"])", R"({})", "ERROR"},
    {"center", R"("é")", R"([4])", R"({})", " é  "},
    {"count", R"([1,2])", R"([])", R"({})", "2"},
    {"length", R"("héllo")", R"([])", R"({})", "5"},
    {"length", R"({"a":1})", R"([])", R"({})", "1"},
    {"length", R"(5)", R"([])", R"({})", "ERROR"},
    {"default", R"("")", R"(["d"])", R"({})", ""},
    {"default", R"("")", R"(["d", true])", R"({})", "d"},
    {"d", R"(0)", R"(["z"])", R"({"boolean": true})", "z"},
    {"default", R"(null)", R"(["d"])", R"({})", "None"},
    {"default", R"([])", R"([])", R"({"boolean": true})", ""},
    {"dictsort", R"({"b":1,"A":2,"a":3})", R"([])", R"({})", "[('A', 2), ('a', 3), ('b', 1)]"},
    {"dictsort", R"({"b":1,"A":2,"a":3})", R"([true])", R"({})", "[('A', 2), ('a', 3), ('b', 1)]"},
    {"dictsort", R"({"b":1,"A":2,"a":3})", R"([])", R"({"by":"value","reverse":true})",
     "[('a', 3), ('A', 2), ('b', 1)]"},
    {"dictsort", R"({"b":1})", R"([])", R"({"by":"x"})", "ERROR"},
    {"dictsort", R"([1])", R"([])", R"({})", "ERROR"},
    {"escape", R"("a<b>\"&'")", R"([])", R"({})", "a&lt;b&gt;&#34;&amp;&#39;"},
    {"e", R"(5)", R"([])", R"({})", "5"},
    {"e", R"(null)", R"([])", R"({})", "None"},
    {"forceescape", R"("<a>")", R"([])", R"({})", "&lt;a&gt;"},
    {"escape", R"([1, "<"])", R"([])", R"({})", "[1, &#39;&lt;&#39;]"},
    {"first", R"([1,2])", R"([])", R"({})", "1"},
    {"first", R"([])", R"([])", R"({})", ""},
    {"first", R"("ab")", R"([])", R"({})", "a"},
    {"first", R"({"a":1,"b":2})", R"([])", R"({})", "a"},
    {"first", R"(5)", R"([])", R"({})", "ERROR"},
    {"last", R"([1,2])", R"([])", R"({})", "2"},
    {"last", R"("ab")", R"([])", R"({})", "b"},
    {"last", R"({"a":1,"b":2})", R"([])", R"({})", "b"},
    {"last", R"(5)", R"([])", R"({})", "ERROR"},
    {"last", R"([])", R"([])", R"({})", ""},
    {"float", R"("4.5")", R"([])", R"({})", "4.5"},
    {"float", R"("x")", R"([])", R"({})", "0.0"},
    {"float", R"("nan")", R"([])", R"({})", "nan"},
    {"float", R"("1_0.5")", R"([])", R"({})", "10.5"},
    {"float", R"(3)", R"([])", R"({})", "3.0"},
    {"float", R"(" 1e3 ")", R"([])", R"({})", "1000.0"},
    {"float", R"("a")", R"(["x"])", R"({})", "x"},
    {"float", R"([1])", R"([])", R"({})", "0.0"},
    {"float", R"("-Infinity")", R"([])", R"({})", "-inf"},
    {"float", R"(".5")", R"([])", R"({})", "0.5"},
    {"float", R"("1__0")", R"([])", R"({})", "0.0"},
    {"float", R"("1e")", R"([])", R"({})", "0.0"},
    {"float", R"("٣.٥")", R"([])", R"({})", "3.5"},
    {"float", R"(true)", R"([])", R"({})", "1.0"},
    {"format", R"("%s-%d")", R"(["a", 3])", R"({})", "a-3"},
    {"format", R"("%(a)s")", R"([])", R"({"a": 1})", "1"},
    {"format", R"("%s")", R"([1])", R"({"a": 2})", "ERROR"},
    {"format", R"("%s")", R"([])", R"({})", "ERROR"},
    {"format", R"("%5.1f|%-4d|%x|%r")", R"([3.14159, 7, 255, "q"])", R"({})", "  3.1|7   |ff|'q'"},
    {"indent", R"("a\nb\n\nc")", R"([])", R"({})", "a\n    b\n\n    c"},
    {"indent", R"("a\nb\n\nc\n")", R"([2, true, true])", R"({})", "  a\n  b\n  \n  c\n  "},
    {"indent", R"("a\nb")", R"(["> "])", R"({})", "a\n> b"},
    {"indent", R"("a\r\nb\u000bc")", R"([1])", R"({})", "a\n b\n c"},
    {"indent", R"("")", R"([2, true])", R"({})", "  "},
    {"indent", R"(5)", R"([])", R"({})", "ERROR"},
    {"indent", R"("a\nb")", R"([2.0])", R"({})", "ERROR"},
    {"indent", R"("a\nb")", R"([])", R"({"width": 8, "first": true})", "        a\n        b"},
    {"int", R"("42")", R"([])", R"({})", "42"},
    {"int", R"("42.7")", R"([])", R"({})", "42"},
    {"int", R"(" 42 ")", R"([])", R"({})", "42"},
    {"int", R"("0x1A")", R"([])", R"({"base": 16})", "26"},
    {"int", R"("0x1A")", R"([])", R"({})", "0"},
    {"int", R"("1_000")", R"([])", R"({})", "1000"},
    {"int", R"("abc")", R"([7])", R"({})", "7"},
    {"int", R"(3.9)", R"([])", R"({})", "3"},
    {"int", R"(true)", R"([])", R"({})", "1"},
    {"int", R"(null)", R"([])", R"({})", "0"},
    {"int", R"("1e3")", R"([])", R"({})", "1000"},
    {"int", R"("inf")", R"([])", R"({})", "ERROR"},
    {"int", R"("nan")", R"([])", R"({})", "0"},
    {"int", R"("12")", R"([])", R"({"base": 3})", "5"},
    {"int", R"("٣")", R"([])", R"({})", "3"},
    {"int", R"("1__0")", R"([])", R"({})", "0"},
    {"int", R"("0b101")", R"([])", R"({"base": 0})", "5"},
    {"int", R"("010")", R"([])", R"({"base": 0})", "10"},
    {"int", R"("z")", R"([])", R"({"base": 36})", "35"},
    {"int", R"(" -2.5 ")", R"([])", R"({})", "-2"},
    {"int", R"(-7.9)", R"([])", R"({})", "-7"},
    {"int", R"("5")", R"([])", R"({"base": 1})", "5"},
    {"items", R"({"a": 1, "b": [2]})", R"([])", R"({})", "[('a', 1), ('b', [2])]"},
    {"items", R"([1])", R"([])", R"({})", "ERROR"},
    {"join", R"([1, "a", null])", R"([","])", R"({})", "1,a,None"},
    {"join", R"([{"n":"x"},{"n":"y"}])", R"(["-"])", R"({"attribute":"n"})", "x-y"},
    {"join", R"("abc")", R"(["."])", R"({})", "a.b.c"},
    {"join", R"({"a":1,"b":2})", R"([])", R"({})", "ab"},
    {"join", R"(5)", R"([])", R"({})", "ERROR"},
    {"join", R"([[1,2],{"a":"é"}])", R"([" | "])", R"({})", "[1, 2] | {'a': 'é'}"},
    {"list", R"("abc")", R"([])", R"({})", "['a', 'b', 'c']"},
    {"list", R"({"a":1})", R"([])", R"({})", "['a']"},
    {"list", R"(5)", R"([])", R"({})", "ERROR"},
    {"lower", R"("ÀB İ ΑΣ")", R"([])", R"({})", "àb i̇ ας"},
    {"upper", R"("straße ﬁ")", R"([])", R"({})", "STRASSE FI"},
    {"upper", R"(null)", R"([])", R"({})", "NONE"},
    {"map", R"(["a","B"])", R"(["upper"])", R"({})", "['A', 'B']"},
    {"map", R"([{"a":{"b":[5,6]}}])", R"([])", R"({"attribute": "a.b.1"})", "[6]"},
    {"map", R"([{"a":1},{}])", R"([])", R"({"attribute":"a","default":"z"})", "[1, 'z']"},
    {"map", R"([1,2])", R"([])", R"({})", "ERROR"},
    {"map", R"([1,2])", R"([])", R"({"attribute":"a","x":1})", "ERROR"},
    {"map", R"([])", R"(["nope"])", R"({})", "[]"},
    {"map", R"([[1,2],[3]])", R"(["join", "-"])", R"({})", "['1-2', '3']"},
    {"map", R"([{"a":1}])", R"(["tojson"])", R"({})", "['{\"a\": 1}']"},
    {"map", R"([{"a":1},{}])", R"([])", R"({"attribute":"a"})", "[1, Undefined]"},
    {"max", R"(["b","A","a"])", R"([])", R"({})", "b"},
    {"min", R"(["b","A","a"])", R"([])", R"({})", "A"},
    {"max", R"(["b","A","a"])", R"([true])", R"({})", "b"},
    {"max", R"([])", R"([])", R"({})", ""},
    {"max", R"([1, "a"])", R"([])", R"({})", "ERROR"},
    {"min", R"([{"v":3},{"v":1}])", R"([])", R"({"attribute":"v"})", "{'v': 1}"},
    {"max", R"([2, 2.5, 1])", R"([])", R"({})", "2.5"},
    {"pprint", R"({"b":1,"a":[1,{"z":1,"y":2}]})", R"([])", R"({})",
     "{'a': [1, {'y': 2, 'z': 1}], 'b': 1}"},
    {"pprint", R"("x'")", R"([])", R"({})", "\"x'\""},
    {"reject", R"([1,2,3])", R"(["gt", 1])", R"({})", "[1]"},
    {"reject", R"([0,1,""])", R"([])", R"({})", "[0, '']"},
    {"rejectattr", R"([{"r":"u"},{}])", R"(["r","defined"])", R"({})", "[{}]"},
    {"replace", R"("aaa")", R"(["a","b"])", R"({})", "bbb"},
    {"replace", R"("aaa")", R"(["a","b",2])", R"({})", "bba"},
    {"replace", R"("ab")", R"(["a", 1])", R"({})", "1b"},
    {"replace", R"(5)", R"(["5","x"])", R"({})", "x"},
    {"replace", R"("aaa")", R"(["a","b","1"])", R"({})", "ERROR"},
    {"replace", R"("abc")", R"(["","-"])", R"({})", "-a-b-c-"},
    {"reverse", R"("abé")", R"([])", R"({})", "éba"},
    {"reverse", R"([1,2])", R"([])", R"({})", "[2, 1]"},
    {"reverse", R"(5)", R"([])", R"({})", "ERROR"},
    {"round", R"(42.55)", R"([])", R"({})", "43.0"},
    {"round", R"(42.55)", R"([1])", R"({})", "42.5"},
    {"round", R"(42.55)", R"([1, "floor"])", R"({})", "42.5"},
    {"round", R"(42)", R"([])", R"({})", "42"},
    {"round", R"(42)", R"([1, "ceil"])", R"({})", "42.0"},
    {"round", R"(2.5)", R"([])", R"({})", "2.0"},
    {"round", R"(0.125)", R"([2])", R"({})", "0.12"},
    {"round", R"(1234)", R"([-2])", R"({})", "1200"},
    {"round", R"(1250)", R"([-2])", R"({})", "1200"},
    {"round", R"(1350)", R"([-2])", R"({})", "1400"},
    {"round", R"(42.5)", R"([])", R"({"method":"x"})", "ERROR"},
    {"round", R"("3")", R"([])", R"({})", "ERROR"},
    {"round", R"(true)", R"([])", R"({})", "1"},
    {"round", R"(2.675)", R"([2])", R"({})", "2.67"},
    {"round", R"(1250.0)", R"([-2])", R"({})", "1200.0"},
    {"round", R"(1251.5)", R"([-1])", R"({})", "1250.0"},
    {"round", R"(-2.5)", R"([])", R"({})", "-2.0"},
    {"round", R"(1.15)", R"([1, "ceil"])", R"({})", "1.2"},
    {"round", R"(-1.15)", R"([1, "floor"])", R"({})", "-1.2"},
    {"round", R"(1e300)", R"([2, "ceil"])", R"({})", "1e+300"},
    {"safe", R"("<b>")", R"([])", R"({})", "<b>"},
    {"string", R"([1,2])", R"([])", R"({})", "[1, 2]"},
    {"string", R"(null)", R"([])", R"({})", "None"},
    {"string", R"(1.0)", R"([])", R"({})", "1.0"},
    {"string", R"({"a": "x'y"})", R"([])", R"({})", "{'a': \"x'y\"}"},
    {"select", R"([1,2,3,4])", R"(["odd"])", R"({})", "[1, 3]"},
    {"select", R"([1,0,2])", R"([])", R"({})", "[1, 2]"},
    {"select", R"([1,2,3,4])", R"(["divisibleby", 2])", R"({})", "[2, 4]"},
    {"select", R"([1])", R"(["nope"])", R"({})", "ERROR"},
    {"selectattr", R"([{"r":"u"},{"r":"s"},{}])", R"(["r","equalto","u"])", R"({})",
     "[{'r': 'u'}]"},
    {"selectattr", R"([{"r":"u"},{"r":""},{}])", R"(["r"])", R"({})", "[{'r': 'u'}]"},
    {"selectattr", R"([1])", R"([])", R"({})", "ERROR"},
    {"selectattr", R"([{"t":"a"},{"x":1}])", R"(["t", "defined"])", R"({})", "[{'t': 'a'}]"},
    {"slice", R"([1,2,3,4,5])", R"([3])", R"({})", "[[1, 2], [3, 4], [5]]"},
    {"slice", R"([1,2,3,4,5])", R"([3, 0])", R"({})", "[[1, 2], [3, 4], [5, 0]]"},
    {"slice", R"([1,2])", R"([0])", R"({})", "ERROR"},
    {"slice", R"([1,2,3])", R"([5])", R"({})", "[[1], [2], [3], [], []]"},
    {"sort", R"([3,1,2])", R"([])", R"({})", "[1, 2, 3]"},
    {"sort", R"(["b","A","a","B"])", R"([])", R"({})", "['A', 'a', 'b', 'B']"},
    {"sort", R"(["b","A","a","B"])", R"([])", R"({"case_sensitive": true})",
     "['A', 'B', 'a', 'b']"},
    {"sort", R"([{"a":2},{"a":1}])", R"([])", R"({"attribute":"a"})", "[{'a': 1}, {'a': 2}]"},
    {"sort", R"([1,"a"])", R"([])", R"({})", "ERROR"},
    {"sort", R"([null,null])", R"([])", R"({})", "[None, None]"},
    {"sort", R"([3,1,2])", R"([true])", R"({})", "[3, 2, 1]"},
    {"sort", R"([{"a":1,"b":2},{"a":1,"b":1},{"a":0,"b":5}])", R"([])", R"({"attribute":"a,b"})",
     "[{'a': 0, 'b': 5}, {'a': 1, 'b': 1}, {'a': 1, 'b': 2}]"},
    {"sort", R"([{"a":{"b":"Y"}},{"a":{"b":"x"}}])", R"([])", R"({"attribute":"a.b"})",
     "[{'a': {'b': 'x'}}, {'a': {'b': 'Y'}}]"},
    {"sort", R"([[2,"b"],[1,"a"]])", R"([])", R"({"attribute":"0"})", "[[1, 'a'], [2, 'b']]"},
    {"sort", R"([{"n":"b","v":1},{"n":"a","v":1},{"n":"c","v":0}])", R"([])",
     R"({"attribute":"v","reverse":true})",
     "[{'n': 'b', 'v': 1}, {'n': 'a', 'v': 1}, {'n': 'c', 'v': 0}]"},
    {"striptags", R"("a <b>bold</b> <!-- c -->  &amp; &lt;x&gt; &nbsp;y &#65; &#x42; &hellip;")",
     R"([])", R"({})", "a bold & <x>  y A B …"},
    {"striptags", R"("<p>one\n two</p>")", R"([])", R"({})", "one two"},
    {"sum", R"([1,2,3])", R"([])", R"({})", "6"},
    {"sum", R"([1.5,2])", R"([])", R"({"start": 1})", "4.5"},
    {"sum", R"(["a"])", R"([])", R"({})", "ERROR"},
    {"sum", R"([{"x":1},{"x":2}])", R"([])", R"({"attribute":"x"})", "3"},
    {"sum", R"([[1],[2]])", R"([])", R"({"start": []})", "[1, 2]"},
    {"sum", R"([])", R"([])", R"({})", "0"},
    {"title", R"("hello world-foo")", R"([])", R"({})", "Hello World-Foo"},
    {"title", R"("hELLO (wORLD) [x]y")", R"([])", R"({})", "Hello (World) [X]y"},
    {"title", R"("it's o'neil")", R"([])", R"({})", "It's O'neil"},
    {"title", R"("ßa ΑΣ b")", R"([])", R"({})", "SSa Ασ B"},
    {"title", R"("a\tb<c{d")", R"([])", R"({})", "A\tB<C{D"},
    {"tojson", R"({"a":1})", R"([])", R"({"indent": 2})", "{\n  \"a\": 1\n}"},
    {"tojson", R"("é")", R"([])", R"({})", "\"é\""},
    {"tojson", R"("é")", R"([])", R"({"ensure_ascii": true})", "\"\\u00e9\""},
    {"tojson", R"({"b":1,"a":2})", R"([])", R"({"sort_keys": true, "separators": [",", ":"]})",
     "{\"a\":2,\"b\":1}"},
    {"tojson", R"([1])", R"([])", R"({"indent": "ab"})", "[\nab1\n]"},
    {"tojson", R"([1, [2]])", R"([])", R"({"separators": [";", "="]})", "[1;[2]]"},
    {"tojson", R"([1])", R"([])", R"({"separators": ";"})", "ERROR"},
    {"tojson", R"([1])", R"([])", R"({"indent": 1.5})", "ERROR"},
    {"tojson", R"({"a":[1,2,{}],"b":[],"c":{"d":null}})", R"([2])", R"({})",
     "{\"a\": [1, 2, {}], \"b\": [], \"c\": {\"d\": null}}"},
    {"tojson", R"([1])", R"([])", R"({"indent": true})", "[\n 1\n]"},
    {"trim", R"("  xx  ")", R"([])", R"({})", "xx"},
    {"trim", R"("xxaxx")", R"(["x"])", R"({})", "a"},
    {"trim", R"("ab")", R"([5])", R"({})", "ERROR"},
    {"trim", R"(5)", R"([])", R"({})", "5"},
    {"trim", R"("\u3000 a\u00a0\n")", R"([])", R"({})", "a"},
    {"truncate", R"("foo bar baz qux")", R"([9])", R"({})", "foo..."},
    {"truncate", R"("foo bar baz qux")", R"([9, true])", R"({})", "foo ba..."},
    {"truncate", R"("foo bar baz qux")", R"([11])", R"({})", "foo bar baz qux"},
    {"truncate", R"("foo bar baz qux")", R"([11, false, "...", 0])", R"({})", "foo bar..."},
    {"truncate", R"("foobarbazqux")", R"([5, false, "...", 0])", R"({})", "fo..."},
    {"truncate", R"("ab")", R"([2, false, "...", 0])", R"({})", "ERROR"},
    {"truncate", R"(5)", R"([])", R"({})", "ERROR"},
    {"truncate", R"("abc")", R"([3])", R"({"leeway": -1})", "ERROR"},
    {"truncate", R"("héllo wörld")", R"([7, false, "…", 0])", R"({})", "héllo…"},
    {"unique", R"(["b","A","a"])", R"([])", R"({})", "['b', 'A']"},
    {"unique", R"(["b","A","a"])", R"([true])", R"({})", "['b', 'A', 'a']"},
    {"unique", R"([[1],[1]])", R"([])", R"({})", "ERROR"},
    {"unique", R"([{"k":"A"},{"k":"a"},{"k":"b"}])", R"([])", R"({"attribute":"k"})",
     "[{'k': 'A'}, {'k': 'b'}]"},
    {"unique", R"([1, 1.0, true, "1"])", R"([])", R"({})", "[1, '1']"},
    {"urlencode", R"("a b/c&d=é?")", R"([])", R"({})", "a%20b/c%26d%3D%C3%A9%3F"},
    {"urlencode", R"({"a":"b c","x":1})", R"([])", R"({})", "a=b+c&x=1"},
    {"urlencode", R"([["a",1],["b","c d"]])", R"([])", R"({})", "a=1&b=c+d"},
    {"urlencode", R"(5)", R"([])", R"({})", "5"},
    {"wordcount", R"("hello, world! foo_bar 3x é")", R"([])", R"({})", "5"},
    {"wordwrap", R"("The quick brown fox jumps over the lazy dog")", R"([10])", R"({})",
     "The quick\nbrown fox\njumps over\nthe lazy\ndog"},
    {"wordwrap", R"("a-very-long-hyphenated-word here")", R"([8])", R"({})",
     "a-very-\nlong-hyp\nhenated-\nword\nhere"},
    {"wordwrap", R"("x")", R"([0])", R"({})", "ERROR"},
    {"wordwrap", R"("ab  cd\n\nef")", R"([3])", R"({})", "ab\ncd\n\nef"},
    {"wordwrap", R"(5)", R"([])", R"({})", "ERROR"},
    {"wordwrap", R"("aaaaaaaaaa bb")", R"([4])", R"({"break_long_words": false})",
     "aaaaaaaaaa\nbb"},
    {"wordwrap", R"("one two three")", R"([5])", R"({"wrapstring": "<br>"})",
     "one<br>two<br>three"},
    {"xmlattr", R"({"class":"a\"b","n":null,"x":1})", R"([])", R"({})",
     " class=\"a&#34;b\" x=\"1\""},
    {"xmlattr", R"({"a b":1})", R"([])", R"({})", "ERROR"},
    {"xmlattr", R"({"a":1})", R"([false])", R"({})", "a=\"1\""},
    {"xmlattr", R"(5)", R"([])", R"({})", "ERROR"},
    {"filesizeformat", R"(1000)", R"([])", R"({})", "1.0 kB"},
    {"filesizeformat", R"(1)", R"([])", R"({})", "1 Byte"},
    {"filesizeformat", R"(999)", R"([])", R"({})", "999 Bytes"},
    {"filesizeformat", R"(1500000)", R"([])", R"({})", "1.5 MB"},
    {"filesizeformat", R"(1500000)", R"([true])", R"({})", "1.4 MiB"},
    {"filesizeformat", R"("2048")", R"([true])", R"({})", "2.0 KiB"},
    {"filesizeformat", R"(1e30)", R"([])", R"({})", "1000000.0 YB"},
    {"filesizeformat", R"(-5)", R"([])", R"({})", "-5 Bytes"},
    {"filesizeformat", R"("x")", R"([])", R"({})", "ERROR"},
    {"groupby", R"([{"c":"NY","n":1},{"c":"ca","n":2},{"c":"CA","n":3}])", R"(["c"])", R"({})",
     "[('ca', [{'c': 'ca', 'n': 2}, {'c': 'CA', 'n': 3}]), ('NY', [{'c': 'NY', 'n': 1}])]"},
    {"groupby", R"([{"c":"NY","n":1},{"c":"ca","n":2},{"c":"CA","n":3}])", R"(["c"])",
     R"({"case_sensitive": true})",
     "[('CA', [{'c': 'CA', 'n': 3}]), ('NY', [{'c': 'NY', 'n': 1}]), ('ca', [{'c': 'ca', 'n': "
     "2}])]"},
    {"groupby", R"([{"c":"a"},{"n":1}])", R"(["c"])", R"({"default": "z"})",
     "[('a', [{'c': 'a'}]), ('z', [{'n': 1}])]"},
};

TEST(FiltersTest, MatchJinja2) {
  for (const FilterCase& c : kFilterCases) {
    SCOPED_TRACE(std::string(c.name) + " on " + c.input + " args " + c.positional + " " +
                 c.keywords);
    const std::string got = filter(c.name, J(c.input), c.positional, c.keywords);
    if (std::string_view(c.expected) == "ERROR") {
      EXPECT_TRUE(is_error(got)) << got;
    } else {
      EXPECT_EQ(got, c.expected);
    }
  }
}

TEST(FiltersTest, EveryJinja2FilterIsKnown) {
  for (const char* name :
       {"abs",       "attr",       "batch",       "capitalize", "center",  "count",
        "d",         "default",    "dictsort",    "e",          "escape",  "filesizeformat",
        "first",     "float",      "forceescape", "format",     "groupby", "indent",
        "int",       "join",       "last",        "length",     "list",    "lower",
        "items",     "map",        "min",         "max",        "pprint",  "random",
        "reject",    "rejectattr", "replace",     "reverse",    "round",   "safe",
        "select",    "selectattr", "slice",       "sort",       "string",  "striptags",
        "sum",       "title",      "trim",        "truncate",   "unique",  "upper",
        "urlencode", "wordcount",  "wordwrap",    "xmlattr",    "tojson"}) {
    EXPECT_NE(find_filter(name), nullptr) << name;
  }
  EXPECT_EQ(find_filter("nope"), nullptr);
  EXPECT_EQ(find_filter(""), nullptr);
}

TEST(FiltersTest, RandomIsRefusedAsNondeterministic) {
  const std::string got = filter("random", J("[1, 2, 3]"));
  EXPECT_TRUE(is_error(got));
  EXPECT_NE(got.find("random"), std::string::npos);
}

TEST(FiltersTest, UndefinedInputs) {
  const Value undefined = Value::undefined("'x' is undefined");
  // Jinja2 prints these as '' / '0' / '[]' / 'd' for an undefined x.
  EXPECT_EQ(filter("string", undefined), "");
  EXPECT_EQ(filter("length", undefined), "0");
  EXPECT_EQ(filter("list", undefined), "[]");
  EXPECT_EQ(filter("default", undefined, R"(["d"])"), "d");
  EXPECT_EQ(filter("upper", undefined), "");
  EXPECT_EQ(filter("first", undefined), "");
  EXPECT_EQ(filter("join", undefined, R"([","])"), "");
  EXPECT_EQ(filter("trim", undefined), "");
  EXPECT_EQ(filter("items", undefined), "[]");
  // ... and raise for these.
  EXPECT_EQ(filter("int", undefined), "ERROR: 'x' is undefined");
  EXPECT_EQ(filter("float", undefined), "ERROR: 'x' is undefined");
  EXPECT_TRUE(is_error(filter("tojson", undefined)));
  EXPECT_TRUE(is_error(filter("abs", undefined)));
}

TEST(FiltersTest, ErrorMessagesReadLikePython) {
  EXPECT_EQ(filter("tojson", J(R"({"a": 1})"), "[]", R"({"bogus": 1})"),
            "ERROR: tojson() got an unexpected keyword argument 'bogus'");
  EXPECT_EQ(filter("center", J(R"("a")"), R"([1, 2])"),
            "ERROR: center() takes at most 1 argument (2 given)");
  EXPECT_EQ(filter("sort", J(R"([1, "a"])")),
            "ERROR: '<' not supported between instances of 'str' and 'int'");
  EXPECT_EQ(filter("dictsort", J(R"({"a": 1})"), "[]", R"({"by": "x"})"),
            "ERROR: You can only sort by either \"key\" or \"value\"");
}

TEST(FiltersTest, EscapeMarksSafeAndSafeIsNotEscapedAgain) {
  FakeInterp interp;
  CallArgs none;
  auto escaped = find_filter("escape")(Value("<a>"), none, interp);
  ASSERT_TRUE(escaped.is_ok());
  EXPECT_TRUE(escaped->is_safe());
  EXPECT_EQ(escaped->as_string(), "&lt;a&gt;");
  auto twice = find_filter("escape")(*escaped, none, interp);
  EXPECT_EQ(twice->as_string(), "&lt;a&gt;");
  auto forced = find_filter("forceescape")(*escaped, none, interp);
  EXPECT_EQ(forced->as_string(), "&amp;lt;a&amp;gt;");
  // Markup % args escapes the arguments: {{ '<%s>'|safe|format('<b>') }} -> <&lt;b&gt;>
  auto safe = find_filter("safe")(Value("<%s>"), none, interp);
  CallArgs args;
  args.positional.emplace_back("<b>");
  EXPECT_EQ(testing::printed(find_filter("format")(*safe, args, interp)), "<&lt;b&gt;>");
}

TEST(FiltersTest, GroupbyGivesGrouperListPairs) {
  EXPECT_EQ(filter("groupby", J(R"([{"k": 2, "v": "a"}, {"k": 1, "v": "b"}, {"k": 2, "v": "c"}])"),
                   R"(["k"])"),
            "[(1, [{'k': 1, 'v': 'b'}]), (2, [{'k': 2, 'v': 'a'}, {'k': 2, 'v': 'c'}])]");
}

TEST(FiltersTest, LazyResultsBehaveLikePythonIterators) {
  // Jinja2's map/select/... return generators: {{ x|map('upper')|tojson }} raises
  // "Object of type generator is not JSON serializable", |length raises, |list works.
  const Value words = J(R"(["a", "b"])");
  FakeInterp interp;
  CallArgs upper = testing::make_args(R"(["upper"])");
  const Value mapped = *find_filter("map")(words, upper, interp);
  EXPECT_EQ(mapped.list_data().python_type, "generator");
  EXPECT_EQ(filter("tojson", mapped), "ERROR: Object of type generator is not JSON serializable");
  EXPECT_EQ(filter("length", mapped), "ERROR: object of type 'generator' has no len()");
  EXPECT_EQ(filter("last", mapped), "ERROR: 'generator' object is not reversible");
  EXPECT_EQ(filter("list", mapped), "['A', 'B']");
  EXPECT_EQ(filter("join", mapped, R"(["-"])"), "A-B");
  EXPECT_EQ(filter("first", mapped), "A");
  EXPECT_EQ(testing::test("sequence", mapped), "False");
  EXPECT_EQ(testing::test("iterable", mapped), "True");
  // reverse of a list is an iterator too; of an iterator, Jinja2 falls back to a real list.
  CallArgs none;
  const Value reversed = *find_filter("reverse")(words, none, interp);
  EXPECT_EQ(reversed.list_data().python_type, "list_reverseiterator");
  EXPECT_EQ(find_filter("reverse")(mapped, none, interp)->list_data().python_type, "");
  EXPECT_TRUE(find_filter("list")(mapped, none, interp)->list_data().python_type.empty());
}

TEST(FiltersTest, BuildingBigStringsIsCharged) {
  FakeInterp interp;
  interp.limit = 100;
  CallArgs args;
  args.positional.emplace_back(1000);
  auto centered = find_filter("center")(Value("x"), args, interp);
  ASSERT_FALSE(centered.is_ok());
  EXPECT_EQ(centered.status().code(), ErrorCode::kResourceExhausted);
}

}  // namespace
}  // namespace hearth::jinja
