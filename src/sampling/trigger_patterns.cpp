#include "sampling/trigger_patterns.h"

#define PCRE2_CODE_UNIT_WIDTH 8
#include <pcre2.h>

#include <algorithm>

namespace hearth::sampling {

namespace {

struct CodeDeleter {
  void operator()(pcre2_code* code) const { pcre2_code_free(code); }
};
using Code = std::unique_ptr<pcre2_code, CodeDeleter>;

// A pattern as the messages quote it (a client may send 4 KiB of it).
std::string quoted(const std::string& pattern) {
  return "'" + (pattern.size() > 120 ? pattern.substr(0, 120) + "..." : pattern) + "'";
}

Result<Code> compile_pattern(const std::string& pattern) {
  int error_code = 0;
  PCRE2_SIZE offset = 0;
  pcre2_code* code = pcre2_compile(reinterpret_cast<PCRE2_SPTR>(pattern.data()), pattern.size(),
                                   PCRE2_UTF, &error_code, &offset, nullptr);
  if (code == nullptr) {
    PCRE2_UCHAR message[256];
    pcre2_get_error_message(error_code, message, sizeof(message));
    return error(ErrorCode::kInvalidArgument, "invalid grammar trigger pattern '" + pattern +
                                                  "' at offset " + std::to_string(offset) + ": " +
                                                  reinterpret_cast<const char*>(message));
  }
  return Code(code);
}

enum class Repeat { kNone, kBounded, kUnbounded };

// The quantifier at `at` (after an atom or a group), skipped with its lazy or possessive
// suffix. "{" that does not start a quantifier is a literal.
Repeat read_quantifier(std::string_view p, size_t& at) {
  if (at >= p.size()) return Repeat::kNone;
  Repeat kind = Repeat::kNone;
  if (p[at] == '*' || p[at] == '+') {
    kind = Repeat::kUnbounded;
    ++at;
  } else if (p[at] == '?') {
    kind = Repeat::kBounded;
    ++at;
  } else if (p[at] == '{') {
    size_t j = at + 1;
    const size_t digits_start = j;
    while (j < p.size() && p[j] >= '0' && p[j] <= '9') ++j;
    if (j == digits_start) return Repeat::kNone;
    if (j < p.size() && p[j] == '}') {
      kind = Repeat::kBounded;
    } else if (j < p.size() && p[j] == ',') {
      const size_t max_start = ++j;
      while (j < p.size() && p[j] >= '0' && p[j] <= '9') ++j;
      if (j >= p.size() || p[j] != '}') return Repeat::kNone;
      kind = j == max_start ? Repeat::kUnbounded : Repeat::kBounded;
    } else {
      return Repeat::kNone;
    }
    at = j + 1;
  }
  if (kind != Repeat::kNone && at < p.size() && (p[at] == '?' || p[at] == '+')) ++at;
  return kind;
}

// Past a character class starting at `at` ("[...]", "[^]...]", "[[:alpha:]]").
size_t skip_class(std::string_view p, size_t at) {
  size_t j = at + 1;
  if (j < p.size() && p[j] == '^') ++j;
  if (j < p.size() && p[j] == ']') ++j;
  while (j < p.size()) {
    if (p[j] == '\\') {
      j += 2;
    } else if (p.substr(j, 2) == "[:") {
      const size_t end = p.find(":]", j + 2);
      j = end == std::string_view::npos ? p.size() : end + 2;
    } else if (p[j] == ']') {
      return j + 1;
    } else {
      ++j;
    }
  }
  return p.size();
}

// Past an escape starting at `at` (the backslash), \Q...\E and braced forms included.
size_t skip_escape(std::string_view p, size_t at) {
  if (at + 1 >= p.size()) return p.size();
  const char kind = p[at + 1];
  if (kind == 'Q') {
    const size_t end = p.find("\\E", at + 2);
    return end == std::string_view::npos ? p.size() : end + 2;
  }
  size_t j = at + 2;
  if (std::string_view("xpPNgko").find(kind) != std::string_view::npos && j < p.size() &&
      p[j] == '{') {
    const size_t end = p.find('}', j);
    j = end == std::string_view::npos ? p.size() : end + 1;
  }
  return j;
}

}  // namespace

bool nests_unbounded_repetition(std::string_view p) {
  struct Group {
    bool repeats = false;  // holds an unbounded repetition
    bool lookaround = false;
  };
  std::vector<Group> groups(1);  // [0]: the whole pattern
  size_t i = 0;
  const auto after_atom = [&] {
    if (read_quantifier(p, i) == Repeat::kUnbounded) groups.back().repeats = true;
  };
  while (i < p.size()) {
    const char c = p[i];
    if (c == '\\') {
      i = skip_escape(p, i);
      after_atom();
    } else if (c == '[') {
      i = skip_class(p, i);
      after_atom();
    } else if (c == '(') {
      if (p.substr(i, 3) == "(?#") {
        const size_t end = p.find(')', i);
        i = end == std::string_view::npos ? p.size() : end + 1;
        continue;
      }
      const bool look = p.substr(i, 3) == "(?=" || p.substr(i, 3) == "(?!" ||
                        p.substr(i, 4) == "(?<=" || p.substr(i, 4) == "(?<!";
      groups.push_back({false, look});
      ++i;
    } else if (c == ')') {
      ++i;
      if (groups.size() == 1) continue;  // unbalanced: the compiler reports it
      const Group group = groups.back();
      groups.pop_back();
      const Repeat q = read_quantifier(p, i);
      if (group.lookaround) continue;
      if (q == Repeat::kUnbounded && group.repeats) return true;
      if (group.repeats || q == Repeat::kUnbounded) groups.back().repeats = true;
    } else {
      ++i;
      after_atom();
    }
  }
  return false;
}

Status check_trigger_patterns(const std::vector<std::string>& patterns) {
  if (patterns.size() > kMaxTriggerPatterns) {
    return error(ErrorCode::kInvalidArgument,
                 "grammar_triggers holds " + std::to_string(patterns.size()) +
                     " patterns; at most " + std::to_string(kMaxTriggerPatterns) + " are allowed");
  }
  for (const std::string& p : patterns) {
    auto code = compile_pattern(p);
    if (!code.is_ok()) return code.status();
    if (nests_unbounded_repetition(p)) {
      return error(ErrorCode::kInvalidArgument,
                   "grammar trigger pattern " + quoted(p) +
                       " repeats without bound a group that itself repeats without bound "
                       "(as in '(a+)+'): its search can take exponential time, so "
                       "grammar_triggers refuses it");
    }
  }
  return Status::ok();
}

struct TriggerPatterns::Impl {
  struct Pattern {
    Code code;
    pcre2_match_data* data = nullptr;
    std::string text;
  };
  std::vector<Pattern> patterns;
  pcre2_match_context* context = nullptr;
  pcre2_jit_stack* jit_stack = nullptr;
  uint32_t steps_each = kTriggerStepsPerToken;

