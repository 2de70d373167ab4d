// libFuzzer target for lazy-grammar trigger patterns: the fuzzer's patterns are checked as
// the request fields check them and, when accepted, searched in a text that grows piece by
// piece, as generated tokens make it grow. A search may fail only with the step budget's
// kResourceExhausted; a crash, a hang (libFuzzer's -timeout; the budget must bound every
// search), a leak or any other error is a bug. A match must start inside the text.
//
// Input: patterns separated by \x01, then \x00, then the text (split into pieces of 1 to 8
// bytes by its own bytes).
//
//   build-fuzz/bin/trigger_fuzz -max_total_time=600 -timeout=10 /tmp/trigger-corpus \
//     tests/fuzz/corpus/trigger
#include <string>
#include <string_view>
#include <vector>

#include "fuzz/answer_checks.h"
#include "sampling/trigger_patterns.h"

namespace {

using namespace hearth;
constexpr const char* kTarget = "trigger_fuzz";

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view input(reinterpret_cast<const char*>(data), size);
  const size_t nul = input.find('\0');
  const std::string_view spec = input.substr(0, nul);
  const std::string_view text = nul == std::string_view::npos ? "" : input.substr(nul + 1);
  std::vector<std::string> patterns;
  for (size_t at = 0; at <= spec.size();) {
    const size_t end = std::min(spec.find('\x01', at), spec.size());
    patterns.emplace_back(spec.substr(at, end - at));
    at = end + 1;
  }
  auto triggers = sampling::TriggerPatterns::create(patterns);
  if (!triggers.is_ok()) {
    if (triggers.status().code() != ErrorCode::kInvalidArgument) {
      fuzz::fail(kTarget, "not a client error: " + triggers.status().message(), input);
    }
    return 0;
  }
  std::string buffer;
  size_t at = 0;
  while (at < text.size()) {
    const size_t piece = 1 + static_cast<unsigned char>(text[at]) % 8;
    buffer.append(text.substr(at, piece));
    at += piece;
    auto found = (*triggers)->find(buffer);
    if (!found.is_ok()) {
      if (found.status().code() != ErrorCode::kResourceExhausted) {
        fuzz::fail(kTarget, "search error: " + found.status().message(), input);
      }
      return 0;  // the request would end here
    }
    if (found->has_value()) {
      if (**found > buffer.size()) fuzz::fail(kTarget, "a match past the text", input);
      return 0;
    }
  }
  return 0;
}
