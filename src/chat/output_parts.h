// Internal to the output parser: the pieces that both the whole parse (output_parser.cpp)
// and the streaming parse (stream_parser.cpp) read with, so the two cannot drift apart.
#pragma once

#include <cstddef>
#include <string_view>
#include <vector>

#include "chat/output_parser.h"

namespace hearth::chat {

// json_output: where the JSON value of a schema-constrained answer lies in `body`
// (chat-templates.md §8.2): [begin, end) of body.
struct TextRange {
  size_t begin = 0;
  size_t end = 0;
};
TextRange json_content_range(std::string_view body);

// How much of `text`, a JSON value the text ends inside of, is shown: a trailing number or
// literal may still grow, so the member it belongs to is left out, from its key on.
size_t json_shown_length(std::string_view text);

// The message formats (GPT-OSS harmony, Muse Glimmer's recipients): every message but the
// first starts with `opener`, its header runs to <|message|>, its body to the first of `ends`.
inline constexpr std::string_view kMessageMarker = "<|message|>";
struct MessageFormat {
  std::string_view opener;
  std::vector<std::string_view> ends;
};
// The syntax's message format, or nullptr when its output is not a sequence of messages.
const MessageFormat* message_format(const OutputSyntax& syntax);

// What one message is, from its header; `calls`: the calls read before it (a format without
// parallel calls reads one).
enum class MessageKind { kContent, kReasoning, kCall };
MessageKind message_kind(const OutputSyntax& syntax, std::string_view header, size_t calls);
// A message of kind kCall: appends its calls to `out` (or, when a final read fails, its body
// as content).
void read_call_message(const OutputSyntax& syntax, std::string_view header, std::string_view body,
                       bool partial, ParsedMessage& out);

}  // namespace hearth::chat
