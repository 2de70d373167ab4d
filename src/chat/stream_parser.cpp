#include "chat/stream_parser.h"

#include <algorithm>
#include <limits>
#include <utility>

#include "chat/stream_readers.h"

namespace hearth::chat {

using stream::FieldView;
using stream::npos;
using stream::Shape;

namespace {

// Whether `text`, which is not `marker`, may still become it.
bool may_become(std::string_view text, std::string_view marker) {
  return text.size() < marker.size() && marker.substr(0, text.size()) == text;
}

// What a field was after the last step: enough to know which of it the next step keeps.
struct KeptField {
  size_t committed = 0;
  const std::string* source = nullptr;
  size_t begin = 0;
  size_t end = 0;
};

// Brings `value` from its last shape to `now`, setting `delta` to what diff_messages() says
// was appended (nothing when the text is not an extension). Only the part past what both
// shapes share is compared and copied.
void update_field(std::string& value, KeptField& kept, const FieldView& now, bool same_epoch,
                  std::string& delta, size_t& scanned) {
  const size_t committed = now.committed.size();
  size_t keep = 0;
  if (same_epoch && kept.committed == committed && kept.source == now.source &&
      kept.begin == now.begin) {
    keep = committed + std::min(kept.end, now.end) - now.begin;
  } else if (same_epoch) {
    keep = std::min(kept.committed, committed);  // committed text only grows in an epoch
  }
  std::string tail;
  if (keep < committed) tail.append(now.committed.substr(keep));
  if (now.source != nullptr) {
    const size_t from = now.begin + (keep > committed ? keep - committed : 0);
    tail.append(*now.source, from, now.end - from);
  }
  const std::string_view old_tail = std::string_view(value).substr(keep);
  if (tail.size() > old_tail.size() && tail.compare(0, old_tail.size(), old_tail) == 0) {
    delta = tail.substr(old_tail.size());
  }
  scanned += old_tail.size() + tail.size();
  value.resize(keep);
  value += tail;
  kept = {committed, now.source, now.begin, now.end};
}

}  // namespace

struct StreamParser::Impl {
  explicit Impl(OutputSyntax s) : syntax(std::move(s)), text(syntax.prefix) {}

  bool settle();
  void start_body(size_t at, bool trimmed);
  void read(Shape& out);
  void read_reasoning(Shape& out);
  MessageDelta apply(Shape& shape);
  void update_calls(Shape& shape, bool same_epoch, MessageDelta& d);

  OutputSyntax syntax;
  std::string text;  // prefix + generated
  size_t scanned = 0;
  ParsedMessage parsed;
  // The last step's shape, and the epoch it belongs to: within an epoch, committed text and
  // calls only grow and sources only get appended to.
  KeptField kept_reasoning, kept_content;
  size_t kept_calls = 0;
  uint64_t epoch = 0;
  uint64_t kept_epoch = std::numeric_limits<uint64_t>::max();

