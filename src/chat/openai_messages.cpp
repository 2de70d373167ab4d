#include "chat/openai_messages.h"

#include <stdexcept>
#include <string>

namespace hearth::chat {

namespace {

// The parsers below throw std::invalid_argument (their own texts) or nlohmann's exceptions
// (a field of the wrong type); both become the reason of one error, as in the reference.

ContentPart parse_content_part(const Json& part) {
  if (!part.contains("type")) {
    throw std::invalid_argument("Missing content part type: " + part.dump());
  }
  const Json& type = part.at("type");
  if (type != "text" && type != "media_marker") {
    throw std::invalid_argument("Unsupported content part type: " + type.dump());
  }
  ContentPart out;
  out.type = type.get<std::string>();
  out.text = part.at("text").get<std::string>();
  return out;
}

ToolCall parse_tool_call(const Json& call) {
  if (!call.contains("type")) throw std::invalid_argument("Missing tool call type: " + call.dump());
  if (call.at("type") != "function") {
    throw std::invalid_argument("Unsupported tool call type: " + call.dump());
  }
  if (!call.contains("function")) {
    throw std::invalid_argument("Missing tool call function: " + call.dump());
  }
  const Json& function = call.at("function");
  if (!function.contains("name")) {
    throw std::invalid_argument("Missing tool call name: " + call.dump());
  }
  ToolCall out;
  out.name = function.at("name").get<std::string>();
  const Json& arguments = function.at("arguments");
  out.arguments = arguments.is_string() ? arguments.get<std::string>() : arguments.dump();
  if (call.contains("id")) out.id = call.at("id").get<std::string>();
  return out;
}

void parse_content(const Json& content, Message& msg) {
  if (content.is_string()) {
    msg.content = content.get<std::string>();
  } else if (content.is_array()) {
    for (const Json& part : content) msg.content_parts.push_back(parse_content_part(part));
  } else if (!content.is_null()) {
    throw std::invalid_argument("Invalid 'content' type: expected string or array, got " +
                                content.dump() +
                                " (ref: https://github.com/ggml-org/llama.cpp/issues/8367)");
  }
}

Message parse_message(const Json& message) {
  if (!message.is_object()) {
    throw std::invalid_argument("Expected 'message' to be an object, got " + message.dump());
  }
  if (!message.contains("role")) {
    throw std::invalid_argument("Missing 'role' in message: " + message.dump());
  }
  Message msg;
  msg.role = message.at("role").get<std::string>();
  const bool has_content = message.contains("content");
  const bool has_tool_calls = message.contains("tool_calls");
  if (has_content) parse_content(message.at("content"), msg);
  if (has_tool_calls) {
    for (const Json& call : message.at("tool_calls"))
      msg.tool_calls.push_back(parse_tool_call(call));
  }
  if (!has_content && !has_tool_calls) {
    throw std::invalid_argument(
        "Expected 'content' or 'tool_calls' (ref: "
        "https://github.com/ggml-org/llama.cpp/issues/8367 "
        "& https://github.com/ggml-org/llama.cpp/issues/12279)");
  }
  if (message.contains("reasoning_content")) {
    msg.reasoning_content = message.at("reasoning_content").get<std::string>();
  }
  if (message.contains("name")) msg.tool_name = message.at("name").get<std::string>();
  if (message.contains("tool_call_id")) {
    msg.tool_call_id = message.at("tool_call_id").get<std::string>();
  }
  return msg;
}

Tool parse_tool(const Json& tool) {
  if (!tool.contains("type")) throw std::invalid_argument("Missing tool type: " + tool.dump());
  const Json& type = tool.at("type");
  if (!type.is_string() || type != "function") {
    throw std::invalid_argument("Unsupported tool type: " + tool.dump());
  }
  if (!tool.contains("function")) {
    throw std::invalid_argument("Missing tool function: " + tool.dump());
  }
  const Json& function = tool.at("function");
  Tool out;
  out.name = function.at("name").get<std::string>();
  out.description = function.value("description", std::string());
  out.parameters = function.value("parameters", Json::object());
  return out;
}

// Text parts joined by "\n"; media markers sit against their neighbours without one.
std::string flatten_parts(const std::vector<ContentPart>& parts) {
  std::string text;
  bool after_marker = false;
  for (const ContentPart& part : parts) {
    bool newline = false;
    if (part.type == "text") {
      newline = !after_marker && !text.empty();
      after_marker = false;
    } else if (part.type == "media_marker") {
      after_marker = true;
    } else {
      continue;
    }
    if (newline) text += '\n';
    text += part.text;
  }
  return text;
}

bool has_media(const Message& message) {
  for (const ContentPart& part : message.content_parts) {
    if (part.type == "media_marker") return true;
  }
  return false;
}

}  // namespace

std::string Message::text(const std::string& delimiter) const {
  if (!content.empty()) return content;
  std::string out;
  for (const ContentPart& part : content_parts) {
    if (part.type != "text") continue;
    if (!out.empty()) out += delimiter;
    out += part.text;
  }
  return out;
}

Result<std::vector<Message>> parse_openai_messages(const Json& messages) {
  std::vector<Message> out;
  try {
    if (!messages.is_array()) {
      throw std::invalid_argument("Expected 'messages' to be an array, got " + messages.dump());
    }
    for (const Json& message : messages) out.push_back(parse_message(message));
  } catch (const std::exception& e) {
    return error(ErrorCode::kInvalidArgument, std::string("Failed to parse messages: ") + e.what());
  }
  return out;
}

Result<std::vector<Tool>> parse_openai_tools(const Json& tools) {
  std::vector<Tool> out;
  try {
    if (tools.is_null()) return out;
    if (!tools.is_array()) {
      throw std::invalid_argument("Expected 'tools' to be an array, got " + tools.dump());
    }
    for (const Json& tool : tools) out.push_back(parse_tool(tool));
  } catch (const std::exception& e) {
    return error(ErrorCode::kInvalidArgument,
                 std::string("Failed to parse tools: ") + e.what() + "; tools = " + tools.dump(2));
  }
  return out;
}

Json message_to_json(const Message& message, bool concat_text) {
  Json j = Json::object();
  j["role"] = message.role;
  if (!message.content.empty()) {
    j["content"] = message.content;
  } else if (!message.content_parts.empty()) {
    if (concat_text || has_media(message)) {
      j["content"] = flatten_parts(message.content_parts);
    } else {
      Json parts = Json::array();
      for (const ContentPart& part : message.content_parts) {
        parts.push_back(Json{{"type", part.type}, {"text", part.text}});
      }
      j["content"] = std::move(parts);
    }
  } else {
    j["content"] = "";  // templates see "" for a null or absent content, never none
  }
  if (!message.reasoning_content.empty()) j["reasoning_content"] = message.reasoning_content;
  if (!message.tool_name.empty()) j["name"] = message.tool_name;
  if (!message.tool_call_id.empty()) j["tool_call_id"] = message.tool_call_id;
  if (!message.tool_calls.empty()) {
    Json calls = Json::array();
    for (const ToolCall& call : message.tool_calls) {
      Json c = Json::object();
      c["type"] = "function";
      c["function"] = Json{{"name", call.name}, {"arguments", call.arguments}};
      if (!call.id.empty()) c["id"] = call.id;
      calls.push_back(std::move(c));
    }
    j["tool_calls"] = std::move(calls);
  }
  return j;
}

const Json& tool_schema(const Tool& tool) {
  static const Json kEmpty = Json::object();
  return tool.parameters.is_object() ? tool.parameters : kEmpty;
}

Json tools_to_json(const std::vector<Tool>& tools) {
  if (tools.empty()) return Json();
  Json out = Json::array();
  for (const Tool& tool : tools) {
    Json function = Json::object();
    function["name"] = tool.name;
    function["description"] = tool.description;
    function["parameters"] = tool_schema(tool);
    out.push_back(Json{{"type", "function"}, {"function", std::move(function)}});
  }
  return out;
}

}  // namespace hearth::chat
