// Python str basics: UTF-8 decoding, repr of strings and floats, character classes.
#include "jinja/pystr.h"

#include <unicode/casemap.h>
#include <unicode/uchar.h>
#include <unicode/ustring.h>

#include <charconv>
#include <cmath>
#include <cstdlib>
#include <cstring>

namespace hearth::jinja::pystr {

namespace {

constexpr char32_t kReplacement = 0xFFFD;

// Length of the UTF-8 sequence a lead byte starts; 0 for a byte that cannot lead.
int utf8_sequence_length(unsigned char lead) {
  if (lead < 0x80) return 1;
  if (lead >= 0xC2 && lead <= 0xDF) return 2;
  if (lead >= 0xE0 && lead <= 0xEF) return 3;
  if (lead >= 0xF0 && lead <= 0xF4) return 4;
  return 0;
}

// Whether the code point was assigned by Unicode 14, the database of the Python (3.11) whose
// output we match; ICU may know newer characters, which that Python treats as unassigned.
bool known_to_python(char32_t cp) {
  UVersionInfo age;
  u_charAge(static_cast<UChar32>(cp), age);
  return age[0] < 14 || (age[0] == 14 && age[1] == 0);
}

// Modifier letters that Unicode 15 made Lowercase (and so Cased); Unicode 14 had neither.
bool lowercase_since_unicode15(char32_t cp) {
  return cp == 0x10FC || (cp >= 0xA7F2 && cp <= 0xA7F4) || cp == 0xAB69;
}

bool has_property(char32_t cp, UProperty property) {
  if (!known_to_python(cp)) return false;
  if ((property == UCHAR_LOWERCASE || property == UCHAR_CASED) && lowercase_since_unicode15(cp)) {
    return false;
  }
  return u_hasBinaryProperty(static_cast<UChar32>(cp), property);
}

int numeric_type(char32_t cp) {
  if (!known_to_python(cp)) return U_NT_NONE;
  return u_getIntPropertyValue(static_cast<UChar32>(cp), UCHAR_NUMERIC_TYPE);
}

}  // namespace

char32_t decode_one(std::string_view text, size_t& pos) {
  const auto lead = static_cast<unsigned char>(text[pos]);
  const int length = utf8_sequence_length(lead);
  if (length == 1) {
    ++pos;
    return lead;
  }
  if (length == 0 || pos + length > text.size()) {
    ++pos;
    return kReplacement;
  }
  char32_t cp = lead & (0xFF >> (length + 1));
  for (int i = 1; i < length; ++i) {
    const auto byte = static_cast<unsigned char>(text[pos + i]);
    if ((byte & 0xC0) != 0x80) {
      pos += i;
      return kReplacement;
    }
    cp = (cp << 6) | (byte & 0x3F);
  }
  // Overlong forms, surrogates and values past U+10FFFF are not valid UTF-8.
  static constexpr char32_t kMinimum[] = {0, 0, 0x80, 0x800, 0x10000};
  if (cp < kMinimum[length] || (cp >= 0xD800 && cp <= 0xDFFF) || cp > 0x10FFFF) {
    ++pos;
    return kReplacement;
  }
  pos += length;
  return cp;
}

void append_utf8(std::string& out, char32_t cp) {
  if (cp < 0x80) {
    out.push_back(static_cast<char>(cp));
  } else if (cp < 0x800) {
    out.push_back(static_cast<char>(0xC0 | (cp >> 6)));
    out.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  } else if (cp < 0x10000) {
    out.push_back(static_cast<char>(0xE0 | (cp >> 12)));
    out.push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
    out.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  } else if (cp <= 0x10FFFF) {
    out.push_back(static_cast<char>(0xF0 | (cp >> 18)));
    out.push_back(static_cast<char>(0x80 | ((cp >> 12) & 0x3F)));
    out.push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
    out.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  } else {
    append_utf8(out, kReplacement);
  }
}

std::u32string decode(std::string_view text) {
  std::u32string out;
  out.reserve(text.size());
  size_t pos = 0;
  while (pos < text.size()) out.push_back(decode_one(text, pos));
  return out;
}

std::string encode(std::u32string_view text) {
  std::string out;
  out.reserve(text.size());
  for (char32_t cp : text) append_utf8(out, cp);
  return out;
}

size_t code_point_count(std::string_view text) {
  size_t count = 0;
  size_t pos = 0;
  while (pos < text.size()) {
    const auto byte = static_cast<unsigned char>(text[pos]);
    if (byte < 0x80) {
      ++pos;
    } else {
      decode_one(text, pos);
    }
    ++count;
  }
  return count;
}

bool is_ascii(std::string_view text) {
  for (char c : text) {
    if (static_cast<unsigned char>(c) >= 0x80) return false;
  }
  return true;
}

bool is_space(char32_t cp) {
  if (cp < 0x80) return cp == ' ' || (cp >= 0x09 && cp <= 0x0D) || (cp >= 0x1C && cp <= 0x1F);
  // Python: bidirectional class WS, B or S, or general category Zs.
  if (cp == 0x85 || cp == 0xA0) return true;
  const auto bidi = u_charDirection(static_cast<UChar32>(cp));
  return bidi == U_WHITE_SPACE_NEUTRAL || bidi == U_BLOCK_SEPARATOR ||
         bidi == U_SEGMENT_SEPARATOR || u_charType(static_cast<UChar32>(cp)) == U_SPACE_SEPARATOR;
}

bool is_printable(char32_t cp) {
  if (cp < 0x80) return cp >= 0x20 && cp < 0x7F;
  if (!known_to_python(cp)) return false;
  switch (u_charType(static_cast<UChar32>(cp))) {
    case U_CONTROL_CHAR:
    case U_FORMAT_CHAR:
    case U_SURROGATE:
    case U_PRIVATE_USE_CHAR:
    case U_UNASSIGNED:
    case U_LINE_SEPARATOR:
    case U_PARAGRAPH_SEPARATOR:
    case U_SPACE_SEPARATOR:
      return false;
    default:
      return true;
  }
}

namespace {

void append_hex(std::string& out, char prefix, uint32_t value, int digits) {
  static constexpr char kHex[] = "0123456789abcdef";
  out.push_back('\\');
  out.push_back(prefix);
  for (int shift = (digits - 1) * 4; shift >= 0; shift -= 4)
    out.push_back(kHex[(value >> shift) & 0xF]);
}

}  // namespace

std::string repr_string(std::string_view text) {
  // Python prefers single quotes; it switches to double quotes only when that avoids escaping.
  const bool has_single = text.find('\'') != std::string_view::npos;
  const bool has_double = text.find('"') != std::string_view::npos;
  const char quote = (has_single && !has_double) ? '"' : '\'';
  std::string out;
  out.reserve(text.size() + 2);
  out.push_back(quote);
  size_t pos = 0;
  while (pos < text.size()) {
    const size_t start = pos;
    const char32_t cp = decode_one(text, pos);
    if (cp == static_cast<char32_t>(quote) || cp == '\\') {
      out.push_back('\\');
      out.push_back(static_cast<char>(cp));
    } else if (cp == '\n') {
      out += "\\n";
    } else if (cp == '\r') {
      out += "\\r";
    } else if (cp == '\t') {
      out += "\\t";
    } else if (is_printable(cp)) {
      out.append(text.substr(start, pos - start));
    } else if (cp <= 0xFF) {
      append_hex(out, 'x', cp, 2);
    } else if (cp <= 0xFFFF) {
      append_hex(out, 'u', cp, 4);
    } else {
      append_hex(out, 'U', cp, 8);
    }
  }
  out.push_back(quote);
  return out;
}

std::string repr_float(double value) {
  if (std::isnan(value)) return "nan";
  if (std::isinf(value)) return value < 0 ? "-inf" : "inf";
  // Shortest round-trip digits, laid out as Python's float_repr_style 'short' does: fixed
  // notation while the decimal exponent is in [-4, 16), scientific otherwise.
  char buffer[64];
  const auto result =
      std::to_chars(buffer, buffer + sizeof(buffer), value, std::chars_format::scientific);
  std::string_view sci(buffer, static_cast<size_t>(result.ptr - buffer));
  std::string out;
  if (sci.front() == '-') {
    out.push_back('-');
    sci.remove_prefix(1);
  }
  const size_t e_pos = sci.find('e');
  std::string digits;
  for (char c : sci.substr(0, e_pos)) {
    if (c != '.') digits.push_back(c);
  }
  const int exponent = std::atoi(std::string(sci.substr(e_pos + 1)).c_str());
  const int point = exponent + 1;  // digits before the decimal point
  if (exponent < -4 || exponent >= 16) {
    out.push_back(digits[0]);
    if (digits.size() > 1) {
      out.push_back('.');
      out.append(digits, 1);
    }
    out.push_back('e');
    out.push_back(exponent < 0 ? '-' : '+');
    const int magnitude = std::abs(exponent);
    if (magnitude < 10) out.push_back('0');
    out += std::to_string(magnitude);
  } else if (point <= 0) {
    out += "0.";
    out.append(static_cast<size_t>(-point), '0');
    out += digits;
  } else if (static_cast<size_t>(point) >= digits.size()) {
    out += digits;
    out.append(static_cast<size_t>(point) - digits.size(), '0');
    out += ".0";
  } else {
    out.append(digits, 0, static_cast<size_t>(point));
    out.push_back('.');
    out.append(digits, static_cast<size_t>(point));
  }
  return out;
}

// --- Character classes ---

bool is_alpha(char32_t cp) {
  if (cp < 0x80) return (cp | 0x20) >= 'a' && (cp | 0x20) <= 'z';
  if (!known_to_python(cp)) return false;
  switch (u_charType(static_cast<UChar32>(cp))) {
    case U_UPPERCASE_LETTER:
    case U_LOWERCASE_LETTER:
    case U_TITLECASE_LETTER:
    case U_MODIFIER_LETTER:
    case U_OTHER_LETTER:
      return true;
    default:
      return false;
  }
}

bool is_decimal(char32_t cp) {
  if (cp < 0x80) return cp >= '0' && cp <= '9';
  return numeric_type(cp) == U_NT_DECIMAL;
}

bool is_digit(char32_t cp) {
  if (cp < 0x80) return cp >= '0' && cp <= '9';
  const int type = numeric_type(cp);
  return type == U_NT_DECIMAL || type == U_NT_DIGIT;
}

bool is_numeric(char32_t cp) {
  if (cp < 0x80) return cp >= '0' && cp <= '9';
  return numeric_type(cp) != U_NT_NONE;
}

bool is_alnum(char32_t cp) {
  return is_alpha(cp) || is_numeric(cp);
}

bool is_word_char(char32_t cp) {
  return cp == '_' || is_alnum(cp);
}

bool is_cased(char32_t cp) {
  if (cp < 0x80) return is_alpha(cp);
  return has_property(cp, UCHAR_CASED);
}

bool is_upper_char(char32_t cp) {
  if (cp < 0x80) return cp >= 'A' && cp <= 'Z';
  return has_property(cp, UCHAR_UPPERCASE);
}

bool is_lower_char(char32_t cp) {
  if (cp < 0x80) return cp >= 'a' && cp <= 'z';
  return has_property(cp, UCHAR_LOWERCASE);
}

bool is_title_char(char32_t cp) {
  return cp >= 0x80 && known_to_python(cp) &&
         u_charType(static_cast<UChar32>(cp)) == U_TITLECASE_LETTER;
}

// --- Whole-string predicates ---

namespace {

template <typename Predicate>
bool all_code_points(std::string_view text, Predicate predicate) {
  if (text.empty()) return false;
  size_t pos = 0;
  while (pos < text.size()) {
    if (!predicate(decode_one(text, pos))) return false;
  }
  return true;
}

// str.isupper / str.islower: no code point of the opposite case (or titlecase) and at
// least one of the wanted case.
bool all_cased_as(std::string_view text, bool (*wanted)(char32_t), bool (*opposite)(char32_t)) {
  bool any_cased = false;
  size_t pos = 0;
  while (pos < text.size()) {
    const char32_t cp = decode_one(text, pos);
    if (opposite(cp) || is_title_char(cp)) return false;
    if (wanted(cp)) any_cased = true;
  }
  return any_cased;
}

}  // namespace

bool isdigit(std::string_view text) {
  return all_code_points(text, is_digit);
}
bool isdecimal(std::string_view text) {
  return all_code_points(text, is_decimal);
}
bool isnumeric(std::string_view text) {
  return all_code_points(text, is_numeric);
}
bool isalpha(std::string_view text) {
  return all_code_points(text, is_alpha);
}
bool isalnum(std::string_view text) {
  return all_code_points(text, is_alnum);
}
bool isspace(std::string_view text) {
  return all_code_points(text, is_space);
}
bool isupper(std::string_view text) {
  return all_cased_as(text, is_upper_char, is_lower_char);
}
bool islower(std::string_view text) {
  return all_cased_as(text, is_lower_char, is_upper_char);
}
bool isascii_method(std::string_view text) {
  return is_ascii(text);
}

bool isprintable(std::string_view text) {
  size_t pos = 0;
  while (pos < text.size()) {
    if (!is_printable(decode_one(text, pos))) return false;
  }
  return true;
}

bool istitle(std::string_view text) {
  bool any_cased = false;
  bool previous_cased = false;
  size_t pos = 0;
  while (pos < text.size()) {
    const char32_t cp = decode_one(text, pos);
    if (is_upper_char(cp) || is_title_char(cp)) {
      if (previous_cased) return false;
      previous_cased = any_cased = true;
    } else if (is_lower_char(cp)) {
      if (!previous_cased) return false;
      previous_cased = any_cased = true;
    } else {
      previous_cased = false;
    }
  }
  return any_cased;
}

bool isidentifier(std::string_view text) {
  if (text.empty()) return false;
  size_t pos = 0;
  const char32_t first = decode_one(text, pos);
  if (first != '_' && !has_property(first, UCHAR_XID_START)) return false;
  while (pos < text.size()) {
    if (!has_property(decode_one(text, pos), UCHAR_XID_CONTINUE)) return false;
  }
  return true;
}

// --- Case mapping ---

namespace {

enum class CaseMode { kLower, kUpper, kTitle, kFold };

// The full case mapping of one non-ASCII code point, as ICU's root locale gives it for a
// string of that code point alone (SpecialCasing's unconditional mappings, as Python uses).
void append_mapped(std::string& out, char32_t cp, CaseMode mode) {
  if (!known_to_python(cp)) {
    append_utf8(out, cp);
    return;
  }
  char16_t source[2];
  int32_t source_length = 0;
  U16_APPEND_UNSAFE(source, source_length, static_cast<UChar32>(cp));
  char16_t mapped[8];
  UErrorCode status = U_ZERO_ERROR;
  int32_t length = 0;
  switch (mode) {
    case CaseMode::kLower:
      length = icu::CaseMap::toLower("", 0, source, source_length, mapped, 8, nullptr, status);
      break;
    case CaseMode::kUpper:
      length = icu::CaseMap::toUpper("", 0, source, source_length, mapped, 8, nullptr, status);
      break;
    case CaseMode::kTitle:
      length = icu::CaseMap::toTitle(
          "", U_TITLECASE_WHOLE_STRING | U_TITLECASE_NO_BREAK_ADJUSTMENT | U_TITLECASE_NO_LOWERCASE,
          nullptr, source, source_length, mapped, 8, nullptr, status);
      break;
    case CaseMode::kFold:
      length = icu::CaseMap::fold(0, source, source_length, mapped, 8, nullptr, status);
      break;
  }
  if (U_FAILURE(status)) {
    append_utf8(out, cp);
    return;
  }
  for (int32_t i = 0; i < length;) {
    UChar32 unit;
    U16_NEXT_UNSAFE(mapped, i, unit);
    append_utf8(out, static_cast<char32_t>(unit));
  }
}

bool is_case_ignorable(char32_t cp) {
  return has_property(cp, UCHAR_CASE_IGNORABLE);
}

// Capital sigma lowers to final sigma when a cased letter precedes it and none follows
// (case-ignorable code points skipped both ways), as Python's lower() decides.
char32_t lower_sigma(const std::u32string& text, size_t index) {
  size_t j = index;
  while (j > 0 && is_case_ignorable(text[j - 1])) --j;
  if (j == 0 || !is_cased(text[j - 1])) return 0x3C3;
  j = index + 1;
  while (j < text.size() && is_case_ignorable(text[j])) ++j;
  return (j == text.size() || !is_cased(text[j])) ? 0x3C2 : 0x3C3;
}

void append_lower_at(std::string& out, const std::u32string& text, size_t index) {
  const char32_t cp = text[index];
  if (cp < 0x80) {
    out.push_back(static_cast<char>(cp >= 'A' && cp <= 'Z' ? cp + 32 : cp));
  } else if (cp == 0x3A3) {
    append_utf8(out, lower_sigma(text, index));
  } else {
    append_mapped(out, cp, CaseMode::kLower);
  }
}

std::string ascii_mapped(std::string_view text, bool to_upper) {
  std::string out(text);
  for (char& c : out) {
    if (to_upper && c >= 'a' && c <= 'z') c = static_cast<char>(c - 32);
    if (!to_upper && c >= 'A' && c <= 'Z') c = static_cast<char>(c + 32);
  }
  return out;
}

}  // namespace

void append_upper(std::string& out, char32_t cp) {
  if (cp < 0x80) {
    out.push_back(static_cast<char>(cp >= 'a' && cp <= 'z' ? cp - 32 : cp));
  } else {
    append_mapped(out, cp, CaseMode::kUpper);
  }
}

void append_title(std::string& out, char32_t cp) {
  if (cp < 0x80) {
    append_upper(out, cp);
  } else {
    append_mapped(out, cp, CaseMode::kTitle);
  }
}

std::string upper(std::string_view text) {
  if (is_ascii(text)) return ascii_mapped(text, true);
  std::string out;
  out.reserve(text.size());
  size_t pos = 0;
  while (pos < text.size()) append_upper(out, decode_one(text, pos));
  return out;
}

std::string lower(std::string_view text) {
  if (is_ascii(text)) return ascii_mapped(text, false);
  const std::u32string cps = decode(text);
  std::string out;
  out.reserve(text.size());
  for (size_t i = 0; i < cps.size(); ++i) append_lower_at(out, cps, i);
  return out;
}

std::string title(std::string_view text) {
  const std::u32string cps = decode(text);
  std::string out;
  out.reserve(text.size());
  bool previous_cased = false;
  for (size_t i = 0; i < cps.size(); ++i) {
    if (previous_cased) {
      append_lower_at(out, cps, i);
    } else {
      append_title(out, cps[i]);
    }
    previous_cased = is_cased(cps[i]);
  }
  return out;
}

std::string capitalize(std::string_view text) {
  const std::u32string cps = decode(text);
  std::string out;
  out.reserve(text.size());
  for (size_t i = 0; i < cps.size(); ++i) {
    if (i == 0) {
      append_title(out, cps[i]);
    } else {
      append_lower_at(out, cps, i);
    }
  }
  return out;
}

std::string swapcase(std::string_view text) {
  const std::u32string cps = decode(text);
  std::string out;
  out.reserve(text.size());
  for (size_t i = 0; i < cps.size(); ++i) {
    if (is_upper_char(cps[i])) {
      append_lower_at(out, cps, i);
    } else if (is_lower_char(cps[i])) {
      append_upper(out, cps[i]);
    } else {
      append_utf8(out, cps[i]);
    }
  }
  return out;
}

std::string casefold(std::string_view text) {
  if (is_ascii(text)) return ascii_mapped(text, false);
  std::string out;
  out.reserve(text.size());
  size_t pos = 0;
  while (pos < text.size()) {
    const char32_t cp = decode_one(text, pos);
    if (cp < 0x80) {
      out.push_back(static_cast<char>(cp >= 'A' && cp <= 'Z' ? cp + 32 : cp));
    } else {
      append_mapped(out, cp, CaseMode::kFold);
    }
  }
  return out;
}

}  // namespace hearth::jinja::pystr