  ~Impl() {
    for (Pattern& p : patterns) pcre2_match_data_free(p.data);
    pcre2_match_context_free(context);
    pcre2_jit_stack_free(jit_stack);
  }
};

TriggerPatterns::TriggerPatterns(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
TriggerPatterns::~TriggerPatterns() = default;

Result<std::unique_ptr<TriggerPatterns>> TriggerPatterns::create(
    const std::vector<std::string>& patterns) {
  HEARTH_RETURN_IF_ERROR(check_trigger_patterns(patterns));
  auto impl = std::make_unique<Impl>();
  impl->context = pcre2_match_context_create(nullptr);
  // The patterns share the budget: each may take its part of the steps for one token.
  impl->steps_each =
      std::max<uint32_t>(1, kTriggerStepsPerToken / std::max<uint32_t>(1, patterns.size()));
  pcre2_set_match_limit(impl->context, impl->steps_each);
  pcre2_set_depth_limit(impl->context, impl->steps_each);
  pcre2_set_heap_limit(impl->context, 4096);  // KiB of backtracking memory per search
  for (const std::string& p : patterns) {
    auto code = compile_pattern(p);
    if (!code.is_ok()) return code.status();
    Impl::Pattern pattern{std::move(code.value()), nullptr, p};
    // Compiled to machine code when the library can (several times faster); the
    // interpreter otherwise. The limits apply to both.
    if (pcre2_jit_compile(pattern.code.get(), PCRE2_JIT_COMPLETE) == 0 && !impl->jit_stack) {
      impl->jit_stack = pcre2_jit_stack_create(32 * 1024, 1024 * 1024, nullptr);
      if (impl->jit_stack) pcre2_jit_stack_assign(impl->context, nullptr, impl->jit_stack);
    }
    pattern.data = pcre2_match_data_create_from_pattern(pattern.code.get(), nullptr);
    if (!pattern.data) return error(ErrorCode::kResourceExhausted, "out of memory");
    impl->patterns.push_back(std::move(pattern));
  }
  return std::unique_ptr<TriggerPatterns>(new TriggerPatterns(std::move(impl)));
}

bool TriggerPatterns::empty() const {
  return impl_->patterns.empty();
}

Result<std::optional<size_t>> TriggerPatterns::find(std::string_view text) {
  for (Impl::Pattern& p : impl_->patterns) {
    const int rc = pcre2_match(p.code.get(), reinterpret_cast<PCRE2_SPTR>(text.data()), text.size(),
                               0, 0, p.data, impl_->context);
    if (rc == PCRE2_ERROR_MATCHLIMIT || rc == PCRE2_ERROR_DEPTHLIMIT ||
        rc == PCRE2_ERROR_HEAPLIMIT || rc == PCRE2_ERROR_JIT_STACKLIMIT) {
      return error(ErrorCode::kResourceExhausted,
                   "grammar trigger pattern " + quoted(p.text) + " needs more than " +
                       std::to_string(impl_->steps_each) + " match steps for one token (" +
                       std::to_string(kTriggerStepsPerToken) + " shared by the request's " +
                       std::to_string(impl_->patterns.size()) +
                       " patterns): it backtracks too much on this text; use fewer or "
                       "simpler patterns");
    }
    // No match, or text that is not valid UTF-8 yet (a character split across tokens).
    if (rc < 0) continue;
    const PCRE2_SIZE* ovector = pcre2_get_ovector_pointer(p.data);
    size_t start = ovector[0];
    // The constrained text starts at the first non-empty capture group, if any.
    for (int g = 1; g < rc; ++g) {
      if (ovector[2 * g] != PCRE2_UNSET && ovector[2 * g + 1] > ovector[2 * g]) {
        start = ovector[2 * g];
        break;
      }
    }
    return std::optional<size_t>(start);
  }
  return std::optional<size_t>();
}

}  // namespace hearth::sampling
