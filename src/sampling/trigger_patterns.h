// A lazy grammar's trigger patterns (grammar.md §3): regular expressions searched in the
// text generated so far, after every token, until one matches. They are a client's
// expressions run on the scheduler thread every step, so their cost is bounded twice:
// at parse time (at most kMaxTriggerPatterns, no unbounded repetition of a group that
// itself repeats without bound, the shape of catastrophic backtracking) and while
// matching (the request's patterns share kTriggerStepsPerToken PCRE2 match steps per
// token; a search that needs more fails the request instead of stalling every slot).
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"

namespace hearth::sampling {

inline constexpr size_t kMaxTriggerPatterns = 64;
// About 0.5 ms of JIT-compiled matching; a search of a `[\s\S]*?` prefix takes one or two
// steps per byte of text, so a single such pattern still covers 100,000 bytes.
inline constexpr uint32_t kTriggerStepsPerToken = 200000;

// Compiles each pattern and applies the parse-time limits. The error names the pattern and
// the reason (the regex library's, or the limit's).
Status check_trigger_patterns(const std::vector<std::string>& patterns);

// True when `pattern` repeats without bound a group that repeats without bound inside,
// as "(( ?a| a)+)+" or "(\w*)*" (a repetition inside a lookaround or class is no
// repetition of the group).
bool nests_unbounded_repetition(std::string_view pattern);

class TriggerPatterns {
 public:
  static Result<std::unique_ptr<TriggerPatterns>> create(const std::vector<std::string>& patterns);
  ~TriggerPatterns();
  TriggerPatterns(const TriggerPatterns&) = delete;
  TriggerPatterns& operator=(const TriggerPatterns&) = delete;

  bool empty() const;
  // The first pattern that matches `text`: where its constrained text starts (its first
  // non-empty capture group, else the match). nullopt when none matches; an error
  // (kResourceExhausted) when a pattern needs more than its share of the step budget.
  Result<std::optional<size_t>> find(std::string_view text);

 private:
  struct Impl;
  explicit TriggerPatterns(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace hearth::sampling
