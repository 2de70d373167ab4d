// OpenAI chat JSON <-> the common message list, with llama-server's error texts
// (openai-compat.md §4.2, §4.6). The request-level checks that answer 400 (missing
// `messages`, bad `content` types) belong to the route; these parsers report what the
// reference reports as 500 "Failed to parse messages: ..." / "Failed to parse tools: ...".
#pragma once

#include <vector>

#include <nlohmann/json.hpp>

#include "base/status.h"
#include "chat/chat_types.h"

namespace hearth::chat {

using Json = nlohmann::ordered_json;

// `messages` must already be an array. Errors (kInvalidArgument): "Failed to parse
// messages: <reason>", e.g. "Missing 'role' in message: {\"content\":\"hi\"}".
Result<std::vector<Message>> parse_openai_messages(const Json& messages);

// `tools` may be null (no tools). Errors: "Failed to parse tools: <reason>; tools = <JSON>".
Result<std::vector<Tool>> parse_openai_tools(const Json& tools);

// A message as the template sees it (chat-templates.md §6.1). With `concat_text`, text
// parts are flattened into one string; otherwise parts stay an array of {type, text}.
Json message_to_json(const Message& message, bool concat_text);

// A tool's parameters schema: the parsed value itself, or {} when it is not an object.
// Nothing is parsed here: every reader (the template's `tools`, the tool-call grammar,
// the output syntax) sees the one value parse_openai_tools took from the request.
const Json& tool_schema(const Tool& tool);

// [{"type":"function","function":{"name","description","parameters"}}], or null when empty.
Json tools_to_json(const std::vector<Tool>& tools);

}  // namespace hearth::chat
