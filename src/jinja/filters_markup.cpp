// Filters about markup and layout: striptags, wordwrap (textwrap's greedy fill), urlencode,
// xmlattr and pprint.
#include <algorithm>
#include <cstdlib>

#include "jinja/filters_common.h"
#include "jinja/pystr.h"

namespace hearth::jinja::builtins {

namespace {

std::string text_of(const Value& value) {
  if (value.is_string()) return value.as_string();
  return to_str(value);
}

struct NamedEntity {
  std::string_view name;
  char32_t code_point;
};

// The common HTML named character references (html.unescape knows all of HTML5's).
constexpr NamedEntity kEntities[] = {
    {"amp", '&'},      {"lt", '<'},        {"gt", '>'},       {"quot", '"'},     {"apos", '\''},
    {"nbsp", 0xA0},    {"hellip", 0x2026}, {"mdash", 0x2014}, {"ndash", 0x2013}, {"copy", 0xA9},
    {"reg", 0xAE},     {"trade", 0x2122},  {"laquo", 0xAB},   {"raquo", 0xBB},   {"lsquo", 0x2018},
    {"rsquo", 0x2019}, {"ldquo", 0x201C},  {"rdquo", 0x201D}, {"bull", 0x2022},  {"middot", 0xB7},
    {"deg", 0xB0},     {"times", 0xD7},    {"divide", 0xF7},  {"euro", 0x20AC},  {"pound", 0xA3},
    {"yen", 0xA5},     {"cent", 0xA2},     {"sect", 0xA7},    {"para", 0xB6},    {"shy", 0xAD},
    {"iexcl", 0xA1},   {"iquest", 0xBF},
};

// Decodes one character reference starting at text[pos] == '&'; returns false when none.
bool decode_reference(std::string_view text, size_t& pos, std::string& out) {
  const size_t semicolon = text.find(';', pos);
  if (semicolon == std::string_view::npos || semicolon - pos > 32) return false;
  const std::string_view body = text.substr(pos + 1, semicolon - pos - 1);
  if (body.size() >= 2 && body[0] == '#') {
    const bool hex = body[1] == 'x' || body[1] == 'X';
    const std::string digits(body.substr(hex ? 2 : 1));
    if (digits.empty() || digits.find_first_not_of(hex ? "0123456789abcdefABCDEF" : "0123456789") !=
                              std::string::npos) {
      return false;
    }
    const unsigned long code = std::strtoul(digits.c_str(), nullptr, hex ? 16 : 10);
    const bool invalid = code == 0 || code > 0x10FFFF || (code >= 0xD800 && code <= 0xDFFF);
    pystr::append_utf8(out, invalid ? 0xFFFD : static_cast<char32_t>(code));
    pos = semicolon + 1;
    return true;
  }
  for (const NamedEntity& entity : kEntities) {
    if (entity.name == body) {
      pystr::append_utf8(out, entity.code_point);
      pos = semicolon + 1;
      return true;
    }
  }
  return false;
}

std::string html_unescape(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  size_t pos = 0;
  while (pos < text.size()) {
    if (text[pos] == '&' && decode_reference(text, pos, out)) continue;
    out.push_back(text[pos++]);
  }
  return out;
}

// Removes every match of open.*?close (non-greedy, across lines).
std::string remove_spans(std::string_view text, std::string_view open, std::string_view close) {
  std::string out;
  out.reserve(text.size());
  size_t pos = 0;
  while (pos < text.size()) {
    const size_t start = text.find(open, pos);
    if (start == std::string_view::npos) break;
    const size_t end = text.find(close, start + open.size());
    if (end == std::string_view::npos) break;
    out.append(text.substr(pos, start - pos));
    pos = end + close.size();
  }
  out.append(text.substr(pos));
  return out;
}

}  // namespace

Result<Value> filter_striptags(const Value& input, CallArgs& args, Interp&) {
  HEARTH_ASSIGN_OR_RETURN(auto bound, bind_args("striptags", args, {}));
  (void)bound;
  // markupsafe: drop comments, then tags, collapse whitespace, then unescape entities.
  const std::string without_comments = remove_spans(text_of(input), "<!--", "-->");
  const std::string without_tags = remove_spans(without_comments, "<", ">");
  std::string collapsed;
  for (std::string_view word : pystr::split(without_tags, std::nullopt)) {
    if (!collapsed.empty()) collapsed.push_back(' ');
    collapsed.append(word);
  }
  return Value(html_unescape(collapsed));
}

// --- wordwrap ---

namespace {

bool is_wrap_space(char c) {
  return c == ' ' || c == '\t' || c == '\n' || c == '\v' || c == '\f' || c == '\r';
}

// textwrap's chunks without hyphen breaking: runs of whitespace and runs of anything else.
std::vector<std::string> wrap_chunks_simple(std::string_view text) {
  std::vector<std::string> chunks;
  size_t pos = 0;
  while (pos < text.size()) {
    const bool space = is_wrap_space(text[pos]);
    size_t end = pos;
    while (end < text.size() && is_wrap_space(text[end]) == space) ++end;
    chunks.emplace_back(text.substr(pos, end - pos));
    pos = end;
  }
  return chunks;
}

// Character classes of textwrap's word-splitting pattern, over code points.
struct HyphenScanner {
  std::u32string text;

