#include "chat/normalize.h"

#include "base/json_parse.h"
#include "base/log.h"
#include "chat/openai_messages.h"

namespace hearth::chat {

Json shape_messages(const std::vector<Message>& messages, const TemplateCaps& caps) {
  const bool strings_only = caps.supports_string_content && !caps.supports_typed_content;
  const bool arrays_only = !caps.supports_string_content && caps.supports_typed_content;
  Json out = Json::array();
  for (const Message& message : messages) {
    Json j = message_to_json(message, /*concat_text=*/strings_only);
    if (arrays_only && j["content"].is_string()) {
      Json part = {{"type", "text"}, {"text", j["content"].get<std::string>()}};
      j["content"] = Json::array({std::move(part)});
    }
    out.push_back(std::move(j));
  }
  return out;
}

void map_developer_to_system(Json& messages) {
  for (Json& message : messages) {
    auto role = message.find("role");
    if (role != message.end() && *role == "developer") *role = "system";
  }
}

Status merge_system_message(Json& messages) {
  if (messages.empty() || messages.front().at("role") != "system") return Status::ok();
  if (messages.size() == 1) {
    log_warn("Removing system prompt due to template not supporting system role");
    messages.erase(messages.begin());
    return Status::ok();
  }
  try {
    Json& next = messages[1];
    next["content"] = messages.front().at("content").get<std::string>() + "\n" +
                      next.at("content").get<std::string>();
  } catch (const std::exception& e) {
    // Typed contents cannot be merged; the reference fails the same way.
    return error(ErrorCode::kInvalidArgument, e.what());
  }
  messages.erase(messages.begin());
  return Status::ok();
}

void add_empty_tool_call_content(Json& messages) {
  for (Json& message : messages) {
    if (message.contains("tool_calls") && !message.contains("content")) message["content"] = "";
  }
}

Status parse_tool_call_arguments(Json& messages) {
  for (Json& message : messages) {
    if (!message.contains("tool_calls")) continue;
    for (Json& call : message["tool_calls"]) {
      if (!call.contains("function") || !call["function"].contains("arguments")) continue;
      Json& arguments = call["function"]["arguments"];
      if (!arguments.is_string()) continue;
      // The client's string, so the bounded parser: a string nested 60,000 levels deep
      // would otherwise be built, then copied recursively on its way to the template.
      auto parsed = parse_json(arguments.get<std::string>());
      if (!parsed.is_ok()) {
        return error(ErrorCode::kInvalidArgument,
                     "Failed to parse tool call arguments as JSON: " + parsed.status().message());
      }
      arguments = std::move(parsed.value());
    }
  }
  return Status::ok();
}

}  // namespace hearth::chat