  // Where the reading stands. The head (literal, thinking tag, lead-in still undecided) is
  // short and read whole; then the reasoning, then the body, or the messages.
  enum class Stage { kHead, kReasoning, kBody, kMessages };
  Stage stage = Stage::kHead;
  ParsedMessage head;
  size_t rest = 0;             // the text after the literal
  size_t inside = 0;           // where the reasoning text begins
  size_t reasoning_end = 0;    // where it ends (== inside: no reasoning)
  stream::Finder close;        // the thinking end tag
  stream::SpaceSkipper first;  // the reasoning's first character that is not whitespace
  stream::SpaceSkipper body_first;
  size_t body = npos;
  std::unique_ptr<stream::BodyReader> body_reader;
  std::unique_ptr<stream::MessagesReader> messages;
};

// Decides what split_reasoning() and the literal decide once no appended text can change
// it (parse_output() in output_parser.cpp); false while it still can.
bool StreamParser::Impl::settle() {
  const std::string_view t(text);
  const std::string_view literal = syntax.literal;
  if (may_become(t, literal)) return false;
  rest = !literal.empty() && t.substr(0, literal.size()) == literal ? literal.size() : 0;
  ++epoch;
  if (const MessageFormat* format = message_format(syntax)) {
    messages = std::make_unique<stream::MessagesReader>(syntax, *format);
    stage = Stage::kMessages;
    return true;
  }
  if (!syntax.extract_reasoning || syntax.reasoning_start.empty()) {
    start_body(rest, false);
    return true;
  }
  const std::string_view start = trim_space(syntax.reasoning_start);
  const std::string_view end = trim_space(syntax.reasoning_end);
  size_t ws = rest;
  while (ws < t.size() && is_space(t[ws])) ++ws;
  const std::string_view after = t.substr(ws);
  if (after.empty()) return false;
  if (after.substr(0, start.size()) == start) {
    // The markers' own whitespace after the start tag is not reasoning.
    size_t at = ws + start.size();
    const std::string_view marker = syntax.reasoning_start;
    const std::string_view lead = marker.substr(marker.find(start) + start.size());
    if (!lead.empty() && may_become(t.substr(at), lead)) return false;
    if (!lead.empty() && t.substr(at, lead.size()) == lead) at += lead.size();
    inside = reasoning_end = at;
    close.reset(at);
    first.reset(at);
    stage = Stage::kReasoning;
    return true;
  }
  if (!end.empty() && after.substr(0, end.size()) == end) {
    start_body(ws + end.size(), true);  // a bare end tag opens a turn without reasoning
    return true;
  }
  if (may_become(after, start) || may_become(after, end)) return false;
  start_body(rest, false);
  return true;
}

// The body begins at `at`, or at the first character after it that is not whitespace.
void StreamParser::Impl::start_body(size_t at, bool trimmed) {
  stage = Stage::kBody;
  body_reader = std::make_unique<stream::BodyReader>(syntax);
  body_first.reset(at);
  body = trimmed ? npos : at;
}

void StreamParser::Impl::read_reasoning(Shape& out) {
  const std::string_view t(text);
  const std::string_view end = trim_space(syntax.reasoning_end);
  const std::string_view end_marker = rtrim(syntax.reasoning_end);
  const size_t close_at = close.find(t, end, scanned);
  size_t stop = 0;
  if (close_at == npos) {
    // A thinking end tag being written is held back.
    const std::string_view so_far = t.substr(inside);
    stop = t.size() -
           std::max(partial_marker_length(so_far, end_marker), partial_marker_length(so_far, end));
    scanned += end_marker.size() + end.size();
  } else {
    stop = close_at;
    const std::string_view trail = end_marker.substr(0, end_marker.size() - end.size());
    const std::string_view reasoning = t.substr(inside, close_at - inside);
    if (!trail.empty() && reasoning.size() >= trail.size() &&
        reasoning.substr(reasoning.size() - trail.size()) == trail) {
      stop -= trail.size();
    }
    start_body(close_at + end.size(), true);
  }
  // Reasoning that is only whitespace is none.
  const size_t visible = first.find(t, scanned);
  reasoning_end = visible != npos && visible < stop ? stop : inside;
  out.reasoning = {{}, &text, inside, reasoning_end};
}

void StreamParser::Impl::read(Shape& out) {
  if (stage == Stage::kMessages) {
    messages->read(text, rest, out, scanned);
    return;
  }
  if (stage == Stage::kReasoning) {
    read_reasoning(out);
  } else {
    out.reasoning = {{}, &text, inside, reasoning_end};
  }
  if (stage != Stage::kBody) return;
  if (body == npos) body = body_first.find(text, scanned);
  if (body != npos && !body_reader->read(text, body, out, scanned)) ++epoch;
}

void StreamParser::Impl::update_calls(Shape& shape, bool same_epoch, MessageDelta& d) {
  static const std::vector<ParsedToolCall> kNone;
  const std::vector<ParsedToolCall>& committed = shape.calls != nullptr ? *shape.calls : kNone;
  std::vector<ParsedToolCall>& calls = parsed.tool_calls;
  // Calls read whole before this step are as they were: the diff starts after them.
  const size_t keep = same_epoch ? std::min(kept_calls, committed.size()) : 0;
  const size_t total = committed.size() + shape.open.size();
  for (size_t i = keep; i < total; ++i) {
    const ParsedToolCall& call =
        i < committed.size() ? committed[i] : shape.open[i - committed.size()];
    if (i >= calls.size()) {
      d.tool_calls.push_back({i, true, call.name, call.id, call.arguments});
      continue;
    }
    const std::string& before = calls[i].arguments;
    scanned += before.size() + call.arguments.size();
    if (call.arguments.size() > before.size() &&
        call.arguments.compare(0, before.size(), before) == 0) {
      d.tool_calls.push_back({i, false, "", "", call.arguments.substr(before.size())});
    }
  }
  calls.resize(keep);
  calls.insert(calls.end(), committed.begin() + static_cast<long>(keep), committed.end());
  for (ParsedToolCall& call : shape.open) calls.push_back(std::move(call));
  kept_calls = committed.size();
}

MessageDelta StreamParser::Impl::apply(Shape& shape) {
  MessageDelta d;
  const bool same = kept_epoch == epoch;
  update_field(parsed.reasoning, kept_reasoning, shape.reasoning, same, d.reasoning, scanned);
  update_field(parsed.content, kept_content, shape.content, same, d.content, scanned);
  update_calls(shape, same, d);
  kept_epoch = epoch;
  return d;
}

StreamParser::StreamParser(OutputSyntax syntax)
    : impl_(std::make_unique<Impl>(std::move(syntax))) {}
StreamParser::StreamParser(StreamParser&&) noexcept = default;
StreamParser& StreamParser::operator=(StreamParser&&) noexcept = default;
StreamParser::~StreamParser() = default;

MessageDelta StreamParser::step(std::string_view piece) {
  Impl& s = *impl_;
  s.text.append(piece);
  Shape shape;
  if (s.stage == Impl::Stage::kHead && !s.settle()) {
    // Undecided: the few characters so far are parsed whole.
    s.head = parse_output(s.syntax, generated(), true);
    s.scanned += s.text.size();
    ++s.epoch;
    shape.reasoning.committed = s.head.reasoning;
    shape.content.committed = s.head.content;
    shape.calls = &s.head.tool_calls;
    return s.apply(shape);
  }
  s.read(shape);
  return s.apply(shape);
}

const ParsedMessage& StreamParser::parsed() const {
  return impl_->parsed;
}

std::string_view StreamParser::generated() const {
  return std::string_view(impl_->text).substr(impl_->syntax.prefix.size());
}

size_t StreamParser::scanned() const {
  return impl_->scanned;
}

}  // namespace hearth::chat