  char32_t at(int64_t i) const {
    return i >= 0 && i < static_cast<int64_t>(text.size()) ? text[static_cast<size_t>(i)] : 0;
  }
  bool in_range(int64_t i) const { return i >= 0 && i < static_cast<int64_t>(text.size()); }
  bool space(int64_t i) const {
    return in_range(i) && at(i) < 0x80 && is_wrap_space(static_cast<char>(at(i)));
  }
  bool word(int64_t i) const { return in_range(i) && pystr::is_word_char(at(i)); }
  bool letter(int64_t i) const { return word(i) && !pystr::is_decimal(at(i)); }
  bool hyphen(int64_t i) const { return in_range(i) && at(i) == '-'; }
  bool word_punct(int64_t i) const {
    return word(i) || (in_range(i) &&
                       std::u32string_view(U"!\"'&.,?").find(at(i)) != std::u32string_view::npos);
  }
  // At i: two or more hyphens followed by a word character; returns the end of the hyphens.
  int64_t dash_run_end(int64_t i) const {
    int64_t end = i;
    while (hyphen(end)) ++end;
    return (end - i >= 2 && word(end)) ? end : -1;
  }
  // Where a word chunk starting at `start` ends (exclusive).
  int64_t word_end(int64_t start) const {
    for (int64_t j = start + 1;; ++j) {
      // A hyphen after two letters, or after letter-hyphen-letter, before letter[-]letter.
      if (hyphen(j) &&
          ((letter(j - 2) && letter(j - 1)) || (letter(j - 3) && hyphen(j - 2) && letter(j - 1))) &&
          letter(j + 1) && (letter(j + 2) || (hyphen(j + 2) && letter(j + 3)))) {
        return j + 1;
      }
      if (!in_range(j) || space(j)) return j;
      if (word_punct(j - 1) && hyphen(j) && dash_run_end(j) >= 0) return j;
    }
  }
};

// textwrap's chunks with break_on_hyphens: whitespace runs, em-dashes between words, and
// words split after hyphens inside hyphenated words.
std::vector<std::string> wrap_chunks_hyphenated(std::string_view text) {
  HyphenScanner scanner{pystr::decode(text)};
  std::vector<std::string> chunks;
  const auto n = static_cast<int64_t>(scanner.text.size());
  int64_t pos = 0;
  while (pos < n) {
    int64_t end = pos + 1;
    if (scanner.space(pos)) {
      while (scanner.space(end)) ++end;
    } else if (scanner.word_punct(pos - 1) && scanner.dash_run_end(pos) >= 0) {
      end = scanner.dash_run_end(pos);
    } else {
      end = scanner.word_end(pos);
    }
    chunks.push_back(
        pystr::encode(std::u32string_view(scanner.text)
                          .substr(static_cast<size_t>(pos), static_cast<size_t>(end - pos))));
    pos = end;
  }
  return chunks;
}

int64_t cp_length(std::string_view text) {
  return static_cast<int64_t>(pystr::code_point_count(text));
}

bool blank(std::string_view text) {
  return pystr::strip(text).empty();
}

struct WrapOptions {
  int64_t width;
  bool break_long_words;
  bool break_on_hyphens;
};

// textwrap.TextWrapper._handle_long_word: breaks the chunk at the space left (or after the
// last hyphen that fits) when long words may be broken.
void handle_long_word(std::vector<std::string>& reversed_chunks, std::vector<std::string>& line,
                      int64_t line_length, const WrapOptions& options) {
  const int64_t space_left = options.width < 1 ? 1 : options.width - line_length;
  if (options.break_long_words) {
    std::string& chunk = reversed_chunks.back();
    int64_t end = space_left;
    if (options.break_on_hyphens && cp_length(chunk) > space_left) {
      const std::string_view head = pystr::cp_slice(chunk, 0, space_left);
      const size_t hyphen = head.rfind('-');
      if (hyphen != std::string_view::npos && hyphen > 0 &&
          head.substr(0, hyphen).find_first_not_of('-') != std::string_view::npos) {
        end = cp_length(head.substr(0, hyphen)) + 1;
      }
    }
    line.emplace_back(pystr::cp_slice(chunk, 0, end));
    chunk = std::string(pystr::cp_slice(chunk, end, std::nullopt));
  } else if (line.empty()) {
    line.push_back(std::move(reversed_chunks.back()));
    reversed_chunks.pop_back();
  }
}

std::vector<std::string> wrap_paragraph(std::string_view paragraph, const WrapOptions& options) {
  std::vector<std::string> reversed_chunks =
      options.break_on_hyphens ? wrap_chunks_hyphenated(paragraph) : wrap_chunks_simple(paragraph);
  std::reverse(reversed_chunks.begin(), reversed_chunks.end());
  std::vector<std::string> lines;
  while (!reversed_chunks.empty()) {
    std::vector<std::string> line;
    int64_t line_length = 0;
    if (blank(reversed_chunks.back()) && !lines.empty()) reversed_chunks.pop_back();
    while (!reversed_chunks.empty()) {
      const int64_t length = cp_length(reversed_chunks.back());
      if (line_length + length > options.width) break;
      line.push_back(std::move(reversed_chunks.back()));
      reversed_chunks.pop_back();
      line_length += length;
    }
    if (!reversed_chunks.empty() && cp_length(reversed_chunks.back()) > options.width) {
      handle_long_word(reversed_chunks, line, line_length, options);
      if (!reversed_chunks.empty() && reversed_chunks.back().empty()) reversed_chunks.pop_back();
    }
    if (!line.empty() && blank(line.back())) line.pop_back();
    if (!line.empty()) {
      std::string joined;
      for (const std::string& piece : line) joined += piece;
      lines.push_back(std::move(joined));
    }
  }
  return lines;
}

}  // namespace

Result<Value> filter_wordwrap(const Value& input, CallArgs& args, Interp& interp) {
  HEARTH_ASSIGN_OR_RETURN(auto bound, bind_args("wordwrap", args,
                                                {{"width", 79},
                                                 {"break_long_words", true},
                                                 {"wrapstring", Value::none()},
                                                 {"break_on_hyphens", true}}));
  HEARTH_ASSIGN_OR_RETURN(const int64_t width, to_integer(bound[0]));
  std::string wrapstring = "\n";
  if (!bound[2].is_none()) {
    HEARTH_ASSIGN_OR_RETURN(wrapstring, to_string_arg(bound[2], "wordwrap", "wrapstring"));
  }
  if (!input.is_string()) {
    return render_error("'" + type_name(input) + "' object has no attribute 'splitlines'");
  }
  const WrapOptions options{width, truthy(bound[1]), truthy(bound[3])};
  std::string out;
  bool first_paragraph = true;
  for (std::string_view paragraph : pystr::splitlines(input.as_string())) {
    if (!first_paragraph) out += wrapstring;
    first_paragraph = false;
    if (width <= 0) {
      return render_error("invalid width " + std::to_string(width) + " (must be > 0)");
    }
    bool first_line = true;
    for (const std::string& line : wrap_paragraph(paragraph, options)) {
      if (!first_line) out += wrapstring;
      first_line = false;
      out += line;
    }
    HEARTH_RETURN_IF_ERROR(interp.charge(out.size()));
  }
  return Value(std::move(out));
}

// --- urlencode, xmlattr ---

namespace {

// urllib.parse.quote over UTF-8: letters, digits and _.-~ stay, '/' too outside query strings.
std::string url_quote(const Value& value, bool for_query) {
  static constexpr char kHex[] = "0123456789ABCDEF";
  const std::string text = text_of(value);
  std::string out;
  out.reserve(text.size());
  for (char c : text) {
    const auto byte = static_cast<unsigned char>(c);
    const bool safe = (byte >= 'a' && byte <= 'z') || (byte >= 'A' && byte <= 'Z') ||
                      (byte >= '0' && byte <= '9') || byte == '_' || byte == '.' || byte == '-' ||
                      byte == '~' || (byte == '/' && !for_query);
    if (safe) {
      out.push_back(c);
    } else if (byte == ' ' && for_query) {
      out.push_back('+');
    } else {
      out.push_back('%');
      out.push_back(kHex[byte >> 4]);
      out.push_back(kHex[byte & 0xF]);
    }
  }
  return out;
}

}  // namespace

Result<Value> filter_urlencode(const Value& input, CallArgs& args, Interp&) {
  HEARTH_ASSIGN_OR_RETURN(auto bound, bind_args("urlencode", args, {}));
  (void)bound;
  if (!input.is_list() && !input.is_dict()) return Value(url_quote(input, false));
  std::vector<std::pair<Value, Value>> pairs;
  if (input.is_dict()) {
    pairs = input.dict_data().entries;
  } else {
    for (const Value& item : input.list_data().items) {
      HEARTH_ASSIGN_OR_RETURN(std::vector<Value> pair, iterate(item));
      if (pair.size() != 2) {
        return render_error("cannot unpack " + std::to_string(pair.size()) +
                            " values into a key and a value");
      }
      pairs.emplace_back(pair[0], pair[1]);
    }
  }
  std::string out;
  for (const auto& [key, value] : pairs) {
    if (!out.empty()) out.push_back('&');
    out += url_quote(key, true) + "=" + url_quote(value, true);
  }
  return Value(std::move(out));
}

Result<Value> filter_xmlattr(const Value& input, CallArgs& args, Interp&) {
  HEARTH_ASSIGN_OR_RETURN(auto bound, bind_args("xmlattr", args, {{"autospace", true}}));
  if (!input.is_dict()) {
    return render_error("'" + type_name(input) + "' object has no attribute 'items'");
  }
  std::string out;
  for (const auto& [key, value] : input.dict_data().entries) {
    if (value.is_none() || value.is_undefined()) continue;
    if (!key.is_string()) {
      return render_error("expected string or bytes-like object, got '" + type_name(key) + "'");
    }
    // Characters that would end an attribute name in HTML.
    if (key.as_string().find_first_of(" \t\n\r\f\v/>=") != std::string::npos) {
      return render_error("Invalid character in attribute name: " + repr(key));
    }
    if (!out.empty()) out.push_back(' ');
    out += html_escape(key.as_string()) + "=\"" + escape_value(value).as_string() + "\"";
  }
  if (truthy(bound[0]) && !out.empty()) out.insert(out.begin(), ' ');
  return Value(std::move(out));
}

// --- pprint ---

namespace {

// pprint.pformat's one-line form: repr with dict keys sorted (when they can be ordered).
Result<std::string> pretty_repr(const Value& value, int depth) {
  if (depth > 200) return render_error("maximum recursion depth exceeded in pprint");
  if (value.is_dict()) {
    std::vector<std::pair<Value, Value>> entries = value.dict_data().entries;
    std::vector<Value> keys;
    std::vector<std::vector<Value>> sort_keys;
    for (const auto& entry : entries) {
      keys.push_back(entry.first);
      sort_keys.push_back({entry.first});
    }
    std::vector<Value> order;
    for (size_t i = 0; i < entries.size(); ++i) order.emplace_back(static_cast<int64_t>(i));
    // pprint falls back to insertion order when keys cannot be compared.
    if (!sort_by_keys(order, sort_keys, false).is_ok()) {
      order.clear();
      for (size_t i = 0; i < entries.size(); ++i) order.emplace_back(static_cast<int64_t>(i));
    }
    std::string out = "{";
    for (size_t i = 0; i < order.size(); ++i) {
      const auto& entry = entries[static_cast<size_t>(order[i].as_int())];
      if (i > 0) out += ", ";
      HEARTH_ASSIGN_OR_RETURN(const std::string key_text, pretty_repr(entry.first, depth + 1));
      HEARTH_ASSIGN_OR_RETURN(const std::string value_text, pretty_repr(entry.second, depth + 1));
      out += key_text + ": " + value_text;
    }
    return out + "}";
  }
  if (value.is_list()) {
    const bool tuple = value.is_tuple();
    const auto& items = value.list_data().items;
    std::string out = tuple ? "(" : "[";
    for (size_t i = 0; i < items.size(); ++i) {
      if (i > 0) out += ", ";
      HEARTH_ASSIGN_OR_RETURN(const std::string item_text, pretty_repr(items[i], depth + 1));
      out += item_text;
    }
    if (tuple && items.size() == 1) out += ",";
    return out + (tuple ? ")" : "]");
  }
  return repr(value);
}

}  // namespace

Result<Value> filter_pprint(const Value& input, CallArgs& args, Interp&) {
  HEARTH_ASSIGN_OR_RETURN(auto bound, bind_args("pprint", args, {}));
  (void)bound;
  HEARTH_ASSIGN_OR_RETURN(std::string text, pretty_repr(input, 0));
  return Value(std::move(text));
}

}  // namespace hearth::jinja::builtins
