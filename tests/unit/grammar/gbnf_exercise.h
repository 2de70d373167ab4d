// Drives the grammar parser and matcher with arbitrary bytes; shared by the libFuzzer target
// (tests/fuzz/gbnf_fuzz.cpp) and the unit test that replays its corpus. Returns "" when
// every check held, else what went wrong.
#pragma once

#include <algorithm>
#include <memory>
#include <numeric>
#include <string>
#include <string_view>
#include <vector>

#include "grammar/grammar.h"

namespace hearth::grammar::fuzz {

// Small limits keep a single input fast while still reaching every limit check.
inline Limits fuzz_limits() {
  Limits limits;
  limits.max_text_bytes = 1 << 16;
  limits.max_rules = 4000;
  limits.max_nesting = 64;
  limits.max_elements = 1 << 16;
  limits.max_stacks = 256;
  return limits;
}

// A fixed vocabulary: every byte, some multi-byte characters split and whole, a few words,
// an empty piece and an EOG token.
inline std::shared_ptr<const TokenTable> fuzz_vocab() {
  static const std::shared_ptr<const TokenTable> table = [] {
    auto pieces = std::make_shared<std::vector<std::string>>();
    for (int b = 0; b < 256; ++b) pieces->push_back(std::string(1, static_cast<char>(b)));
    for (const char* s : {"\xc3\xa9", "\xe4\xb8\xad", "\xf0\x9f\x98\x80",
                          "\xf0\x9f", "\x98\x80",     "\xe4\xb8",
                          "ab",       "abc",          "true",
                          "null",     "{\"",          "\":",
                          " \"",      "0.",           "<think>",
                          "",         "\n\n",         "  ",
                          "a\xc3",    "\xa9z"}) {
      pieces->push_back(s);
    }
    const auto eog = static_cast<int32_t>(pieces->size());
    pieces->push_back("</s>");
    return std::make_shared<TokenTable>(
        static_cast<int32_t>(pieces->size()), [pieces](int32_t id) { return (*pieces)[id]; },
        [eog](int32_t id) { return id == eog; });
  }();
  return table;
}

// Maps <TEXT> to one token for short texts, to two (an error) for long ones.
inline std::vector<int32_t> fuzz_tokenize(std::string_view text) {
  if (text.size() > 12) return {1, 2};
  return {static_cast<int32_t>(text.size() * 7 % 300)};
}

inline std::string check_allowed(const Matcher& m, int32_t n_vocab) {
  std::vector<int32_t> ids(static_cast<size_t>(n_vocab));
  std::iota(ids.begin(), ids.end(), 0);
  std::vector<uint8_t> all(ids.size());
  m.allowed(ids, all);
  for (int32_t id = 0; id < n_vocab; ++id) {
    if ((all[id] != 0) != m.allows(id)) {
      return "allowed() and allows() disagree on token " + std::to_string(id);
    }
  }
  return "";
}

// Generates tokens: at each step takes an allowed token chosen by the input bytes.
inline std::string walk_tokens(const std::shared_ptr<const Grammar>& g, std::string_view data) {
  const auto table = fuzz_vocab();
  Matcher m(g, table, fuzz_limits());
  if (!m.status().is_ok()) return "";
  for (size_t step = 0; step < 6; ++step) {
    std::string problem = check_allowed(m, table->n_vocab());
    if (!problem.empty()) return problem;
    std::vector<int32_t> allowed;
    for (int32_t id = 0; id < table->n_vocab(); ++id) {
      if (m.allows(id)) allowed.push_back(id);
    }
    if (allowed.empty()) break;
    const size_t pick = step < data.size() ? static_cast<uint8_t>(data[data.size() - 1 - step]) : 0;
    const int32_t token = allowed[pick % allowed.size()];
    const Status status = m.accept(token);
    // accept may only fail by exceeding the stack limit.
    if (!status.is_ok() && status.message().find("ambiguous") == std::string::npos) {
      return "an allowed token was not accepted: " + status.to_string();
    }
    if (!status.is_ok()) break;
  }
  return "";
}

inline std::string exercise(std::string_view data) {
  auto parsed = parse(data, fuzz_tokenize, fuzz_limits());
  if (!parsed.is_ok()) {
    if (parsed.status().code() != ErrorCode::kInvalidArgument || parsed.status().message().empty())
      return "unexpected parse error: " + parsed.status().to_string();
    return "";
  }
  const std::shared_ptr<const Grammar>& g = *parsed;
  for (std::string_view text : {"", "a", "{\"a\": 1}", "hello world", "\xe4\xb8\xad\xf0\x9f\x98"}) {
    Matcher m(g, nullptr, fuzz_limits());
    (void)m.accept_text(text);
    (void)m.can_end();
  }
  // The input's own bytes, fed in uneven chunks.
  Matcher m(g, nullptr, fuzz_limits());
  for (size_t at = 0, chunk = 1; at < data.size() && at < 512; at += chunk, chunk = chunk % 5 + 1) {
    if (!m.accept_text(data.substr(at, chunk)).is_ok()) break;
  }
  return walk_tokens(g, data);
}

}  // namespace hearth::grammar::fuzz
