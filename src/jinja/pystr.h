// Python str semantics over UTF-8 text: what Python's str methods and reprs do, by code
// point (Python indexes strings by code point, not byte). Unicode case mapping and
// character classes come from ICU.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "base/status.h"

namespace hearth::jinja {
class Value;
}

namespace hearth::jinja::pystr {

// repr(str): single quotes unless the text contains ' and no ", escapes \\ \n \r \t, other
// non-printable code points as \xNN, \uNNNN or \UNNNNNNNN.
std::string repr_string(std::string_view text);
// repr(float): shortest round-trip digits in Python's layout (1.0, 0.1, 1e-05, 1e+16, inf,
// nan, -0.0).
std::string repr_float(double value);

// Decodes UTF-8 into code points (invalid bytes become U+FFFD) and back.
std::u32string decode(std::string_view text);
std::string encode(std::u32string_view text);
size_t code_point_count(std::string_view text);
// Decodes the code point at text[pos] and advances pos past it (U+FFFD for invalid bytes).
char32_t decode_one(std::string_view text, size_t& pos);
void append_utf8(std::string& out, char32_t cp);
bool is_ascii(std::string_view text);

// --- Character classes (Python's, for one code point) ---
bool is_space(char32_t cp);
bool is_printable(char32_t cp);
bool is_alpha(char32_t cp);
bool is_digit(char32_t cp);
bool is_decimal(char32_t cp);
bool is_numeric(char32_t cp);
bool is_alnum(char32_t cp);
bool is_cased(char32_t cp);
bool is_upper_char(char32_t cp);
bool is_lower_char(char32_t cp);
bool is_title_char(char32_t cp);
// Python's regex \w for str patterns: alphanumeric or underscore.
bool is_word_char(char32_t cp);

// --- Whole-string predicates (str.isdigit() etc.; false for "") ---
bool isdigit(std::string_view text);
bool isdecimal(std::string_view text);
bool isnumeric(std::string_view text);
bool isalpha(std::string_view text);
bool isalnum(std::string_view text);
bool isspace(std::string_view text);
bool isupper(std::string_view text);
bool islower(std::string_view text);
bool istitle(std::string_view text);
bool isascii_method(std::string_view text);  // str.isascii(): true for ""
bool isidentifier(std::string_view text);
bool isprintable(std::string_view text);

// --- Case mapping (full mappings: 'ß'.upper() == 'SS'; final sigma in lower()) ---
std::string upper(std::string_view text);
std::string lower(std::string_view text);
std::string title(std::string_view text);  // str.title(), not the Jinja2 filter
std::string capitalize(std::string_view text);
std::string swapcase(std::string_view text);
std::string casefold(std::string_view text);
// The full uppercase / titlecase mapping of one code point, appended to out.
void append_upper(std::string& out, char32_t cp);
void append_title(std::string& out, char32_t cp);

// --- Slicing by code point ---
// Python's index adjustment for str.find & co: negative counts from the end, then end clamps
// to [0, length] and start to >= 0 (start may end up past end: then nothing matches).
struct Span {
  int64_t start = 0;
  int64_t end = 0;
};
Span adjust_indices(int64_t length, std::optional<int64_t> start, std::optional<int64_t> end);
// Byte offset of code point `index` (index <= code point count).
size_t byte_offset(std::string_view text, int64_t index);
// text[start:end] by code points after adjust_indices.
std::string_view cp_slice(std::string_view text, std::optional<int64_t> start,
                          std::optional<int64_t> end);

// --- Stripping, splitting, searching (views into the input, no copies) ---
// chars unset = whitespace (str.isspace); otherwise any code point of chars.
std::string_view strip(std::string_view text, std::optional<std::string_view> chars = {});
std::string_view lstrip(std::string_view text, std::optional<std::string_view> chars = {});
std::string_view rstrip(std::string_view text, std::optional<std::string_view> chars = {});
// sep unset = runs of whitespace, empty pieces dropped; sep must not be empty (the caller
// raises "empty separator"). maxsplit < 0 = no limit.
std::vector<std::string_view> split(std::string_view text, std::optional<std::string_view> sep,
                                    int64_t maxsplit = -1);
std::vector<std::string_view> rsplit(std::string_view text, std::optional<std::string_view> sep,
                                     int64_t maxsplit = -1);
// Lines split at \n, \r, \r\n, \v, \f, \x1c-\x1e, \x85, \u2028, \u2029.
std::vector<std::string_view> splitlines(std::string_view text, bool keepends = false);
struct Partition {
  std::string_view before, separator, after;
};
// sep must not be empty.
Partition partition(std::string_view text, std::string_view sep);
Partition rpartition(std::string_view text, std::string_view sep);

// Code point index of the first / last occurrence of sub in text[start:end], or -1.
int64_t find(std::string_view text, std::string_view sub, std::optional<int64_t> start = {},
             std::optional<int64_t> end = {});
int64_t rfind(std::string_view text, std::string_view sub, std::optional<int64_t> start = {},
              std::optional<int64_t> end = {});
// Non-overlapping occurrences in text[start:end] ("" occurs between every code point).
int64_t count(std::string_view text, std::string_view sub, std::optional<int64_t> start = {},
              std::optional<int64_t> end = {});
bool startswith(std::string_view text, std::string_view prefix, std::optional<int64_t> start = {},
                std::optional<int64_t> end = {});
bool endswith(std::string_view text, std::string_view suffix, std::optional<int64_t> start = {},
              std::optional<int64_t> end = {});
// count < 0 = all.
std::string replace(std::string_view text, std::string_view old, std::string_view replacement,
                    int64_t count = -1);
std::string_view removeprefix(std::string_view text, std::string_view prefix);
std::string_view removesuffix(std::string_view text, std::string_view suffix);

// --- Padding ---
std::string center(std::string_view text, int64_t width, char32_t fill = ' ');
std::string ljust(std::string_view text, int64_t width, char32_t fill = ' ');
std::string rjust(std::string_view text, int64_t width, char32_t fill = ' ');
std::string zfill(std::string_view text, int64_t width);
std::string expandtabs(std::string_view text, int64_t tabsize = 8);

// --- Formatting ---
// Digits of an unsigned integer in base 2, 8, 10 or 16.
std::string integer_digits(uint64_t magnitude, int base, bool upper = false);
// ascii(): Python's repr output with non-ASCII code points escaped (\xNN, \uNNNN, \UNNNNNNNN).
std::string ascii_escape(std::string_view repr_text);
// Digits of a non-negative finite-or-not float for the format types e E f F g G %, with
// Python's rules (precision < 0 = 6; '#' keeps trailing zeros and the point). `add_dot_0` is
// format()'s omitted type with a precision: 'g' that keeps at least one fractional digit.
std::string float_digits(double magnitude, char type, int64_t precision, bool alternate,
                         bool add_dot_0 = false);
// str.format(*args, **kwargs) as Jinja2's sandbox runs it: {} / {0} / {name} fields with
// .attr and [key] lookups, !r/!s/!a conversions and format specs. Errors read like Python's.
Result<std::string> format(std::string_view fmt, const std::vector<Value>& args,
                           const std::vector<std::pair<std::string, Value>>& kwargs);
// format(value, spec): the format spec mini-language for str, int, float and bool.
Result<std::string> format_value(const Value& value, std::string_view spec);
// fmt % args: a tuple supplies several arguments, a dict supplies %(name)s, anything else
// is the only argument.
Result<std::string> percent_format(std::string_view fmt, const Value& args);

}  // namespace hearth::jinja::pystr
