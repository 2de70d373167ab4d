// Which output syntax a template's model writes (chat-templates.md §8.1, §9): the tool-call
// markers of its family and its thinking tags, found from the template source.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "chat/chat_types.h"
#include "chat/output_parser.h"

namespace hearth::chat {

struct ThinkingTags {
  std::string start;
  std::string end;
};

// The thinking tags a template writes, found by their opening text in its source.
std::optional<ThinkingTags> thinking_tags(const std::string& source);

// What the model writes before its answer's content ("" for most templates; Functionary
// v3.2's recipient line ">>>all\n").
std::string content_start(const std::string& source);

// What closes the content and the message, when the model writes them (Kimi K3's
// "<|close|>response<|sep|>", "<|close|>message<|sep|>" and "<|end_of_msg|>").
std::string content_end(const std::string& source);
std::vector<std::string> message_end(const std::string& source);

// Stop strings the model needs besides its end-of-generation tokens: Laguna's
// "</assistant>" is an end token only when generated as one, and after a call its models
// may spell it out in pieces.
std::vector<std::string> additional_stops(const std::string& source);

// Whether the model writes recipient messages (Muse Glimmer: "<|start|>assistant to=self").
bool writes_recipient_messages(const std::string& source);

// The tool-call syntax of the family the template belongs to; style kNone when the
// template has no tool-call syntax (then tools are rendered but nothing is parsed back).
ToolCallFormat tool_call_format(const std::string& source);

// Adds to `format.string_params` the parameters whose schema says {"type": "string"}, by
// tool (tagged formats write them as bare text). Reads each tool's parsed schema.
void add_string_params(const std::vector<Tool>& tools, ToolCallFormat& format);

// Whether the reference reads this template's output with a handler of its own (GPT-OSS,
// Qwen3-Coder, Gemma 4, ...) rather than its differential autoparser. An autoparsed
// template's grammar errors (an unusable schema) carry the autoparser's lead-in.
bool reference_has_dedicated_parser(const std::string& source);

// The name of the family (for tests and logs): "hermes", "qwen3-coder", ... or "none".
std::string tool_call_family(const std::string& source);

}  // namespace hearth::chat
