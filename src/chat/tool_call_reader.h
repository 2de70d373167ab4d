// Internal to the output parser: reading the tool calls of one family's syntax
// (chat-templates.md §8.6, §9), finally or leniently while the text is still growing.
#pragma once

#include <string_view>
#include <vector>

#include "chat/output_parser.h"

namespace hearth::chat {

struct CallReadResult {
  std::vector<ParsedToolCall> calls;  // partial reads include an unfinished last call
  bool ok = true;                     // final reads: every call was read whole
};

// `text` starts at the format's first marker (or at the JSON of a bare call). At most
// `max_calls` calls are read (0: no limit).
CallReadResult read_tool_calls(const ToolCallFormat& format, std::string_view text, bool partial,
                               size_t max_calls);

// Whitespace as the parsers skip it, and views without it at either end.
inline bool is_space(char c) {
  return c == ' ' || c == '\n' || c == '\r' || c == '\t';
}
inline std::string_view ltrim(std::string_view s) {
  while (!s.empty() && is_space(s.front())) s.remove_prefix(1);
  return s;
}
inline std::string_view rtrim(std::string_view s) {
  while (!s.empty() && is_space(s.back())) s.remove_suffix(1);
  return s;
}

// The length of the longest proper prefix of `marker` that ends `text`: text being
// generated that may still become the marker, held back from the stream.
size_t partial_marker_length(std::string_view text, std::string_view marker);

}  // namespace hearth::chat
