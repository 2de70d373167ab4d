// Python str methods that cut, search and pad: strip, split, find, replace, center, ...
// Indices are code points; the work is done on UTF-8 bytes (a valid UTF-8 needle can only
// match at code point boundaries), with byte offsets converted only where an index is asked.
#include <algorithm>

#include "jinja/pystr.h"

namespace hearth::jinja::pystr {

namespace {

bool is_ascii_space(unsigned char c) {
  return c == ' ' || (c >= 0x09 && c <= 0x0D) || (c >= 0x1C && c <= 0x1F);
}

// Code point starting at byte `pos`, and its length in bytes.
char32_t code_point_at(std::string_view text, size_t pos, size_t& length) {
  size_t next = pos;
  const char32_t cp = decode_one(text, next);
  length = next - pos;
  return cp;
}

// Start of the code point that ends at byte `end` (end > 0).
size_t previous_boundary(std::string_view text, size_t end) {
  size_t pos = end - 1;
  while (pos > 0 && (static_cast<unsigned char>(text[pos]) & 0xC0) == 0x80 && end - pos < 4) --pos;
  return pos;
}

// Whether the code point at [pos, pos+length) is one to strip.
bool in_strip_set(std::string_view text, size_t pos, size_t length,
                  const std::optional<std::string_view>& chars) {
  if (!chars) {
    if (length == 1) return is_ascii_space(static_cast<unsigned char>(text[pos]));
    size_t p = pos;
    return is_space(decode_one(text, p));
  }
  // A whole UTF-8 sequence can only match at a code point boundary of chars.
  return chars->find(text.substr(pos, length)) != std::string_view::npos;
}

size_t strip_left_end(std::string_view text, const std::optional<std::string_view>& chars) {
  size_t pos = 0;
  if (!chars) {
    while (pos < text.size() && is_ascii_space(static_cast<unsigned char>(text[pos]))) ++pos;
  }
  while (pos < text.size()) {
    size_t length = 0;
    code_point_at(text, pos, length);
    if (!in_strip_set(text, pos, length, chars)) break;
    pos += length;
  }
  return pos;
}

size_t strip_right_start(std::string_view text, size_t floor,
                         const std::optional<std::string_view>& chars) {
  size_t end = text.size();
  if (!chars) {
    while (end > floor && is_ascii_space(static_cast<unsigned char>(text[end - 1]))) --end;
  }
  while (end > floor) {
    const size_t start = previous_boundary(text, end);
    if (!in_strip_set(text, start, end - start, chars)) break;
    end = start;
  }
  return end;
}

int64_t count_code_points_between(std::string_view text, size_t from, size_t to) {
  return static_cast<int64_t>(code_point_count(text.substr(from, to - from)));
}

// The byte range of the code point span [span.start, span.end) (span already adjusted and
// start <= end).
std::pair<size_t, size_t> byte_range(std::string_view text, Span span) {
  const size_t begin = byte_offset(text, span.start);
  const size_t end = begin + byte_offset(text.substr(begin), span.end - span.start);
  return {begin, end};
}

int64_t length_in_code_points(std::string_view text) {
  return static_cast<int64_t>(code_point_count(text));
}

}  // namespace

Span adjust_indices(int64_t length, std::optional<int64_t> start, std::optional<int64_t> end) {
  Span span{start.value_or(0), end.value_or(length)};
  if (span.end > length) {
    span.end = length;
  } else if (span.end < 0) {
    span.end = std::max<int64_t>(0, span.end + length);
  }
  if (span.start < 0) span.start = std::max<int64_t>(0, span.start + length);
  return span;
}

size_t byte_offset(std::string_view text, int64_t index) {
  size_t pos = 0;
  for (int64_t i = 0; i < index && pos < text.size(); ++i) {
    if (static_cast<unsigned char>(text[pos]) < 0x80) {
      ++pos;
    } else {
      decode_one(text, pos);
    }
  }
  return pos;
}

std::string_view cp_slice(std::string_view text, std::optional<int64_t> start,
                          std::optional<int64_t> end) {
  const int64_t length =
      is_ascii(text) ? static_cast<int64_t>(text.size()) : length_in_code_points(text);
  Span span = adjust_indices(length, start, end);
  if (span.start >= span.end) return {};
  const auto [begin, finish] = byte_range(text, span);
  return text.substr(begin, finish - begin);
}

// --- Stripping ---

std::string_view strip(std::string_view text, std::optional<std::string_view> chars) {
  const size_t begin = strip_left_end(text, chars);
  const size_t end = strip_right_start(text, begin, chars);
  return text.substr(begin, end - begin);
}

std::string_view lstrip(std::string_view text, std::optional<std::string_view> chars) {
  return text.substr(strip_left_end(text, chars));
}

std::string_view rstrip(std::string_view text, std::optional<std::string_view> chars) {
  return text.substr(0, strip_right_start(text, 0, chars));
}

// --- Splitting ---

namespace {

// Length in bytes of the whitespace code point at pos, or 0 when it is not whitespace.
size_t space_length_at(std::string_view text, size_t pos) {
  const auto byte = static_cast<unsigned char>(text[pos]);
  if (byte < 0x80) return is_ascii_space(byte) ? 1 : 0;
  size_t length = 0;
  const char32_t cp = code_point_at(text, pos, length);
  return is_space(cp) ? length : 0;
}

// Length in bytes of the whitespace code point ending at end, or 0.
size_t space_length_before(std::string_view text, size_t end) {
  const size_t start = previous_boundary(text, end);
  return space_length_at(text, start) == end - start ? end - start : 0;
}

std::vector<std::string_view> split_whitespace(std::string_view text, int64_t maxsplit) {
  std::vector<std::string_view> pieces;
  size_t pos = 0;
  while (true) {
    while (pos < text.size()) {
      const size_t space = space_length_at(text, pos);
      if (space == 0) break;
      pos += space;
    }
    if (pos >= text.size()) break;
    if (maxsplit >= 0 && static_cast<int64_t>(pieces.size()) == maxsplit) {
      pieces.push_back(text.substr(pos));
      break;
    }
    const size_t start = pos;
    while (pos < text.size()) {
      const auto byte = static_cast<unsigned char>(text[pos]);
      if (byte < 0x80) {  // the common case, without decoding
        if (is_ascii_space(byte)) break;
        ++pos;
        continue;
      }
      size_t length = 0;
      if (is_space(code_point_at(text, pos, length))) break;
      pos += length;
    }
    pieces.push_back(text.substr(start, pos - start));
  }
  return pieces;
}

std::vector<std::string_view> rsplit_whitespace(std::string_view text, int64_t maxsplit) {
  std::vector<std::string_view> pieces;
  size_t end = text.size();
  while (true) {
    while (end > 0) {
      const size_t space = space_length_before(text, end);
      if (space == 0) break;
      end -= space;
    }
    if (end == 0) break;
    if (maxsplit >= 0 && static_cast<int64_t>(pieces.size()) == maxsplit) {
      pieces.push_back(text.substr(0, end));
      break;
    }
    size_t start = end;
    while (start > 0 && space_length_before(text, start) == 0) {
      start = previous_boundary(text, start);
    }
    pieces.push_back(text.substr(start, end - start));
    end = start;
  }
  std::reverse(pieces.begin(), pieces.end());
  return pieces;
}

}  // namespace

std::vector<std::string_view> split(std::string_view text, std::optional<std::string_view> sep,
                                    int64_t maxsplit) {
  if (!sep) return split_whitespace(text, maxsplit);
  std::vector<std::string_view> pieces;
  size_t pos = 0;
  while (maxsplit < 0 || static_cast<int64_t>(pieces.size()) < maxsplit) {
    const size_t found = text.find(*sep, pos);
    if (found == std::string_view::npos) break;
    pieces.push_back(text.substr(pos, found - pos));
    pos = found + sep->size();
  }
  pieces.push_back(text.substr(pos));
  return pieces;
}

std::vector<std::string_view> rsplit(std::string_view text, std::optional<std::string_view> sep,
                                     int64_t maxsplit) {
  if (!sep) return rsplit_whitespace(text, maxsplit);
  std::vector<std::string_view> pieces;
  size_t end = text.size();
  while (maxsplit < 0 || static_cast<int64_t>(pieces.size()) < maxsplit) {
    if (end < sep->size()) break;
    const size_t found = text.substr(0, end).rfind(*sep);
    if (found == std::string_view::npos) break;
    pieces.push_back(text.substr(found + sep->size(), end - found - sep->size()));
    end = found;
  }
  pieces.push_back(text.substr(0, end));
  std::reverse(pieces.begin(), pieces.end());
  return pieces;
}

std::vector<std::string_view> splitlines(std::string_view text, bool keepends) {
  std::vector<std::string_view> lines;
  size_t start = 0;
  size_t pos = 0;
  while (pos < text.size()) {
    size_t length = 0;
    const char32_t cp = code_point_at(text, pos, length);
    const bool is_break = cp == '\n' || cp == '\r' || cp == 0x0B || cp == 0x0C ||
                          (cp >= 0x1C && cp <= 0x1E) || cp == 0x85 || cp == 0x2028 || cp == 0x2029;
    if (!is_break) {
      pos += length;
      continue;
    }
    size_t break_end = pos + length;
    if (cp == '\r' && break_end < text.size() && text[break_end] == '\n') ++break_end;
    lines.push_back(text.substr(start, (keepends ? break_end : pos) - start));
    start = pos = break_end;
  }
  if (start < text.size()) lines.push_back(text.substr(start));
  return lines;
}

Partition partition(std::string_view text, std::string_view sep) {
  const size_t found = text.find(sep);
  if (found == std::string_view::npos) return {text, {}, {}};
  return {text.substr(0, found), text.substr(found, sep.size()), text.substr(found + sep.size())};
}

Partition rpartition(std::string_view text, std::string_view sep) {
  const size_t found = text.rfind(sep);
  if (found == std::string_view::npos) return {{}, {}, text};
  return {text.substr(0, found), text.substr(found, sep.size()), text.substr(found + sep.size())};
}

// --- Searching ---

namespace {

// The searched window text[start:end] in bytes, with its code point start; nullopt when the
// window cannot hold `needle_length` code points.
struct Window {
  std::string_view bytes;
  int64_t start_index = 0;
};

std::optional<Window> search_window(std::string_view text, std::optional<int64_t> start,
                                    std::optional<int64_t> end, int64_t needle_length) {
  const bool ascii = is_ascii(text);
  const int64_t length = ascii ? static_cast<int64_t>(text.size()) : length_in_code_points(text);
  const Span span = adjust_indices(length, start, end);
  if (span.end - span.start < needle_length) return std::nullopt;
  if (ascii) {
    return Window{
        text.substr(static_cast<size_t>(span.start), static_cast<size_t>(span.end - span.start)),
        span.start};
  }
  const auto [begin, finish] = byte_range(text, span);
  return Window{text.substr(begin, finish - begin), span.start};
}

}  // namespace

int64_t find(std::string_view text, std::string_view sub, std::optional<int64_t> start,
             std::optional<int64_t> end) {
  const auto window = search_window(text, start, end, length_in_code_points(sub));
  if (!window) return -1;
  const size_t found = window->bytes.find(sub);
  if (found == std::string_view::npos) return -1;
  return window->start_index + count_code_points_between(window->bytes, 0, found);
}

int64_t rfind(std::string_view text, std::string_view sub, std::optional<int64_t> start,
              std::optional<int64_t> end) {
  const auto window = search_window(text, start, end, length_in_code_points(sub));
  if (!window) return -1;
  const size_t found = window->bytes.rfind(sub);
  if (found == std::string_view::npos) return -1;
  return window->start_index + count_code_points_between(window->bytes, 0, found);
}

int64_t count(std::string_view text, std::string_view sub, std::optional<int64_t> start,
              std::optional<int64_t> end) {
  const auto window = search_window(text, start, end, length_in_code_points(sub));
  if (!window) return 0;
  if (sub.empty()) return length_in_code_points(window->bytes) + 1;
  int64_t n = 0;
  for (size_t pos = window->bytes.find(sub); pos != std::string_view::npos;
       pos = window->bytes.find(sub, pos + sub.size())) {
    ++n;
  }
  return n;
}

bool startswith(std::string_view text, std::string_view prefix, std::optional<int64_t> start,
                std::optional<int64_t> end) {
  if (!start && !end) return text.substr(0, prefix.size()) == prefix;
  const auto window = search_window(text, start, end, length_in_code_points(prefix));
  return window && window->bytes.substr(0, prefix.size()) == prefix;
}

bool endswith(std::string_view text, std::string_view suffix, std::optional<int64_t> start,
              std::optional<int64_t> end) {
  const auto ends_with = [&](std::string_view bytes) {
    return bytes.size() >= suffix.size() && bytes.substr(bytes.size() - suffix.size()) == suffix;
  };
  if (!start && !end) return ends_with(text);
  const auto window = search_window(text, start, end, length_in_code_points(suffix));
  return window && ends_with(window->bytes);
}

std::string replace(std::string_view text, std::string_view old, std::string_view replacement,
                    int64_t count) {
  std::string out;
  out.reserve(text.size());
  if (old.empty()) {
    // Python inserts the replacement before every code point and at the end.
    int64_t done = 0;
    size_t pos = 0;
    while (count < 0 || done < count) {
      out.append(replacement);
      ++done;
      if (pos >= text.size()) break;
      size_t length = 0;
      code_point_at(text, pos, length);
      out.append(text.substr(pos, length));
      pos += length;
    }
    out.append(text.substr(std::min(pos, text.size())));
    return out;
  }
  size_t pos = 0;
  for (int64_t done = 0; count < 0 || done < count; ++done) {
    const size_t found = text.find(old, pos);
    if (found == std::string_view::npos) break;
    out.append(text.substr(pos, found - pos));
    out.append(replacement);
    pos = found + old.size();
  }
  out.append(text.substr(pos));
  return out;
}

std::string_view removeprefix(std::string_view text, std::string_view prefix) {
  return text.substr(0, prefix.size()) == prefix ? text.substr(prefix.size()) : text;
}

std::string_view removesuffix(std::string_view text, std::string_view suffix) {
  if (text.size() >= suffix.size() && text.substr(text.size() - suffix.size()) == suffix) {
    return text.substr(0, text.size() - suffix.size());
  }
  return text;
}

// --- Padding ---

namespace {

std::string pad(std::string_view text, int64_t left, int64_t right, char32_t fill) {
  std::string fill_utf8;
  append_utf8(fill_utf8, fill);
  std::string out;
  out.reserve(text.size() + static_cast<size_t>(left + right) * fill_utf8.size());
  for (int64_t i = 0; i < left; ++i) out += fill_utf8;
  out.append(text);
  for (int64_t i = 0; i < right; ++i) out += fill_utf8;
  return out;
}

}  // namespace

std::string center(std::string_view text, int64_t width, char32_t fill) {
  const int64_t length = length_in_code_points(text);
  if (width <= length) return std::string(text);
  const int64_t margin = width - length;
  // Python puts the odd extra space on the left only when both margin and width are odd.
  const int64_t left = margin / 2 + (margin & width & 1);
  return pad(text, left, margin - left, fill);
}

std::string ljust(std::string_view text, int64_t width, char32_t fill) {
  const int64_t length = length_in_code_points(text);
  return width <= length ? std::string(text) : pad(text, 0, width - length, fill);
}

std::string rjust(std::string_view text, int64_t width, char32_t fill) {
  const int64_t length = length_in_code_points(text);
  return width <= length ? std::string(text) : pad(text, width - length, 0, fill);
}

std::string zfill(std::string_view text, int64_t width) {
  const int64_t length = length_in_code_points(text);
  if (width <= length) return std::string(text);
  std::string out = pad(text, width - length, 0, '0');
  const size_t sign_at = static_cast<size_t>(width - length);
  if (!text.empty() && (text[0] == '+' || text[0] == '-')) {
    out[0] = text[0];
    out[sign_at] = '0';
  }
  return out;
}

std::string expandtabs(std::string_view text, int64_t tabsize) {
  std::string out;
  out.reserve(text.size());
  int64_t column = 0;
  size_t pos = 0;
  while (pos < text.size()) {
    size_t length = 0;
    const char32_t cp = code_point_at(text, pos, length);
    if (cp == '\t') {
      if (tabsize > 0) {
        const int64_t spaces = tabsize - column % tabsize;
        out.append(static_cast<size_t>(spaces), ' ');
        column += spaces;
      }
    } else {
      out.append(text.substr(pos, length));
      column = (cp == '\n' || cp == '\r') ? 0 : column + 1;
    }
    pos += length;
  }
  return out;
}

}  // namespace hearth::jinja::pystr
