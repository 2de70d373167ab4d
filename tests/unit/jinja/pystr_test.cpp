// Python str semantics: reprs, UTF-8, case mapping and character classes, the str methods
// that cut and search, and the three formatting languages (printf-style %, format specs,
// str.format). Expected values are what /usr/bin/python3 (3.11) printed.
#include "jinja/pystr.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "builtins_test_util.h"

namespace hearth::jinja {
namespace {

using testing::J;
using namespace std::string_view_literals;

// A value from JSON, or one of Python's non-finite floats.
Value V(std::string_view text) {
  if (text == "Infinity") return Value(std::numeric_limits<double>::infinity());
  if (text == "-Infinity") return Value(-std::numeric_limits<double>::infinity());
  if (text == "NaN") return Value(std::numeric_limits<double>::quiet_NaN());
  return J(text);
}

std::string or_error(const Result<std::string>& result) {
  return result.is_ok() ? *result : "ERROR";
}

struct StringCase {
  std::string_view input;  // may hold NUL
  std::string_view expected;
};

const StringCase kReprCases[] = {
    {""sv, "''"sv},
    {"a"sv, "'a'"sv},
    {"it's"sv, "\"it's\""sv},
    {"say \"hi\""sv, "'say \"hi\"'"sv},
    {"both ' and \""sv, "'both \\' and \"'"sv},
    {"tab\there\nnew\rret\\back"sv, "'tab\\there\\nnew\\rret\\\\back'"sv},
    {"\x00"
     "\x07"
     "\x1f"
     "\x7f"
     ""sv,
     "'\\x00\\x07\\x1f\\x7f'"sv},
    {"é€😀"sv, "'é€😀'"sv},
    {"\xc2\xa0"
     "\xe2\x80\xa8"
     "\xe2\x80\x8b"
     "\xee\x80\x80"
     "\xf3\xa0\x80\x81"
     ""sv,
     "'\\xa0\\u2028\\u200b\\ue000\\U000e0001'"sv},
    {"\xed\x9f\xbf"
     ""sv,
     "'\\ud7ff'"sv},
    {"\xf4\x8f\xbf\xbf"
     ""sv,
     "'\\U0010ffff'"sv},
    {"\xc2\x85"
     "\xc2\xad"
     ""sv,
     "'\\x85\\xad'"sv},
};

TEST(PystrTest, ReprString) {
  for (const StringCase& c : kReprCases) {
    EXPECT_EQ(pystr::repr_string(c.input), c.expected);
  }
}

struct FloatCase {
  double value;
  const char* expected;
};

const FloatCase kFloatCases[] = {
    {0.0, "0.0"},
    {-0.0, "-0.0"},
    {1.0, "1.0"},
    {0.1, "0.1"},
    {1e-05, "1e-05"},
    {0.0001, "0.0001"},
    {1e+16, "1e+16"},
    {1e+15, "1000000000000000.0"},
    {123456789012345678.0, "1.2345678901234568e+17"},
    {1.5e+300, "1.5e+300"},
    {5e-324, "5e-324"},
    {0.30000000000000004, "0.30000000000000004"},
    {2.5, "2.5"},
    {100.0, "100.0"},
    {1e+22, "1e+22"},
    {-1e-07, "-1e-07"},
    {12345.678, "12345.678"},
    {1.7976931348623157e+308, "1.7976931348623157e+308"},
    {9007199254740993.0, "9007199254740992.0"},
    {0.3, "0.3"},
};

TEST(PystrTest, ReprFloat) {
  for (const FloatCase& c : kFloatCases) EXPECT_EQ(pystr::repr_float(c.value), c.expected);
  EXPECT_EQ(pystr::repr_float(std::numeric_limits<double>::infinity()), "inf");
  EXPECT_EQ(pystr::repr_float(-std::numeric_limits<double>::infinity()), "-inf");
  EXPECT_EQ(pystr::repr_float(std::numeric_limits<double>::quiet_NaN()), "nan");
}

TEST(PystrTest, Utf8DecodeEncode) {
  EXPECT_EQ(pystr::decode("a\xc3\xa9\xf0\x9f\x98\x80"), (std::u32string{U'a', 0xE9, 0x1F600}));
  EXPECT_EQ(pystr::encode(std::u32string{U'a', 0xE9, 0x1F600}), "a\xc3\xa9\xf0\x9f\x98\x80");
  // Invalid bytes (a lone continuation, a truncated sequence, an overlong form, a surrogate)
  // each become U+FFFD.
  EXPECT_EQ(pystr::decode("\x80"), std::u32string{0xFFFD});
  EXPECT_EQ(pystr::decode("\xc3"), std::u32string{0xFFFD});
  EXPECT_EQ(pystr::decode("\xc0\xaf"), (std::u32string{0xFFFD, 0xFFFD}));
  EXPECT_EQ(pystr::decode("\xed\xa0\x80").front(), U'\xFFFD');
  EXPECT_EQ(pystr::code_point_count("h\xc3\xa9llo \xf0\x9f\x98\x80"), 7u);
  EXPECT_EQ(pystr::code_point_count(""), 0u);
}

struct CaseMappingCase {
  const char* input;
  const char* upper;
  const char* lower;
  const char* title;
  const char* capitalize;
  const char* swapcase;
  const char* casefold;
};

const CaseMappingCase kCaseMappingCases[] = {
    {"hello World", "HELLO WORLD", "hello world", "Hello World", "Hello world", "HELLO wORLD",
     "hello world"},
    {"Straße ﬁ", "STRASSE FI", "straße ﬁ", "Straße Fi", "Straße ﬁ", "sTRASSE FI", "strasse fi"},
    {"ΑΣ ΑΣΑ Σ", "ΑΣ ΑΣΑ Σ", "ας ασα σ", "Ας Ασα Σ", "Ας ασα σ", "ας ασα σ", "ασ ασα σ"},
    {"İstanbul", "İSTANBUL", "i̇stanbul", "İstanbul", "İstanbul", "i̇STANBUL", "i̇stanbul"},
    {"ǆemal ǅ", "ǄEMAL Ǆ", "ǆemal ǆ", "ǅemal ǅ", "ǅemal ǆ", "ǄEMAL ǅ", "ǆemal ǆ"},
    {"ŉ", "ʼN", "ŉ", "ʼN", "ʼN", "ʼN", "ʼn"},
    {"hello wORLD 3rd x_y", "HELLO WORLD 3RD X_Y", "hello world 3rd x_y", "Hello World 3Rd X_Y",
     "Hello world 3rd x_y", "HELLO World 3RD X_Y", "hello world 3rd x_y"},
    {"ǳ", "Ǳ", "ǳ", "ǲ", "ǲ", "Ǳ", "ǳ"},
    {"ᾳ", "ΑΙ", "ᾳ", "ᾼ", "ᾼ", "ΑΙ", "αι"},
    {"aͅ", "AΙ", "aͅ", "Aͅ", "Aͅ", "AΙ", "aι"},
    {"Ω", "Ω", "ω", "Ω", "Ω", "ω", "ω"},
    {"ꭰ", "Ꭰ", "ꭰ", "Ꭰ", "Ꭰ", "Ꭰ", "Ꭰ"},
    {"", "", "", "", "", "", ""},
};

TEST(PystrTest, CaseMappingIsFullUnicode) {
  for (const CaseMappingCase& c : kCaseMappingCases) {
    SCOPED_TRACE(c.input);
    EXPECT_EQ(pystr::upper(c.input), c.upper);
    EXPECT_EQ(pystr::lower(c.input), c.lower);
    EXPECT_EQ(pystr::title(c.input), c.title);
    EXPECT_EQ(pystr::capitalize(c.input), c.capitalize);
    EXPECT_EQ(pystr::swapcase(c.input), c.swapcase);
    EXPECT_EQ(pystr::casefold(c.input), c.casefold);
  }
}

TEST(PystrTest, CharacterClassesFollowPython) {
  // ' \t\n\x0b\x0c\r\x1c\x1d\x1e\x1f\x85\xa0\u2028\u3000'.isspace() is True.
  for (char32_t cp : {0x20, 0x09, 0x0A, 0x0B, 0x0C, 0x0D, 0x1C, 0x1F, 0x85, 0xA0, 0x2028, 0x3000}) {
    EXPECT_TRUE(pystr::is_space(cp)) << static_cast<uint32_t>(cp);
  }
  // '\u200b'.isspace() and '\ufeff'.isspace() are False.
  EXPECT_FALSE(pystr::is_space(0x200B));
  EXPECT_FALSE(pystr::is_space(0xFEFF));
  EXPECT_TRUE(pystr::isdigit("\xc2\xb2"));     // '²'.isdigit()
  EXPECT_FALSE(pystr::isdecimal("\xc2\xb2"));  // '²'.isdecimal()
  EXPECT_TRUE(pystr::isnumeric("\xc2\xbd"));   // '½'.isnumeric()
  EXPECT_TRUE(pystr::isalpha("\xc3\xa9t\xc3\xa9"));
  EXPECT_FALSE(pystr::isalpha(""));
  EXPECT_TRUE(pystr::isupper("ABC1"));
  EXPECT_FALSE(pystr::isupper("1"));
  EXPECT_TRUE(pystr::islower("\xc3\x9f"));  // 'ß'.islower()
  EXPECT_TRUE(pystr::istitle("Hello World"));
  EXPECT_FALSE(pystr::istitle("Hello world"));
  EXPECT_TRUE(pystr::isidentifier("_a1"));
  EXPECT_FALSE(pystr::isidentifier("1a"));
  // Unicode 15 additions are unassigned for Python 3.11 (Unicode 14): '\U0001f6dc' prints
  // escaped in repr.
  EXPECT_EQ(pystr::repr_string("\xf0\x9f\x9b\x9c"), "'\\U0001f6dc'");
}

TEST(PystrTest, StripAndSplit) {
  EXPECT_EQ(pystr::strip(" \t a b \n"), "a b");
  EXPECT_EQ(pystr::strip("\xe3\x80\x80"
                         "a\xc2\xa0"),
            "a");  // '\u3000a\xa0'.strip() == 'a'
  EXPECT_EQ(pystr::strip("xxaxx", std::string_view("x")), "a");
  EXPECT_EQ(pystr::lstrip("  a  "), "a  ");
  EXPECT_EQ(pystr::rstrip("  a  "), "  a");
  EXPECT_EQ(pystr::strip("\xc3\xa9"
                         "a\xc3\xa9",
                         std::string_view("\xc3\xa9")),
            "a");
  using Pieces = std::vector<std::string_view>;
  EXPECT_EQ(pystr::split("  a  b c ", std::nullopt), (Pieces{"a", "b", "c"}));
  EXPECT_EQ(pystr::split("  a  b c ", std::nullopt, 1), (Pieces{"a", "b c "}));
  EXPECT_EQ(pystr::rsplit("  a  b c ", std::nullopt, 1), (Pieces{"  a  b", "c"}));
  EXPECT_EQ(pystr::split("a,,b", std::string_view(",")), (Pieces{"a", "", "b"}));
  EXPECT_EQ(pystr::rsplit("a,b,c", std::string_view(","), 1), (Pieces{"a,b", "c"}));
  EXPECT_EQ(pystr::split("", std::nullopt), Pieces{});
  EXPECT_EQ(pystr::split("", std::string_view(",")), Pieces{""});
  EXPECT_EQ(pystr::splitlines("a\nb\r\nc\rd\x0b"
                              "e\xc2\x85"
                              "f"),
            (Pieces{"a", "b", "c", "d", "e", "f"}));
  EXPECT_EQ(pystr::splitlines("a\r\nb\n", true), (Pieces{"a\r\n", "b\n"}));
  EXPECT_EQ(pystr::splitlines(""), Pieces{});
}

TEST(PystrTest, SearchingCountsCodePoints) {
  // 'h\xe9llo'.find('l') == 2; 'h\xe9llo'.rfind('l') == 3
  EXPECT_EQ(pystr::find("h\xc3\xa9llo", "l"), 2);
  EXPECT_EQ(pystr::rfind("h\xc3\xa9llo", "l"), 3);
  EXPECT_EQ(pystr::find("h\xc3\xa9llo", "l", 3), 3);
  EXPECT_EQ(pystr::find("abc", "", 5), -1);
  EXPECT_EQ(pystr::find("abc", "", 3), 3);
  EXPECT_EQ(pystr::find("abc", "c", -1), 2);
  EXPECT_EQ(pystr::count("abc", ""), 4);
  EXPECT_EQ(pystr::count("aaaa", "aa"), 2);
  EXPECT_TRUE(pystr::startswith("h\xc3\xa9llo", "llo", 2));
  EXPECT_FALSE(pystr::startswith("abc", "", 5));
  EXPECT_TRUE(pystr::endswith("abc", "b", 0, 2));
  EXPECT_EQ(pystr::cp_slice("h\xc3\xa9llo", 1, 3), "\xc3\xa9l");
  EXPECT_EQ(pystr::cp_slice("abc", -2, std::nullopt), "bc");
}

TEST(PystrTest, ReplaceAndPad) {
  EXPECT_EQ(pystr::replace("aaa", "a", "b", 2), "bba");
  EXPECT_EQ(pystr::replace("abc", "", "-"), "-a-b-c-");
  EXPECT_EQ(pystr::replace("abc", "", "-", 2), "-a-bc");
  EXPECT_EQ(pystr::center("abc", 9), "   abc   ");
  EXPECT_EQ(pystr::center("ab", 9), "    ab   ");  // Python puts the odd space on the right here
  EXPECT_EQ(pystr::center("abc", 8, U'*'), "**abc***");
  EXPECT_EQ(pystr::ljust("\xc3\xa9", 3, U'\x20ac'), "\xc3\xa9\xe2\x82\xac\xe2\x82\xac");
  EXPECT_EQ(pystr::zfill("-42", 6), "-00042");
  EXPECT_EQ(pystr::zfill("+", 3), "+00");
  EXPECT_EQ(pystr::expandtabs("a\tbc\td\n\te", 4), "a   bc  d\n    e");
  const auto parts = pystr::rpartition("a=b=c", "=");
  EXPECT_EQ(parts.before, "a=b");
  EXPECT_EQ(parts.after, "c");
}

struct PercentCase {
  const char* format;
  const char* args;  // JSON; a list is a tuple when `tuple` is set
  bool tuple;
  const char* expected;
};

const PercentCase kPercentCases[] = {
    {"%s-%d", R"(["a", 3])", true, "a-3"},
    {"%5.2s|", R"("abc")", false, "   ab|"},
    {"%-5d|", R"(3)", false, "3    |"},
    {"%05d", R"(-3)", false, "-0003"},
    {"%+.3e", R"(12345.678)", false, "+1.235e+04"},
    {"%#o", R"(8)", false, "0o10"},
    {"%.3d", R"(5)", false, "005"},
    {"%c", R"(65)", false, "A"},
    {"%c", R"("x")", false, "x"},
    {"%x", R"(true)", false, "1"},
    {"%x", R"(3.5)", false, "ERROR"},
    {"%d", R"("a")", false, "ERROR"},
    {"%f", R"("a")", false, "ERROR"},
    {"%s %s", R"("a")", false, "ERROR"},
    {"%s", R"([1, 2])", true, "ERROR"},
    {"%y", R"(1)", false, "ERROR"},
    {"%(a)s", R"(1)", false, "ERROR"},
    {"%", R"(1)", false, "ERROR"},
    {"%(a)s-%(b)05.1f", R"({"a": "x", "b": 2.25})", false, "x-002.2"},
    {"%s|%r|%a", R"(["é", "é", "é"])", true, "é|'é'|'\\xe9'"},
    {"%.2f", R"(2.675)", false, "2.67"},
    {"%g", R"(1e-05)", false, "1e-05"},
    {"%g", R"(123456789.0)", false, "1.23457e+08"},
    {"%e", R"(Infinity)", false, "inf"},
    {"%F", R"(NaN)", false, "NAN"},
    {"%5s|", R"(null)", false, " None|"},
    {"%i %s %r %.1s", R"([true, true, 1.5, 1.25])", true, "1 True 1.5 1"},
    {"hello", R"([])", true, "hello"},
    {"hello", R"({"a": 1})", false, "hello"},
    {"hello", R"(5)", false, "ERROR"},
    {"%s", R"({"a": 1})", false, "{'a': 1}"},
    {"%s", R"([1])", false, "[1]"},
    {"100%%", R"([])", true, "100%"},
    {"%*d|%-*d|%.*f", R"([4, 1, 3, 2, 2, 3.14159])", true, "   1|2  |3.14"},
    {"%#x %#X %X", R"([255, 255, 255])", true, "0xff 0XFF FF"},
    {"% d|%+d|% d", R"([5, 5, -5])", true, " 5|+5|-5"},
    {"%10.4g|%-10.2e|", R"([3.14159265, 0.000123])", true, "     3.142|1.23e-04  |"},
    {"%d", R"(3.99)", false, "3"},
    {"%d", R"(-3.99)", false, "-3"},
    {"%s", R"(null)", false, "None"},
    {"%r", R"("it's")", false, "\"it's\""},
    {"%#.0f|%#g", R"([3.0, 2.0])", true, "3.|2.00000"},
    {"%c", R"("ab")", false, "ERROR"},
    {"%ld %hi", R"([1, 2])", true, "1 2"},
};

TEST(PystrTest, PercentFormat) {
  for (const PercentCase& c : kPercentCases) {
    SCOPED_TRACE(std::string(c.format) + " % " + c.args);
    Value args = V(c.args);
    if (c.tuple) args = Value::tuple(args.list_data().items);
    const std::string got = or_error(pystr::percent_format(c.format, args));
    EXPECT_EQ(got, c.expected);
  }
}

struct FormatValueCase {
  const char* value;
  const char* spec;
  const char* expected;
};

const FormatValueCase kFormatValueCases[] = {
    {R"(3.14159)", ">8.3f", "   3.142"},
    {R"("mid")", "^7", "  mid  "},
    {R"("ab")", "*<5", "ab***"},
    {R"(1234567)", ",", "1,234,567"},
    {R"(255)", "_b", "1111_1111"},
    {R"(12345.678)", "e", "1.234568e+04"},
    {R"(0.25)", "%", "25.000000%"},
    {R"(0.256)", ".0%", "26%"},
    {R"(255)", "#x", "0xff"},
    {R"(-3.14159)", "08.2f", "-0003.14"},
    {R"(5)", "+d", "+5"},
    {R"(3)", "5", "    3"},
    {R"("s")", "5", "s    "},
    {R"(1234.5)", ".2", "1.2e+03"},
    {R"(100.0)", ".3", "1e+02"},
    {R"(1e16)", "g", "1e+16"},
    {R"(1234.5)", "n", "1234.5"},
    {R"(1234)", "08,", "0,001,234"},
    {R"(-1234)", "010,", "-0,001,234"},
    {R"(255)", "#010x", "0x000000ff"},
    {R"(true)", "", "True"},
    {R"(true)", ">5", "    1"},
    {R"(true)", ".2f", "1.00"},
    {R"(1.0)", ".3", "1.0"},
    {R"(10.0)", ".3", "10.0"},
    {R"(1234.5)", ".4", "1.234e+03"},
    {R"(0.0001)", ".3", "0.0001"},
    {R"(1e20)", "", "1e+20"},
    {R"("ab")", "05", "ab000"},
    {R"("abc")", ".2", "ab"},
    {R"(1.5)", "10", "       1.5"},
    {R"(-0.0)", "", "-0.0"},
    {R"(-0.0)", "+.1f", "-0.0"},
    {R"(Infinity)", ">6", "   inf"},
    {R"(NaN)", "F", "NAN"},
    {R"(65)", "c", "A"},
    {R"("a")", "+5", "ERROR"},
    {R"("a")", "d", "ERROR"},
    {R"(1.5)", "d", "ERROR"},
    {R"(5)", ".2", "ERROR"},
    {R"(null)", "", "None"},
    {R"(null)", "5", "ERROR"},
    {R"([1])", "", "[1]"},
    {R"(1234567.891)", ",.2f", "1,234,567.89"},
    {R"(123)", "=+8", "+    123"},
    {R"("é")", "^5", "  é  "},
    {R"("x")", "é>4", "éééx"},
    {R"(42)", "X", "2A"},
    {R"(42)", "o", "52"},
    {R"(-42)", "#b", "-0b101010"},
    {R"(0.5)", ".0f", "0"},
    {R"(1.5)", ".0f", "2"},
    {R"(2.5)", ".0e", "2e+00"},
    {R"(1e-5)", "", "1e-05"},
    {R"(123456789.0)", ".12g", "123456789"},
    {R"(0.1)", ".20f", "0.10000000000000000555"},
    {R"(3)", ".2f", "3.00"},
    {R"(3)", "%", "300.000000%"},
    {R"(12)", "E", "1.200000E+01"},
    {R"(1e100)", "G", "1E+100"},
};

// Corner cases found by comparing random specs with Python (format(v, spec) and '%..' % v).
TEST(PystrTest, FormatCornerCases) {
  // The '0' flag fills with zeros whatever the alignment; a given fill turns it into width.
  EXPECT_EQ(or_error(pystr::format_value(Value(100.0), "^012.0f")), "000010000000");
  EXPECT_EQ(or_error(pystr::format_value(Value(1), "^ 05b")), "0 100");
  EXPECT_EQ(or_error(pystr::format_value(Value(7), "> 05,g")), "000 7");
  EXPECT_EQ(or_error(pystr::format_value(Value("\xc3\xa9\xe2\x82\xac"), ">05.8")),
            "000\xc3\xa9\xe2\x82\xac");
  // '#' keeps the point in the shortest repr's exponent form.
  EXPECT_EQ(or_error(pystr::format_value(Value(1e-07), "-#5")), "1.e-07");
  EXPECT_EQ(or_error(pystr::format_value(Value(1e16), "#01_")), "1.e+16");
  // Refused combinations.
  EXPECT_EQ(or_error(pystr::format_value(Value(int64_t{1} << 40), "*=#_n")), "ERROR");
  EXPECT_EQ(or_error(pystr::format_value(Value(false), "#12c")), "ERROR");
  EXPECT_EQ(or_error(pystr::format_value(Value(5), "+c")), "ERROR");
  // '%d' of a float prints int(f) exactly, beyond 64 bits too.
  EXPECT_EQ(or_error(pystr::percent_format("%.0d", Value(1.2345e20))), "123450000000000000000");
  EXPECT_EQ(or_error(pystr::percent_format("%d", Value(-0.5))), "0");
}

TEST(PystrTest, FormatSpecMiniLanguage) {
  for (const FormatValueCase& c : kFormatValueCases) {
    SCOPED_TRACE(std::string("format(") + c.value + ", '" + c.spec + "')");
    EXPECT_EQ(or_error(pystr::format_value(V(c.value), c.spec)), c.expected);
  }
}

struct StrFormatCase {
  const char* format;
  const char* positional;
  const char* keywords;
  const char* expected;
};

const StrFormatCase kStrFormatCases[] = {
    {"{} and {}", R"(["a", 1])", R"({})", "a and 1"},
    {"{0}{0}{{}}", R"(["x"])", R"({})", "xx{}"},
    {"{a[0]}|{a[1]}", R"([])", R"({"a": [5, 6]})", "5|6"},
    {"{0[k]}", R"([{"k": "v"}])", R"({})", "v"},
    {"{:{}}|", R"(["a", 4])", R"({})", "a   |"},
    {"{0!r:>6}", R"(["a"])", R"({})", "   'a'"},
    {"{", R"([])", R"({})", "ERROR"},
    {"{0!x}", R"([1])", R"({})", "ERROR"},
    // Jinja2's sandboxed formatter looks attributes up like templates do: a missing one is
    // undefined and prints as '' (plain Python raises AttributeError).
    {"{0.nope}", R"([{"a": 1}])", R"({})", ""},
    {"{0[nope]}", R"([{"a": 1}])", R"({})", ""},
    {"{0.nope:>3}", R"([{"a": 1}])", R"({})", "ERROR"},
    {"{0[", R"([1])", R"({})", "ERROR"},
    {"{}{}", R"([1])", R"({})", "ERROR"},
};

TEST(PystrTest, StrFormat) {
  for (const StrFormatCase& c : kStrFormatCases) {
    SCOPED_TRACE(c.format);
    const CallArgs args = testing::make_args(c.positional, c.keywords);
    EXPECT_EQ(or_error(pystr::format(c.format, args.positional, args.keyword)), c.expected);
  }
}

}  // namespace
}  // namespace hearth::jinja
