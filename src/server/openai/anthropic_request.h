// An Anthropic Messages body (openai-compat.md §8.1) as /v1/messages and
// /v1/messages/count_tokens read it: parsed once, by the Anthropic field tables, into typed
// messages, content blocks, tools and options; then mapped to the chat request.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "server/api_error.h"
#include "server/chat_request.h"
#include "server/fields/field.h"
#include "server/json_util.h"

namespace hearth::server::openai {

// The kinds of content block (a bit each: a block's table rows name the kinds they read).
enum class BlockKind : uint32_t {
  kNone = 0,  // no `type` (a 400)
  kText = 1u << 0,
  kThinking = 1u << 1,
  kImage = 1u << 2,
  kToolUse = 1u << 3,
  kToolResult = 1u << 4,
  kOther = 1u << 5,  // a type Hearth does not read (redacted_thinking, document, ...): ignored
};

// A content block of a message, of the system prompt or of a tool result.
struct AnthropicBlock {
  BlockKind kind = BlockKind::kNone;
  std::optional<std::string> text;  // text: `text` (required); thinking: `thinking`
  // image: `source` {type "base64", media_type, data} or {type "url", url}
  std::string source_type;
  std::string media_type = "image/jpeg";
  std::string data;
  std::string url;
  // tool_use
  std::string id;
  std::string name;
  Json input = Json::object();
  // tool_result: `content` as a string, or as blocks (text and image ones are read)
  std::string tool_use_id;
  bool content_is_blocks = false;
  std::string content_text;
  std::vector<AnthropicBlock> content;
};

struct AnthropicMessage {
  std::optional<std::string> role;
  // A message whose `content` is a block list is converted block by block; any other
  // (a string, null, or no content) is handed to the chat layer as it was sent.
  bool has_content = false;
  bool content_is_blocks = false;
  std::vector<AnthropicBlock> blocks;
  Json as_sent;
};

struct AnthropicTool {
  std::string name;
  std::string description;
  Json input_schema = Json::object();
};

struct AnthropicRequest {
  bool messages_given = false;
  std::vector<AnthropicMessage> messages;
  std::optional<std::string> system;  // a string, or the text of its text blocks
  std::optional<std::vector<AnthropicTool>> tools;
  // tool_choice {type: auto | any | tool | none, name, disable_parallel_tool_use}
  std::string tool_choice_type;
  std::string tool_choice_name;
  std::optional<bool> disable_parallel_tool_use;
  // thinking {type: enabled | disabled, budget_tokens}
  std::string thinking_type;
  int32_t thinking_budget_tokens = 10000;
  bool stream = false;
  Json chat_template_kwargs = Json::object();
  std::optional<std::vector<std::string>> stop_sequences;
  Json max_tokens = 4096;  // as sent (null: the server's default); the native table reads it
  // temperature, top_p and top_k as sent: the native table reads them.
  Json sampling = Json::object();
};

// Reads `body` (a JSON object) through the Anthropic tables: a member or block of the wrong
// type is a 400 naming it ("messages[2].content[0].type").
std::optional<ApiError> parse_anthropic_request(const Json& body, AnthropicRequest& out);
// The body's rows as fields.json records them (the rows of nested objects are named by
// their paths in errors, not recorded).
std::vector<fields::FieldInfo> anthropic_field_info();

// The chat request the Anthropic request asks for (openai-compat.md §8.1); count_tokens
// leaves max_tokens out.
ChatRequest to_chat_request(const AnthropicRequest& request, bool need_max_tokens);

}  // namespace hearth::server::openai
