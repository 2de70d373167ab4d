// The server's chat configuration: what the command-line options set (the option rows name
// these members; the initializers are the options' defaults) and the templates chosen when
// the model loads.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include <nlohmann/json.hpp>

namespace hearth::chat {
class ChatTemplates;
}

namespace hearth::server {

using Json = nlohmann::ordered_json;  // as server/json_util.h: keys keep their order

struct ChatSettings {
  bool use_jinja = true;                     // --jinja / --no-jinja
  bool prefill_assistant = true;             // a trailing assistant message is continued
  Json template_kwargs = Json::object();     // --chat-template-kwargs, merged in order given
  std::string reasoning_format = "auto";     // --reasoning-format
  int32_t reasoning = -1;                    // -rea: 1 on, 0 off, -1 the template decides
  std::string reasoning_effort = "default";  // --reasoning-effort ("default": not set)
  int32_t reasoning_budget = -1;             // --reasoning-budget
  std::string reasoning_budget_message;      // --reasoning-budget-message
  int32_t reasoning_preserve = -1;           // --(no-)reasoning-preserve; -1 template default
  bool skip_chat_parsing = false;            // --skip-chat-parsing
  // Not an option: the templates selected when the model loads.
  std::shared_ptr<const chat::ChatTemplates> templates;

  bool operator==(const ChatSettings&) const = default;
};

}  // namespace hearth::server
