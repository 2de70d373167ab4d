// An OpenAI chat body made into a prompt, as llama-server's chat routes and
// /apply-template do it (openai-compat.md §4.1-§4.7, chat-templates.md §5-§7): the request
// checks with the reference's texts and statuses, the template inputs, the render.
#pragma once

#include <memory>
#include <optional>

#include "chat/chat_templates.h"
#include "server/api_error.h"
#include "server/config/chat_settings.h"
#include "server/json_util.h"

namespace hearth::server {

struct ChatPromptRequest {
  chat::ChatInputs inputs;
  chat::ChatPrompt prompt;
  // tool_choice {"type":"function","function":{"name"}}: the one tool the answer must call.
  std::string forced_tool;
};

// 400 invalid_request_error for every problem with the request, including those the
// reference reports as 500 (unparseable messages or tools, a template that refuses the
// conversation, tools without --jinja, wrong member types; a recorded difference).
std::optional<ApiError> build_chat_prompt(const Json& body, const ChatSettings& settings,
                                          ChatPromptRequest& out);

}  // namespace hearth::server
