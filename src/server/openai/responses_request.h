// A Responses body (openai-compat.md §7.1) as /v1/responses and /v1/responses/input_tokens
// read it: the Responses members (input and its items, instructions, tools, reasoning,
// max_output_tokens) parsed once by the Responses field tables into typed items; every
// other member is a chat body's, read by the chat table. Then mapped to the chat request.
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

// The kinds of input item, told by their role and type (a bit each: an item's table rows
// name the kinds they read).
enum class ItemKind : uint32_t {
  kNone = 0,                      // none of the shapes below: a 400
  kMessage = 1u << 0,             // role user, system or developer
  kAssistantMessage = 1u << 1,    // role assistant, type message
  kFunctionCall = 1u << 2,        // type function_call
  kFunctionCallOutput = 1u << 3,  // type function_call_output
  kReasoning = 1u << 4,           // type reasoning
};

// A content part of a message item, or of a function call's output.
struct ResponsesPart {
  enum class Kind { kText, kImage, kRefusal };
  Kind kind = Kind::kText;
  std::string text;  // text; image: its image_url; refusal: its refusal
};

struct ResponsesItem {
  ItemKind kind = ItemKind::kNone;
  std::string role;
  std::string type;
  std::optional<std::vector<ResponsesPart>> content;  // a string content is one text part
  std::optional<std::string> call_id;
  std::optional<std::string> name;
  std::optional<std::string> arguments;
  // function_call_output: a string, or text parts.
  std::optional<std::string> output;
  std::optional<std::vector<ResponsesPart>> output_parts;
  bool summary_given = false;
  std::optional<std::string> reasoning;  // reasoning: the first content's text
};

// A function tool: the chat tool's `function` object (the tool less its type; strict
// defaults to true). Tools of other types are skipped.
struct ResponsesTool {
  std::string type;
  Json function;
};

struct ResponsesRequest {
  bool input_given = false;
  std::optional<std::string> input_text;  // a string input: one user message
  std::vector<ResponsesItem> items;
  std::optional<std::string> instructions;
  std::string previous_response_id;
  std::vector<ResponsesTool> tools;
  std::optional<Json> max_output_tokens;  // as sent: the native table reads it as max_tokens
  std::optional<std::string> reasoning_effort;
  ChatRequest chat;  // every other member, read by the chat table
};

// Reads `body` (a JSON object) through the Responses tables, then the rest of it through
// the chat table: a member or item of the wrong type is a 400 naming it.
std::optional<ApiError> parse_responses_request(const Json& body, ResponsesRequest& out);
// The body's own rows as fields.json records them (the rest is the chat table's).
std::vector<fields::FieldInfo> responses_field_info();

// The chat request the Responses request asks for (openai-compat.md §7.1).
ChatRequest to_chat_request(const ResponsesRequest& request);

}  // namespace hearth::server::openai
