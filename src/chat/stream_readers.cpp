#include "chat/stream_readers.h"

#include <algorithm>

namespace hearth::chat::stream {

size_t Finder::find(std::string_view text, std::string_view marker, size_t& scanned) {
  if (at_ != npos || from_ > text.size()) return at_;
  if (marker.empty()) return at_ = from_;
  const size_t at = text.find(marker, from_);
  scanned += text.size() - from_;
  if (at != npos) return at_ = at;
  // No match starts before size - marker.size() + 1: the next search starts there.
  if (text.size() + 1 > marker.size()) from_ = std::max(from_, text.size() + 1 - marker.size());
  return npos;
}

size_t SpaceSkipper::find(std::string_view text, size_t& scanned) {
  if (at_ != npos) return at_;
  for (size_t i = from_; i < text.size(); ++i) {
    if (!is_space(text[i])) {
      scanned += i + 1 - from_;
      return at_ = i;
    }
  }
  if (text.size() > from_) scanned += text.size() - from_;
  from_ = std::max(from_, text.size());
  return npos;
}

void JsonScan::reset(size_t start) {
  *this = JsonScan{};
  start_ = pos_ = start;
}

void JsonScan::advance(std::string_view s, size_t& scanned) {
  if (done_ || pos_ >= s.size()) return;
  const char first = s[start_];
  const size_t from = pos_;
  auto finish = [&](size_t end, size_t needs) {
    done_ = true;
    end_ = end;
    needs_ = needs;
  };
  for (; pos_ < s.size() && !done_; ++pos_) {
    const char d = s[pos_];
    if (first == '"' || in_string_) {
      // A string: the opening quote, then up to the next quote no backslash escapes.
      if (first == '"' && pos_ == start_) continue;
      if (escape_) {
        escape_ = false;
      } else if (d == '\\') {
        escape_ = true;
      } else if (d == '"') {
        if (first == '"') finish(pos_ + 1, pos_ + 1);
        in_string_ = false;
      }
    } else if (first == '{' || first == '[') {
      if (d == '"') {
        in_string_ = true;
      } else if (d == '{' || d == '[') {
        ++depth_;
      } else if ((d == '}' || d == ']') && --depth_ == 0) {
        finish(pos_ + 1, pos_ + 1);
      }
    } else if (d == ',' || d == '}' || d == ']' || is_space(d)) {
      finish(pos_, pos_ + 1);  // a number or literal ends at a delimiter
    }
  }
  scanned += pos_ - from;
}

ClosersFilter::ClosersFilter(const OutputSyntax& syntax)
    : syntax_(syntax), message_end_(syntax.message_end.size()) {}

void ClosersFilter::update(std::string_view body, size_t& scanned) {
  const size_t shown_before = shown_;
  bool changed = false;
  text_.append(body.substr(taken_));
  scanned += body.size() - taken_;
  taken_ = body.size();
  const std::string& content_end = syntax_.content_end;
  if (!content_end.empty() && erased_at_ == npos) {
    const size_t at = content_end_.find(text_, content_end, scanned);
    if (at != npos) {
      // The content's closer goes where it stands; the message closers are looked for again
      // in what that leaves (once per answer).
      text_.erase(at, content_end.size());
      erased_at_ = at;
      changed = at < shown_before;
      for (Finder& f : message_end_) f.reset(0);
    }
  }
  // Each message closer cuts what the closers before it left.
  size_t cut = text_.size();
  for (size_t k = 0; k < message_end_.size(); ++k) {
    const std::string& closer = syntax_.message_end[k];
    const size_t at = message_end_[k].find(text_, closer, scanned);
    if (at != npos && at + closer.size() <= cut) cut = at;
  }
  const std::string_view out = std::string_view(text_).substr(0, cut);
  size_t held = partial_marker_length(out, content_end);
  for (const std::string& closer : syntax_.message_end) {
    held = std::max(held, partial_marker_length(out, closer));
  }
  shown_ = cut - held;
  rewritten_ = changed || shown_ < shown_before;
}

BodyReader::BodyReader(const OutputSyntax& syntax) : syntax_(syntax) {
  if (!syntax.content_end.empty() || !syntax.message_end.empty()) {
    closers_ = std::make_unique<ClosersFilter>(syntax);
  }
}

void BodyReader::restart() {
  marker_ = {};
  bare_ = {};
  first_ = {};
  calls_at_ = npos;
  reader_.reset();
  fence_decided_ = fenced_ = false;
  inner_ = {};
  value_at_ = npos;
  fence_from_ = 0;
  last_fence_ = npos;
  scan_ = {};
}

bool BodyReader::read(const std::string& text, size_t begin, Shape& out, size_t& scanned) {
  if (!lead_decided_) {
    // The content's lead-in (Functionary's ">>>all\n"): gone when written, while it is being
    // written the body shows nothing.
    const std::string_view lead = syntax_.content_start;
    const std::string_view body = std::string_view(text).substr(begin);
    if (!lead.empty() && body.substr(0, lead.size()) == lead) {
      start_ = begin + lead.size();
    } else if (!lead.empty() && lead.substr(0, body.size()) == body) {
      return true;
    } else {
      start_ = begin;
    }
    lead_decided_ = true;
  }
  const std::string* source = &text;
  size_t base = start_;
  std::string_view body = std::string_view(text).substr(start_);
  bool kept = true;
  if (closers_) {
    closers_->update(body, scanned);
    if (closers_->rewritten()) {
      restart();
      kept = false;
    }
    source = &closers_->buffer();
    base = 0;
    body = closers_->out();
  }
  const size_t calls_at = calls_at_;
  const TextRange r = parse(body, out, scanned);
  if (calls_at != npos && calls_at_ != calls_at) kept = false;
  out.content = {{}, source, base + r.begin, base + r.end};
  return kept;
}

TextRange BodyReader::parse(std::string_view body, Shape& out, size_t& scanned) {
  const ToolCallFormat& f = syntax_.tools;
  if (syntax_.json_output && !syntax_.parse_tool_calls) return json(body, scanned);
  if (!syntax_.parse_tool_calls || f.style == ToolCallStyle::kNone) return {0, body.size()};
  const std::string& marker = f.section_start.empty() ? f.call_start : f.section_start;
  if (marker.empty()) {
    // Bare JSON calls (Llama 3.x): a call is an object at the start of the body.
    const size_t first = first_.find(body, scanned);
    if (first == npos || body[first] != '{') return {0, body.size()};
    calls(body, first, out, scanned);
    return {0, first};
  }
  const std::string& bare = f.bare_call_start;
  size_t at = marker_.find(body, marker, scanned);
  if (!bare.empty()) at = std::min(at, bare_.find(body, bare, scanned));
  const std::string_view before = body.substr(0, std::min(at, body.size()));
  if (at == npos) {
    // A partial marker and the whitespace before it are held back.
    const size_t held = std::max(partial_marker_length(body, marker),
                                 bare.empty() ? 0 : partial_marker_length(body, bare));
    const size_t shown = rtrim(body.substr(0, body.size() - held)).size();
    scanned += marker.size() + bare.size() + body.size() - shown;
    return {0, shown};
  }
  calls(body, at, out, scanned);
  const size_t shown = rtrim(before).size();
  scanned += before.size() - shown;
  return {0, shown};
}

void BodyReader::calls(std::string_view body, size_t at, Shape& out, size_t& scanned) {
  if (at != calls_at_ || !reader_) {
    // The section begins somewhere else (a marker found earlier than the first): read anew.
    reader_ = std::make_unique<CallStreamReader>();
    calls_at_ = at;
  }
  const size_t before = reader_->scanned();
  reader_->read(syntax_.tools, body.substr(at), syntax_.parallel_tool_calls ? 0 : 1, out.open);
  scanned += reader_->scanned() - before;
  out.calls = &reader_->calls();
}

TextRange BodyReader::json(std::string_view body, size_t& scanned) {
  static constexpr std::string_view kFence = "```json";
  const size_t first = first_.find(body, scanned);
  if (first == npos) return {0, 0};
  if (!fence_decided_) {
    const std::string_view text = body.substr(first);
    if (text.size() < kFence.size() && kFence.substr(0, text.size()) == text) {
      scanned += body.size();
      return json_content_range(body);  // a few characters: read whole
    }
    fence_decided_ = true;
    fenced_ = text.substr(0, kFence.size()) == kFence;
    inner_.reset(first + kFence.size());
    if (!fenced_) {
      value_at_ = first;
      scan_.reset(first);
    }
  }
  if (value_at_ == npos) {
    const size_t v = inner_.find(body, scanned);
    if (v == npos) return {0, 0};
    value_at_ = fence_from_ = v;
    scan_.reset(v);
  }
  size_t text_end = body.size();
  if (fenced_) {
    // The value ends before the last closing fence (rfind), looked for once per character.
    for (; fence_from_ + 3 <= body.size(); ++fence_from_) {
      if (body.compare(fence_from_, 3, "```") == 0) last_fence_ = fence_from_;
      ++scanned;
    }
    if (last_fence_ != npos) {
      const std::string_view inside = body.substr(value_at_, last_fence_ - value_at_);
      text_end = value_at_ + rtrim(inside).size();
      scanned += inside.size() - (text_end - value_at_);
    }
  }
  scan_.advance(body, scanned);
  if (scan_.done() && scan_.needs() <= text_end) return {value_at_, scan_.end()};
  const std::string_view text = body.substr(value_at_, text_end - value_at_);
  const size_t shown = json_shown_length(text);
  scanned += text.size() - shown + 1;
  return {value_at_, value_at_ + shown};
}

MessagesReader::MessagesReader(const OutputSyntax& syntax, const MessageFormat& format)
    : syntax_(syntax), format_(format), ends_(format.ends.size()) {}

void MessagesReader::read(const std::string& text, size_t rest, Shape& out, size_t& scanned) {
  const std::string_view all(text);
  if (next_ == npos) next_ = rest;
  FieldView* open_field = nullptr;
  size_t open_at = 0, open_end = 0;
  while (next_ < all.size()) {
    size_t i = next_;
    const std::string_view opener = format_.opener;
    if (!opener.empty() && all.substr(i, opener.size()) == opener) i += opener.size();
    if (i != header_at_) {
      header_at_ = i;
      header_end_.reset(i);
    }
    const size_t message = header_end_.find(all, kMessageMarker, scanned);
    if (message == npos) break;  // a header still being written
    const size_t body_at = message + kMessageMarker.size();
    const std::string_view header = all.substr(i, message - i);
    if (body_at != body_at_) {
      // A new message: its header is read once.
      body_at_ = body_at;
      for (Finder& f : ends_) f.reset(body_at);
      kind_ = message_kind(syntax_, header, done_.tool_calls.size());
      scanned += header.size();
    }
    const MessageKind kind = kind_;
    size_t end = npos, end_size = 0;
    for (size_t k = 0; k < ends_.size(); ++k) {
      const size_t at = ends_[k].find(all, format_.ends[k], scanned);
      if (at < end) {
        end = at;
        end_size = format_.ends[k].size();
      }
    }
    if (end == npos) {
      // The message being written: a partial end marker is held back.
      std::string_view body = all.substr(body_at);
      size_t hold = 0;
      for (std::string_view e : format_.ends) hold = std::max(hold, partial_marker_length(body, e));
      body.remove_suffix(hold);
      if (kind == MessageKind::kCall) {
        ParsedMessage call;
        read_call_message(syntax_, header, body, true, call);
        out.open = std::move(call.tool_calls);
        scanned += body.size();
      } else {
        open_field = kind == MessageKind::kReasoning ? &out.reasoning : &out.content;
        open_at = body_at;
        open_end = body_at + body.size();
      }
      break;
    }
    // A message read whole: what it says is committed.
    const std::string_view body = all.substr(body_at, end - body_at);
    scanned += body.size();
    if (kind == MessageKind::kCall) {
      read_call_message(syntax_, header, body, true, done_);
    } else {
      (kind == MessageKind::kReasoning ? done_.reasoning : done_.content).append(body);
    }
    next_ = end + end_size;
  }
  out.reasoning = {done_.reasoning, nullptr, 0, 0};
  out.content = {done_.content, nullptr, 0, 0};
  if (open_field != nullptr) {
    open_field->source = &text;
    open_field->begin = open_at;
    open_field->end = open_end;
  }
  out.calls = &done_.tool_calls;
}

}  // namespace hearth::chat::stream
