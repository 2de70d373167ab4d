// The chat-template test conversations (tests/data/chat/conversations.json) and the template
// variables each one becomes, built exactly as scripts/jinja_oracle.py builds them for
// Python's Jinja2, so that both engines render the same input. Shared by the oracle test,
// hearth-jinja and hearth-jinja-bench.
#pragma once

#include <ctime>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "base/status.h"

namespace hearth::jinja::tools {

// The instant strftime_now reports on both sides (2026-08-29 05:20:00 UTC); matches
// PINNED_UNIX_TIME in scripts/jinja_oracle.py.
inline constexpr std::time_t kPinnedUnixTime = 1788000000;

struct Conversation {
  std::string name;
  nlohmann::ordered_json context;  // the template variables
};

// The variables a template sees for one conversation entry: messages, tools (only when
// present), add_generation_prompt, bos_token, eos_token, then the entry's "variables".
nlohmann::ordered_json conversation_context(const nlohmann::ordered_json& conversation,
                                            const std::string& bos_token,
                                            const std::string& eos_token);

// Parses a conversations file: {"bos_token", "eos_token", "conversations": [{"name",
// "messages", "tools"?, "add_generation_prompt"?, "variables"?}]}.
Result<std::vector<Conversation>> parse_conversations(const std::string& json_text);

// Reads a whole file (kNotFound / kIo with the path in the message).
Result<std::string> read_text_file(const std::string& path);

// The chat templates of a Hugging Face tokenizer_config.json: one unnamed entry when
// `chat_template` is a string, one per {name, template} when it is a list.
struct NamedTemplate {
  std::string variant;  // empty for a single template
  std::string source;
};
Result<std::vector<NamedTemplate>> tokenizer_config_templates(const std::string& json_text);

}  // namespace hearth::jinja::tools
