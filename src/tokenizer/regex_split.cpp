// PCRE2 implementation of llama.cpp's regex word splitting (tokenizers.md §5.5).
//
// llama.cpp runs most patterns through std::regex on a "collapsed" text (one byte per code
// point standing for its Unicode class) and patterns with literal non-ASCII characters through
// std::wregex with non-ASCII whitespace replaced by U+000B. Matching the real text with
// Unicode properties gives the same chunks once a few ECMAScript/C-locale details are
// reproduced, which translate_pattern() does:
//   * \s is exactly llama.cpp's whitespace set; \d, \w, \b are ASCII-only;
//   * \p{Lu}, \p{Ll}, \p{Lt}, \p{Lm}, \p{Lo} all mean \p{L} (the collapsed text has one
//     letter class);
//   * '~' is not part of \p{S} (the collapsed symbol class lists only $+<=>^`|);
// and patterns of the std::wregex kind see non-ASCII whitespace as U+000B.
#include <algorithm>

#include "tokenizer/pre_tokenizer.h"
#include "tokenizer/unicode.h"

#define PCRE2_CODE_UNIT_WIDTH 8
#include <pcre2.h>

namespace hearth::tokenizer {

struct RegexSplitter::Compiled {
  pcre2_code* code = nullptr;
  bool wide = false;  // matched on the text with non-ASCII whitespace as U+000B
  Compiled() = default;
  Compiled(const Compiled&) = delete;
  Compiled& operator=(const Compiled&) = delete;
  ~Compiled() { pcre2_code_free(code); }
};

namespace {

using Compiled = RegexSplitter::Compiled;

constexpr std::string_view kWhitespaceRanges =
    R"(\t-\r\x{20}\x{85}\x{A0}\x{1680}\x{2000}-\x{200A}\x{2028}\x{2029}\x{202F}\x{205F}\x{3000})";
constexpr std::string_view kAsciiWord = "A-Za-z0-9_";
constexpr std::string_view kAsciiBoundary =
    "(?:(?<=[A-Za-z0-9_])(?![A-Za-z0-9_])|(?<![A-Za-z0-9_])(?=[A-Za-z0-9_]))";
// Code point standing in for values PCRE2 cannot take in UTF mode (surrogates, > U+10FFFF);
// llama.cpp classes both as "other", like this private-use character.
constexpr uint32_t kOtherStandIn = 0xE000;

// Patterns naming a Unicode category run on llama.cpp's collapsed text; the others run with
// std::wregex (non-ASCII whitespace replaced by U+000B).
bool uses_categories(std::string_view pattern) {
  for (std::string_view cat : {"\\p{N}", "\\p{L", "\\p{P}", "\\p{M}", "\\p{S}"}) {
    if (pattern.find(cat) != std::string_view::npos) return true;
  }
  return false;
}

struct ClassState {
  size_t start = 0;  // position of '[' in the output
  bool negated = false;
  bool has_symbol = false;  // contains \p{S}
  bool has_tilde = false;   // names '~' literally (alone or as a range end)
};

// Translates one escape at pattern[i] ('\\'), appending to out; returns the index after it.
Result<size_t> translate_escape(std::string_view p, size_t i, bool in_class, ClassState& cls,
                                std::string& out) {
  if (i + 1 >= p.size()) return error(ErrorCode::kInvalidArgument, "pattern ends with '\\'");
  const char c = p[i + 1];
  if (c == 'p' || c == 'P' || c == 'x') {
    const size_t close = (i + 2 < p.size() && p[i + 2] == '{') ? p.find('}', i + 3) : i + 1;
    if (close == std::string_view::npos) return error(ErrorCode::kInvalidArgument, "unclosed \\p{");
    std::string_view esc = p.substr(i, close - i + 1);
    if (c == 'p' && esc.size() == 6 && esc[3] == 'L') esc = "\\p{L}";  // Lu, Ll, Lt, Lm, Lo
    if (in_class && esc == "\\p{S}") cls.has_symbol = true;
    out += esc;
    return close + 1;
  }
  if (c == 's' || c == 'd' || c == 'w') {
    const std::string_view members = c == 's' ? kWhitespaceRanges : c == 'd' ? "0-9" : kAsciiWord;
    if (in_class) {
      out += members;
    } else {
      out += '[';
      out += members;
      out += ']';
    }
    return i + 2;
  }
  if (c == 'S' || c == 'D' || c == 'W') {
    if (in_class) return error(ErrorCode::kUnsupported, "negated class escape inside [...]");
    out += "[^";
    out += c == 'S' ? kWhitespaceRanges : c == 'D' ? "0-9" : kAsciiWord;
    out += ']';
    return i + 2;
  }
  if (c == 'b' && !in_class) {
    out += kAsciiBoundary;
    return i + 2;
  }
  if (c == 'B') return error(ErrorCode::kUnsupported, "\\B is not supported");
  out += p.substr(i, 2);
  return i + 2;
}

// Closes a character class, wrapping it when \p{S} must not match '~'.
void close_class(const ClassState& cls, bool collapsed, std::string& out) {
  out += ']';
  if (!collapsed || !cls.has_symbol || cls.has_tilde) return;
  std::string body = out.substr(cls.start);
  out.resize(cls.start);
  out += cls.negated ? "(?:~|" : "(?:(?!~)";
  out += body;
  out += ')';
}

// Per-thread PCRE2 match resources (a JIT stack larger than the default for long words).
struct MatchResources {
  pcre2_match_context* context = nullptr;
  pcre2_jit_stack* jit_stack = nullptr;
  pcre2_match_data* data = nullptr;
  MatchResources() {
    context = pcre2_match_context_create(nullptr);
    jit_stack = pcre2_jit_stack_create(64 * 1024, 8 * 1024 * 1024, nullptr);
    if (context != nullptr && jit_stack != nullptr) {
      pcre2_jit_stack_assign(context, nullptr, jit_stack);
    }
    data = pcre2_match_data_create(1, nullptr);
  }
  ~MatchResources() {
    pcre2_match_data_free(data);
    pcre2_jit_stack_free(jit_stack);
    pcre2_match_context_free(context);
  }
  MatchResources(const MatchResources&) = delete;
  MatchResources& operator=(const MatchResources&) = delete;
};

MatchResources& match_resources() {
  thread_local MatchResources resources;
  return resources;
}

// The text in the form PCRE2 matches: UTF-8 plus the byte offset of every code point.
struct MatchText {
  std::string bytes;
  std::vector<size_t> offsets;  // offsets[i] = start of code point i; offsets[n] = size

