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

// Where a read of a call section stands: the position after the last call read whole
// (`after_call`: its end marker may still follow), or where the first call begins.
struct SequenceCursor {
  size_t pos = 0;
  bool after_call = false;
};

// A call section read while it grows (streaming): the calls read whole stay read, and each
// read starts after the last of them, so a read costs the open call, not the section. A call
// read whole cannot change as text is appended (its markers and values are all found), and
// what follows it is read again from where it ended, which is what the whole read does.
class CallStreamReader {
 public:
  // `text`: the section so far, starting at its first marker; each text extends the last.
  // Fills `open` with the unfinished call when its name is read.
  void read(const ToolCallFormat& format, std::string_view text, size_t max_calls,
            std::vector<ParsedToolCall>& open);
  const std::vector<ParsedToolCall>& calls() const { return done_; }
  size_t scanned() const { return scanned_; }

 private:
  std::vector<ParsedToolCall> done_;
  SequenceCursor at_;
  bool started_ = false;
  size_t scanned_ = 0;
};

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
