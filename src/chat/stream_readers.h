// Internal to StreamParser (stream_parser.h): the incremental readers behind it. Each reads
// an append-only text and remembers how far it looked, so a step costs the text that can
// still change, and each says what the parse is as committed text plus a view of a buffer,
// so the parse is updated and diffed without copying or comparing what cannot change.
#pragma once

#include <cstddef>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "chat/output_parser.h"
#include "chat/output_parts.h"
#include "chat/tool_call_reader.h"

namespace hearth::chat::stream {

inline constexpr size_t npos = std::string_view::npos;

// The first occurrence of a marker at or after an origin in an append-only text. A search
// starts where the last one could not have matched, so each character is looked at about
// once; what it finds is what text.find(marker, origin) finds on the same text.
class Finder {
 public:
  void reset(size_t origin) {
    from_ = origin;
    at_ = npos;
  }
  size_t find(std::string_view text, std::string_view marker, size_t& scanned);

 private:
  size_t from_ = 0;
  size_t at_ = npos;
};

// The first character that is not whitespace at or after an origin, found the same way.
class SpaceSkipper {
 public:
  void reset(size_t origin) {
    from_ = origin;
    at_ = npos;
  }
  size_t find(std::string_view text, size_t& scanned);

 private:
  size_t from_ = 0;
  size_t at_ = npos;
};

// One text field of the parse: `committed` (it only grows while the parser's epoch stays),
// then source[begin, end) (a source only grows while the epoch stays).
struct FieldView {
  std::string_view committed;
  const std::string* source = nullptr;
  size_t begin = 0;
  size_t end = 0;
};

// The parse after a step: reasoning, content, the calls read whole (they only grow while the
// epoch stays; null: none) and the call still being written.
struct Shape {
  FieldView reasoning;
  FieldView content;
  const std::vector<ParsedToolCall>* calls = nullptr;
  std::vector<ParsedToolCall> open;
};

// The JSON value of a schema-constrained answer as json_value_end() reads it, one character
// at a time: where it ends, and how much text deciding that needs (a literal ends at the
// delimiter after it).
class JsonScan {
 public:
  void reset(size_t start);
  void advance(std::string_view text, size_t& scanned);
  bool done() const { return done_; }
  size_t end() const { return end_; }
  size_t needs() const { return needs_; }

 private:
  size_t start_ = 0;
  size_t pos_ = 0;
  int depth_ = 0;
  bool in_string_ = false;
  bool escape_ = false;
  bool done_ = false;
  size_t end_ = 0;
  size_t needs_ = 0;
};

// The body closers of Kimi K3 (without_closers() in output_parser.cpp): the body with its
// first content closer removed, cut at its first message closer, a closer being written held
// back. `out()` is that text; `rewritten()`: this update changed text shown before (the body's
// readers start again).
class ClosersFilter {
 public:
  explicit ClosersFilter(const OutputSyntax& syntax);
  void update(std::string_view body, size_t& scanned);
  std::string_view out() const { return std::string_view(text_).substr(0, shown_); }
  const std::string& buffer() const { return text_; }
  bool rewritten() const { return rewritten_; }

 private:
  const OutputSyntax& syntax_;
  std::string text_;  // the body so far, its content closer removed once found
  size_t taken_ = 0;  // body characters appended to text_ (the closer's included)
  Finder content_end_;
  size_t erased_at_ = npos;
  std::vector<Finder> message_end_;
  size_t shown_ = 0;
  bool rewritten_ = false;
};

// The body: content, then tool calls or a JSON value (parse_body() in output_parser.cpp),
// after the content's lead-in and closers.
class BodyReader {
 public:
  explicit BodyReader(const OutputSyntax& syntax);
  // `text` from `begin` is the body so far. Sets the content and calls of `out`; returns
  // false when the reading started again (what it said before no longer holds).
  bool read(const std::string& text, size_t begin, Shape& out, size_t& scanned);

 private:
  void restart();
  TextRange parse(std::string_view body, Shape& out, size_t& scanned);
  TextRange json(std::string_view body, size_t& scanned);
  void calls(std::string_view body, size_t at, Shape& out, size_t& scanned);

  const OutputSyntax& syntax_;
  bool lead_decided_ = false;
  size_t start_ = 0;  // where the body begins, after the content's lead-in
  std::unique_ptr<ClosersFilter> closers_;
  // The tool calls' markers and the calls.
  Finder marker_, bare_;
  SpaceSkipper first_;  // bare JSON calls: the body's first character; json: the value's
  size_t calls_at_ = npos;
  std::unique_ptr<CallStreamReader> reader_;
  // json_output.
  bool fence_decided_ = false;
  bool fenced_ = false;
  SpaceSkipper inner_;  // the value's first character inside a fence
  size_t value_at_ = npos;
  size_t fence_from_ = 0, last_fence_ = npos;
  JsonScan scan_;
};

// The message formats (harmony, recipients): the messages read whole are committed, the one
// being written is read again from its start, its body found once per character.
class MessagesReader {
 public:
  MessagesReader(const OutputSyntax& syntax, const MessageFormat& format);
  void read(const std::string& text, size_t rest, Shape& out, size_t& scanned);

 private:
  const OutputSyntax& syntax_;
  const MessageFormat& format_;
  size_t next_ = npos;  // where the message being written begins
  size_t header_at_ = npos;
  Finder header_end_;
  size_t body_at_ = npos;
  MessageKind kind_ = MessageKind::kContent;  // of the message whose body begins at body_at_
  std::vector<Finder> ends_;
  ParsedMessage done_;  // what the messages read whole say
};

}  // namespace hearth::chat::stream
