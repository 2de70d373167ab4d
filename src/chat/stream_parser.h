// The output parse of a streamed answer (chat-templates.md §8.3), kept up to date as tokens
// arrive: after each piece, parsed() is parse_output(syntax, generated, partial=true) and
// step() returns diff_messages(before, after), exactly. Each step costs the part of the
// parse that can still change (a marker being written, the call being written, the message
// being written), not the answer so far: readers remember how far they looked, text that
// can no longer change is never compared again, and a call read whole is never read again.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include "chat/output_parser.h"

namespace hearth::chat {

namespace stream {
struct Shape;
struct FieldView;
class BodyReader;
class MessagesReader;
}  // namespace stream

class StreamParser {
 public:
  explicit StreamParser(OutputSyntax syntax);
  StreamParser(StreamParser&&) noexcept;
  StreamParser& operator=(StreamParser&&) noexcept;
  ~StreamParser();

  // Appends `piece` (may be empty: the parse of what is there) and returns what the parse
  // gained.
  MessageDelta step(std::string_view piece);
  // The parse so far: parse_output(syntax, generated(), true) once a step ran; empty before.
  const ParsedMessage& parsed() const;
  std::string_view generated() const;
  // Characters looked at so far, summed over every reader (instrumentation: a test holds it
  // linear in the answer's length).
  size_t scanned() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace hearth::chat
