#include "chat/output_parser.h"

#include <algorithm>
#include <functional>

#include "chat/output_parts.h"
#include "chat/tool_call_reader.h"

namespace hearth::chat {

namespace {

bool only_space(std::string_view s) {
  return ltrim(s).empty();
}

// Reasoning of the output, and the text after it (the body: content and tool calls).
struct ReasoningSplit {
  std::string reasoning;
  std::string_view body;
};

// R = optional(start reasoning(until end) end). The markers may carry the whitespace the
// template writes around reasoning ("<think>\n", "\n</think>\n\n"): the tags match alone,
// and the markers' own whitespace is not part of the reasoning.
ReasoningSplit split_reasoning(const OutputSyntax& syntax, std::string_view rest, bool partial) {
  ReasoningSplit out;
  out.body = rest;
  if (!syntax.extract_reasoning || syntax.reasoning_start.empty()) return out;
  const std::string_view start = trim_space(syntax.reasoning_start);
  const std::string_view end_marker = rtrim(syntax.reasoning_end);
  const std::string_view end = trim_space(syntax.reasoning_end);
  const std::string_view after_space = ltrim(rest);
  if (after_space.substr(0, start.size()) != start) {
    // A turn without reasoning may open with a bare end tag (MiniMax M3 writes one): it is
    // not content. A start or end tag still being generated is held back whole.
    if (!end.empty() && after_space.substr(0, end.size()) == end) {
      out.body = ltrim(after_space.substr(end.size()));
    } else if (partial && !after_space.empty() &&
               (start.substr(0, after_space.size()) == after_space ||
                end.substr(0, after_space.size()) == after_space)) {
      out.body = {};
    }
    return out;
  }
  std::string_view inside = after_space.substr(start.size());
  const std::string_view marker = syntax.reasoning_start;
  const std::string_view lead = marker.substr(marker.find(start) + start.size());
  if (!lead.empty() && inside.substr(0, lead.size()) == lead) inside.remove_prefix(lead.size());
  const size_t close = inside.find(end);
  std::string_view reasoning = inside;
  if (close == std::string_view::npos) {
    if (partial) {
      reasoning.remove_suffix(std::max(partial_marker_length(reasoning, end_marker),
                                       partial_marker_length(reasoning, end)));
    }
    out.body = {};
  } else {
    reasoning = inside.substr(0, close);
    const std::string_view trail = end_marker.substr(0, end_marker.size() - end.size());
    if (!trail.empty() && reasoning.size() >= trail.size() &&
        reasoning.substr(reasoning.size() - trail.size()) == trail) {
      reasoning.remove_suffix(trail.size());
    }
    out.body = ltrim(inside.substr(close + end.size()));
  }
  if (!only_space(reasoning)) out.reasoning = std::string(reasoning);
  return out;
}

// The text where tool calls begin: the section marker, else the first call's marker.
const std::string& tools_marker(const ToolCallFormat& f) {
  return f.section_start.empty() ? f.call_start : f.section_start;
}

// The JSON value of a schema-constrained answer (chat-templates.md §8.2).
std::string json_content(std::string_view body) {
  const TextRange r = json_content_range(body);
  return std::string(body.substr(r.begin, r.end - r.begin));
}

void parse_body(const OutputSyntax& syntax, std::string_view body, bool partial,
                ParsedMessage& out) {
  if (syntax.json_output && !syntax.parse_tool_calls) {
    out.content = json_content(body);
    return;
  }
  if (!syntax.parse_tool_calls || syntax.tools.style == ToolCallStyle::kNone) {
    out.content = std::string(body);
    return;
  }
  const std::string& marker = tools_marker(syntax.tools);
  size_t at = 0;
  if (marker.empty()) {
    // Bare JSON calls (Llama 3.x): a call is an object at the start of the body.
    const std::string_view trimmed = ltrim(body);
    if (trimmed.empty() || trimmed.front() != '{') {
      out.content = std::string(body);
      return;
    }
    at = body.size() - trimmed.size();
  } else {
    at = body.find(marker);
    const std::string& bare = syntax.tools.bare_call_start;
    if (!bare.empty()) at = std::min(at, body.find(bare));
    if (at == std::string_view::npos) {
      // While streaming, a partial marker and the whitespace before it are held back
      // (content before a call is trimmed at its end).
      std::string_view content = body;
      if (partial) {
        const size_t held = std::max(partial_marker_length(content, marker),
                                     bare.empty() ? 0 : partial_marker_length(content, bare));
        content = rtrim(content.substr(0, content.size() - held));
      }
      out.content = std::string(content);
      return;
    }
  }
  CallReadResult calls =
      read_tool_calls(syntax.tools, body.substr(at), partial, syntax.parallel_tool_calls ? 0 : 1);
  if (!partial && !calls.ok) {
    // Text that is not a call is the model's content, never an error (differences.json).
    out.content = std::string(body);
    return;
  }
  out.content = std::string(marker.empty() ? body.substr(0, at) : rtrim(body.substr(0, at)));
  out.tool_calls = std::move(calls.calls);
}

// The body without the closers of its content and message (Kimi K3): the content's closer
// is dropped where it stands (the calls' section may follow it), the message ends at its
// first closer. While streaming, a closer still being written is held back.
std::string without_closers(const OutputSyntax& syntax, std::string_view body, bool partial) {
  std::string out(body);
  if (!syntax.content_end.empty()) {
    const size_t at = out.find(syntax.content_end);
    if (at != std::string::npos) out.erase(at, syntax.content_end.size());
  }
  for (const std::string& closer : syntax.message_end) {
    const size_t at = out.find(closer);
    if (at != std::string::npos) out.resize(at);
  }
  if (partial) {
    size_t held = partial_marker_length(out, syntax.content_end);
    for (const std::string& closer : syntax.message_end) {
      held = std::max(held, partial_marker_length(out, closer));
    }
    out.resize(out.size() - held);
  }
  return out;
}

// One harmony message's header: its channel and recipient ("" when none).
struct HarmonyHeader {
  std::string channel;
  std::string recipient;
};

std::string word_after(std::string_view header, std::string_view key) {
  const size_t at = header.find(key);
  if (at == std::string_view::npos) return "";
  size_t end = at + key.size();
  while (end < header.size() && !is_space(header[end]) && header[end] != '<') ++end;
  return std::string(header.substr(at + key.size(), end - at - key.size()));
}

HarmonyHeader read_header(std::string_view header) {
  HarmonyHeader h{word_after(header, "<|channel|>"), word_after(header, "to=")};
  if (h.recipient.rfind("functions.", 0) == 0) h.recipient.erase(0, 10);
  return h;
}

// The messages of the message formats: a header up to <|message|> (after the opener, which
// starts every message but the first), then a body up to the first of the ends; the last
// body may be unfinished, a partial end marker held back. In the end, text that never became
// a message is content (not lost).
void for_each_message(std::string_view rest, bool partial, const MessageFormat& format,
                      ParsedMessage& out,
                      const std::function<void(std::string_view, std::string_view)>& visit) {
  const std::string_view opener = format.opener;
  size_t i = 0;
  while (i < rest.size()) {
    if (!opener.empty() && rest.substr(i, opener.size()) == opener) i += opener.size();
    const size_t message = rest.find(kMessageMarker, i);
    if (message == std::string_view::npos) {
      if (!partial) out.content += std::string(rest.substr(i));
      break;  // else a header still being written
    }
    const size_t body_start = message + kMessageMarker.size();
    size_t end = std::string_view::npos, end_size = 0;
    for (std::string_view e : format.ends) {
      const size_t at = rest.find(e, body_start);
      if (at < end) {
        end = at;
        end_size = e.size();
      }
    }
    std::string_view body = rest.substr(
        body_start, end == std::string_view::npos ? std::string_view::npos : end - body_start);
    if (end == std::string_view::npos && partial) {
      size_t hold = 0;
      for (std::string_view e : format.ends) hold = std::max(hold, partial_marker_length(body, e));
      body.remove_suffix(hold);
    }
    visit(rest.substr(i, message - i), body);
    if (end == std::string_view::npos) break;
    i = end + end_size;
  }
}

// GPT-OSS after its generation prompt (<|start|>assistant): the analysis channel is
// reasoning, a message to=functions.f a call, the rest content. Muse Glimmer after
// <|start|>assistant: to=self is reasoning, to=user (or none) content, any other recipient a
// call in the family's tags.
void parse_messages(const OutputSyntax& syntax, const MessageFormat& format, std::string_view rest,
                    bool partial, ParsedMessage& out) {
  for_each_message(rest, partial, format, out, [&](std::string_view header, std::string_view body) {
    switch (message_kind(syntax, header, out.tool_calls.size())) {
      case MessageKind::kCall:
        read_call_message(syntax, header, body, partial, out);
        break;
      case MessageKind::kReasoning:
        out.reasoning += std::string(body);
        break;
      case MessageKind::kContent:
        out.content += std::string(body);
        break;
    }
  });
}

}  // namespace

std::string_view trim_space(std::string_view text) {
  return rtrim(ltrim(text));
}

size_t partial_marker_length(std::string_view text, std::string_view marker) {
  const size_t longest = std::min(text.size(), marker.size() - (marker.empty() ? 0 : 1));
  for (size_t n = longest; n > 0; --n) {
    if (text.substr(text.size() - n) == marker.substr(0, n)) return n;
  }
  return 0;
}

TextRange json_content_range(std::string_view body) {
  const size_t lead = body.size() - ltrim(body).size();
  std::string_view text = body.substr(lead);
  size_t base = lead;
  if (text.substr(0, 7) == "```json") {
    const std::string_view inner = text.substr(7);
    text = ltrim(inner);
    base += 7 + inner.size() - text.size();
    const size_t fence = text.rfind("```");
    if (fence != std::string_view::npos) text = rtrim(text.substr(0, fence));
  }
  size_t start = 0;
  const size_t end = json_value_end(text, 0, &start);
  if (end != std::string_view::npos) return {base + start, base + end};
  return {base, base + json_shown_length(text)};
}

size_t json_shown_length(std::string_view text) {
  size_t cut = text.size();
  while (cut > 0 &&
         std::string_view(",]}:\" \n\t\r[{").find(text[cut - 1]) == std::string_view::npos) {
    --cut;
  }
  if (cut == text.size()) return text.size();
  size_t before = cut;
  while (before > 0 && is_space(text[before - 1])) --before;
  if (before > 0 && text[before - 1] == ':') {
    size_t key = before - 1;
    while (key > 0 && is_space(text[key - 1])) --key;
    if (key > 0 && text[key - 1] == '"') {
      const size_t open = text.rfind('"', key - 2);
      if (open != std::string_view::npos) cut = open;
    }
  }
  return cut;
}

const MessageFormat* message_format(const OutputSyntax& syntax) {
  static const MessageFormat kHarmony{"", {"<|end|>", "<|call|>", "<|return|>"}};
  static const MessageFormat kRecipients{"<|start|>assistant", {"<|eom|>", "<|eot|>"}};
  if (syntax.harmony && syntax.extract_reasoning) return &kHarmony;
  if (syntax.recipients) return &kRecipients;
  return nullptr;
}

MessageKind message_kind(const OutputSyntax& syntax, std::string_view header, size_t calls) {
  if (syntax.harmony && syntax.extract_reasoning) {
    const HarmonyHeader h = read_header(header);
    if (!h.recipient.empty() && syntax.parse_tool_calls) return MessageKind::kCall;
    if (h.channel == "analysis" && syntax.extract_reasoning) return MessageKind::kReasoning;
    return MessageKind::kContent;
  }
  const size_t max_calls = syntax.parallel_tool_calls ? 0 : 1;
  const std::string recipient = word_after(header, "to=");
  const bool call = recipient != "self" && recipient != "user" && !recipient.empty();
  if (recipient == "self" && syntax.extract_reasoning) return MessageKind::kReasoning;
  if (call && syntax.parse_tool_calls && (max_calls == 0 || calls < max_calls)) {
    return MessageKind::kCall;
  }
  return MessageKind::kContent;
}

void read_call_message(const OutputSyntax& syntax, std::string_view header, std::string_view body,
                       bool partial, ParsedMessage& out) {
  if (syntax.harmony && syntax.extract_reasoning) {
    out.tool_calls.push_back({read_header(header).recipient, std::string(rtrim(body)), ""});
    return;
  }
  // A call that cannot be read is content (differences.json).
  CallReadResult calls = read_tool_calls(syntax.tools, body, partial, 1);
  if (!partial && !calls.ok) {
    out.content += std::string(body);
  } else {
    for (ParsedToolCall& c : calls.calls) out.tool_calls.push_back(std::move(c));
  }
}

ParsedMessage parse_output(const OutputSyntax& syntax, std::string_view generated, bool partial) {
  std::string text = syntax.prefix;
  text.append(generated);
  std::string_view rest = text;
  if (!syntax.literal.empty() && rest.substr(0, syntax.literal.size()) == syntax.literal) {
    rest.remove_prefix(syntax.literal.size());
  }
  ParsedMessage out;
  if (const MessageFormat* format = message_format(syntax)) {
    parse_messages(syntax, *format, rest, partial, out);
    return out;
  }
  ReasoningSplit split = split_reasoning(syntax, rest, partial);
  out.reasoning = std::move(split.reasoning);
  std::string_view body = split.body;
  const std::string_view lead = syntax.content_start;
  if (!lead.empty() && body.substr(0, lead.size()) == lead) {
    body.remove_prefix(lead.size());
  } else if (partial && !lead.empty() && lead.substr(0, body.size()) == body) {
    body = {};  // the content's lead-in is still being written
  }
  if (syntax.content_end.empty() && syntax.message_end.empty()) {
    parse_body(syntax, body, partial, out);
  } else {
    parse_body(syntax, without_closers(syntax, body, partial), partial, out);
  }
  return out;
}

namespace {

// The part of `now` past `before`, when `before` is its prefix; else nothing (the parsed
// text shrank: a back-off, which the stream cannot take back).
std::string appended(const std::string& before, const std::string& now) {
  if (now.size() <= before.size() || now.compare(0, before.size(), before) != 0) return {};
  return now.substr(before.size());
}

}  // namespace

MessageDelta diff_messages(const ParsedMessage& before, const ParsedMessage& now) {
  MessageDelta d;
  d.reasoning = appended(before.reasoning, now.reasoning);
  d.content = appended(before.content, now.content);
  for (size_t i = 0; i < now.tool_calls.size(); ++i) {
    const ParsedToolCall& call = now.tool_calls[i];
    if (i < before.tool_calls.size()) {
      std::string args = appended(before.tool_calls[i].arguments, call.arguments);
      if (!args.empty()) d.tool_calls.push_back({i, false, "", "", std::move(args)});
      continue;
    }
    d.tool_calls.push_back({i, true, call.name, call.id, call.arguments});
  }
  return d;
}

}  // namespace hearth::chat
