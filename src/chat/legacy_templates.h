// The built-in chat formats of `--no-jinja` (chat-templates.md §3): hard-coded formatters
// selected by name or by marker substrings of a template source, with the exact strings
// of llama.cpp b10621's src/llama-chat.cpp. Independent of the Jinja engine, so the option
// parser can list the names without linking it.
#pragma once

#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"

namespace hearth::chat {

struct LegacyMessage {
  std::string role;
  std::string content;
};

using LegacyFormatter = std::string (*)(std::span<const LegacyMessage> chat, bool add_assistant);

struct LegacyFormat {
  std::string_view name;  // empty for a format reached only by detection (dots1)
  LegacyFormatter format;
};

// Every format, the named ones in alphabetical order (llama-server lists them so).
std::span<const LegacyFormat> legacy_formats();
// The 54 built-in names, alphabetical.
std::vector<std::string_view> legacy_template_names();
// "bailing, bailing-think, ..." for help texts.
std::string legacy_template_name_list();

// The format for `source`: an exact built-in name, else the first marker rule that matches
// the template text; nullptr when none does.
const LegacyFormat* detect_legacy_format(std::string_view source);

// Formats the chat with the format detected from `source`. kUnsupported "this custom
// template is not supported, try using --jinja" when none matches.
Result<std::string> apply_legacy_template(std::string_view source,
                                          std::span<const LegacyMessage> chat, bool add_assistant);

}  // namespace hearth::chat