  MatchText(const std::vector<uint32_t>& cpts, bool wide) {
    bytes.reserve(cpts.size() + cpts.size() / 2);
    offsets.reserve(cpts.size() + 1);
    for (uint32_t cpt : cpts) {
      offsets.push_back(bytes.size());
      if ((cpt >= 0xD800 && cpt <= 0xDFFF) || cpt > 0x10FFFF) cpt = kOtherStandIn;
      if (wide && cpt > 0x7F && unicode::is_whitespace(cpt)) cpt = 0x0B;
      unicode::append_utf8(bytes, cpt);
    }
    offsets.push_back(bytes.size());
  }
  size_t cpt_index(size_t byte_offset) const {
    return static_cast<size_t>(std::lower_bound(offsets.begin(), offsets.end(), byte_offset) -
                               offsets.begin());
  }
};

using Chunk = std::pair<size_t, size_t>;  // [begin, end) in code points

// One pcre2_match call; falls back to the interpreter when the JIT stack is too small.
int run_match(const Compiled& c, const char* subject, size_t len, size_t start, uint32_t options) {
  MatchResources& res = match_resources();
  const auto* s = reinterpret_cast<PCRE2_SPTR>(subject);
  int rc = pcre2_match(c.code, s, len, start, options | PCRE2_NO_UTF_CHECK, res.data, res.context);
  if (rc == PCRE2_ERROR_JIT_STACKLIMIT) {
    rc = pcre2_match(c.code, s, len, start, options | PCRE2_NO_UTF_CHECK | PCRE2_NO_JIT, res.data,
                     res.context);
  }
  return rc;
}

// Splits one chunk: every match and every non-empty stretch between matches becomes a chunk.
void split_chunk(const Compiled& c, const MatchText& text, Chunk chunk, std::vector<Chunk>& out) {
  const size_t base = text.offsets[chunk.first];
  const size_t len = text.offsets[chunk.second] - base;
  const char* subject = text.bytes.data() + base;
  const auto emit = [&](size_t from, size_t to) {  // byte offsets relative to the chunk
    if (to > from) out.emplace_back(text.cpt_index(base + from), text.cpt_index(base + to));
  };
  size_t pos = 0;
  size_t last = 0;
  uint32_t options = 0;
  while (pos <= len) {
    const int rc = run_match(c, subject, len, pos, options);
    if (rc == PCRE2_ERROR_NOMATCH && options != 0) {
      // No non-empty match where the last empty one was: move on by one character.
      options = 0;
      if (pos == len) break;
      pos += unicode::sequence_length(static_cast<uint8_t>(subject[pos]));
      continue;
    }
    if (rc < 0) break;  // no more matches (or a resource error: keep the rest as one chunk)
    const PCRE2_SIZE* ov = pcre2_get_ovector_pointer(match_resources().data);
    const size_t ms = ov[0];
    const size_t me = ov[1];
    emit(last, ms);
    emit(ms, me);
    last = me;
    pos = me;
    options = (me == ms) ? (PCRE2_NOTEMPTY_ATSTART | PCRE2_ANCHORED) : 0;
  }
  emit(last, len);
}

}  // namespace

Result<std::string> translate_pattern(std::string_view p) {
  const bool collapsed = uses_categories(p);
  std::string out;
  out.reserve(p.size() * 2);
  bool in_class = false;
  ClassState cls;
  size_t i = 0;
  while (i < p.size()) {
    const char c = p[i];
    if (c == '\\') {
      HEARTH_ASSIGN_OR_RETURN(i, translate_escape(p, i, in_class, cls, out));
      continue;
    }
    if (!in_class && c == '[') {
      in_class = true;
      cls = ClassState{};
      cls.start = out.size();
      out += '[';
      ++i;
      if (i < p.size() && p[i] == '^') {
        cls.negated = true;
        out += '^';
        ++i;
      }
      if (i < p.size() && p[i] == ']') out += p[i++];  // a leading ']' is literal
      continue;
    }
    if (in_class && c == ']') {
      in_class = false;
      close_class(cls, collapsed, out);
      ++i;
      continue;
    }
    if (in_class && c == '~') cls.has_tilde = true;
    out += c;
    ++i;
  }
  if (in_class) return error(ErrorCode::kInvalidArgument, "unterminated character class");
  return out;
}

Result<RegexSplitter> RegexSplitter::create(const std::vector<std::string>& patterns) {
  RegexSplitter splitter;
  for (const std::string& pattern : patterns) {
    HEARTH_ASSIGN_OR_RETURN(std::string translated, translate_pattern(pattern));
    int err = 0;
    PCRE2_SIZE err_offset = 0;
    pcre2_code* code =
        pcre2_compile(reinterpret_cast<PCRE2_SPTR>(translated.data()), translated.size(),
                      PCRE2_UTF | PCRE2_UCP | PCRE2_DOLLAR_ENDONLY, &err, &err_offset, nullptr);
    if (code == nullptr) {
      PCRE2_UCHAR msg[256];
      pcre2_get_error_message(err, msg, sizeof(msg));
      return error(ErrorCode::kInternal, "cannot compile pre-tokenizer regex '" + pattern +
                                             "': " + reinterpret_cast<const char*>(msg) +
                                             " at offset " + std::to_string(err_offset));
    }
    pcre2_jit_compile(code, PCRE2_JIT_COMPLETE);  // optional: the interpreter is the fallback
    auto compiled = std::make_shared<Compiled>();
    compiled->code = code;
    compiled->wide = !uses_categories(pattern);
    splitter.compiled_.push_back(std::move(compiled));
  }
  return splitter;
}

std::vector<std::string> RegexSplitter::split(std::string_view text, bool byte_encode) const {
  const std::vector<uint32_t> cpts = unicode::decode_lossy(text);
  if (cpts.empty()) return {};
  std::unique_ptr<MatchText> plain;
  std::unique_ptr<MatchText> wide;
  std::vector<Chunk> chunks = {{0, cpts.size()}};
  std::vector<Chunk> next;
  for (const auto& compiled : compiled_) {
    std::unique_ptr<MatchText>& buffer = compiled->wide ? wide : plain;
    if (!buffer) buffer = std::make_unique<MatchText>(cpts, compiled->wide);
    next.clear();
    next.reserve(chunks.size() * 2);
    for (const Chunk& chunk : chunks) split_chunk(*compiled, *buffer, chunk, next);
    chunks.swap(next);
  }
  std::vector<std::string> words;
  words.reserve(chunks.size());
  std::string utf8;
  for (const Chunk& chunk : chunks) {
    utf8.clear();
    for (size_t i = chunk.first; i < chunk.second; ++i) unicode::append_utf8(utf8, cpts[i]);
    if (!byte_encode) {
      words.push_back(utf8);
      continue;
    }
    std::string encoded;
    encoded.reserve(utf8.size() * 2);
    for (char b : utf8) encoded += unicode::byte_to_gpt2(static_cast<uint8_t>(b));
    words.push_back(std::move(encoded));
  }
  return words;
}

}  // namespace hearth::tokenizer
