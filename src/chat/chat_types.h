// The common message list of a chat request (chat-templates.md §1): what the OpenAI,
// Responses and Anthropic bodies become before a template renders them.
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace hearth::chat {

using Json = nlohmann::ordered_json;

struct ContentPart {
  std::string type;  // "text" (or "media_marker" once media decoding exists)
  std::string text;
};

struct ToolCall {
  std::string name;
  std::string arguments;  // JSON text, as the client sent it or re-serialized
  std::string id;         // empty when the client gave none
};

struct Message {
  std::string role;
  std::string content;  // used when content_parts is empty
  std::vector<ContentPart> content_parts;
  std::vector<ToolCall> tool_calls;
  std::string reasoning_content;
  std::string tool_name;  // "name"
  std::string tool_call_id;

  // The content as one string: `content`, else the text parts joined with `delimiter`.
  std::string text(const std::string& delimiter) const;
};

struct Tool {
  std::string name;
  std::string description;
  // The parameters schema as the request gave it, parsed once with the request (never
  // text: a string here is a JSON string, not a schema). Read it through tool_schema(),
  // which gives {} for a value that is not an object.
  Json parameters = Json::object();
};

// How a trailing assistant message is continued (openai-compat.md §4.5).
enum class Continuation {
  kNone,       // render the conversation as it is
  kAuto,       // reasoning if the message has only reasoning_content, else content
  kContent,    // continue the message's content
  kReasoning,  // continue the message's reasoning
};

}  // namespace hearth::chat
