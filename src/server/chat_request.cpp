// The checks run in the reference's order (server-common.cpp's oaicompat_chat_params_parse),
// so a body with several problems gets the same first error.
#include "server/chat_request.h"

#include <string>

#include "chat/openai_messages.h"
#include "server/fields/completion_fields.h"

namespace hearth::server {

namespace {

// The members of a chat body this route reads, with the types they must have: a wrong type
// is a 400 naming the member (the reference reads them leniently: a wrong type is the
// default). Nothing is stored; the checks below read the values once they are known good.
struct ChatBody {};

// A type a member can be required to have: its test, and its name in the error.
struct JsonType {
  bool (Json::*has)() const noexcept;
  const char* name;
};
constexpr JsonType kArray{&Json::is_array, "array"};
constexpr JsonType kObject{&Json::is_object, "object"};
constexpr JsonType kString{&Json::is_string, "string"};
constexpr JsonType kBoolean{&Json::is_boolean, "boolean"};
constexpr JsonType kInteger{&Json::is_number_integer, "integer"};

// A row's check: the member must have type `type`.
template <const JsonType& type>
std::optional<ApiError> must_be(const Json& v, const std::string& used, ChatBody&,
                                const fields::FieldContext&) {
  if (!(v.*type.has)()) return fields::type_error(used, type.name, v);
  return std::nullopt;
}

const std::vector<fields::Field<ChatBody>>& chat_body_fields() {
  using F = fields::Field<ChatBody>;
  using Ctx = fields::FieldContext;
  static const std::vector<F> table = {
      {.name = "tools", .target = &must_be<kArray>},
      {.name = "tool_choice",
       .target = [](const Json& v, const std::string& u, ChatBody&,
                    const Ctx&) -> std::optional<ApiError> {
         if (v.is_string()) return std::nullopt;
         // A named function: {"type": "function", "function": {"name": "..."}}.
         if (v.is_object() && v.contains("function") && v["function"].is_object() &&
             v["function"].contains("name") && v["function"]["name"].is_string()) {
           return std::nullopt;
         }
         return fields::type_error(u, "string or {\"type\":\"function\",\"function\":{\"name\"}}",
                                   v);
       }},
      {.name = "chat_template_kwargs", .target = &must_be<kObject>},
      {.name = "add_generation_prompt", .target = &must_be<kBoolean>},
      {.name = "continue_final_message",
       .target = [](const Json& v, const std::string& u, ChatBody&,
                    const Ctx&) -> std::optional<ApiError> {
         if (v.is_boolean() || v.is_string()) return std::nullopt;
         return fields::type_error(u, "boolean or string", v);
       }},
      {.name = "reasoning_format", .target = &must_be<kString>},
      {.name = "reasoning_effort", .target = &must_be<kString>},
      {.name = "response_format",
       .target = [](const Json& v, const std::string& u, ChatBody&,
                    const Ctx&) { return fields::validate_response_format(v, u); }},
      {.name = "json_schema", .target = &must_be<kObject>},
      {.name = "grammar", .target = &must_be<kString>},
      {.name = "logprobs", .target = &must_be<kBoolean>},
      {.name = "top_logprobs", .target = &must_be<kInteger>},
      {.name = "stream", .target = &must_be<kBoolean>},
      {.name = "parallel_tool_calls", .target = &must_be<kBoolean>},
      {.name = "echo", .target = &must_be<kBoolean>},
  };
  return table;
}

// A body value of type T (checked by chat_body_fields); the fallback when absent or null.
template <typename T>
T lenient(const Json& object, const char* key, T fallback) {
  if (!object.is_object()) return fallback;
  auto it = object.find(key);
  if (it == object.end() || it->is_null()) return fallback;
  try {
    return it->get<T>();
  } catch (const nlohmann::json::type_error&) {
    return fallback;
  }
}

std::optional<ApiError> check_jinja_only(const ChatSettings& settings, bool has_tools,
                                         const std::string& tool_choice) {
  if (settings.use_jinja) return std::nullopt;
  if (has_tools) return invalid_request("tools param requires --jinja flag");
  if (tool_choice != "auto") return invalid_request("tool_choice param requires --jinja flag");
  return std::nullopt;
}

std::optional<ApiError> check_constraints(const Json& body) {
  const Json json_schema = lenient(body, "json_schema", Json());
  if (!json_schema.is_null() && !lenient(body, "grammar", std::string()).empty()) {
    return invalid_request("Cannot use both json_schema and grammar");
  }
  return std::nullopt;
}

// Media parts need a multimodal projector, which Hearth never has.
std::optional<ApiError> check_content_parts(const Json& content) {
  for (const Json& part : content) {
    const std::string type = lenient(part, "type", std::string());
    if (type == "image_url") {
      return invalid_request(
          "image input is not supported - hint: if this is unexpected, you may need to "
          "provide the mmproj");
    }
    if (type == "input_audio") {
      return invalid_request(
          "audio input is not supported - hint: if this is unexpected, you may need to "
          "provide the mmproj");
    }
    if (type == "input_video") {
      return invalid_request(
          "video input is not supported - hint: if this is unexpected, you may need to "
          "provide the mmproj");
    }
    if (type != "text") return invalid_request("unsupported content[].type");
  }
  return std::nullopt;
}

std::optional<ApiError> check_messages(const Json& body) {
  if (!body.is_object() || !body.contains("messages")) {
    return invalid_request("'messages' is required");
  }
  const Json& messages = body["messages"];
  if (!messages.is_array()) return invalid_request("Expected 'messages' to be an array");
  for (const Json& msg : messages) {
    const std::string role = lenient(msg, "role", std::string());
    const bool has_content = msg.is_object() && msg.contains("content");
    if (role != "assistant" && !has_content) {
      return invalid_request("All non-assistant messages must contain 'content'");
    }
    if (role == "assistant" && !has_content) {
      if (!msg.contains("tool_calls")) {
        return invalid_request("Assistant message must contain either 'content' or 'tool_calls'!");
      }
      continue;
    }
    const Json& content = msg["content"];
    if (content.is_string() || content.is_null()) continue;
    if (!content.is_array())
      return invalid_request("Expected 'content' to be a string or an array");
    if (auto err = check_content_parts(content)) return err;
  }
  return std::nullopt;
}

std::optional<ApiError> parse_conversation(const Json& body, const Json& tools,
                                           chat::ChatInputs& inputs, std::string& tool_choice) {
  Result<std::vector<chat::Message>> messages = chat::parse_openai_messages(body["messages"]);
  if (!messages.is_ok())
    return invalid_request(without_json_library_tags(messages.status().message()));
  inputs.messages = std::move(*messages);
  Result<std::vector<chat::Tool>> parsed_tools = chat::parse_openai_tools(tools);
  if (!parsed_tools.is_ok()) {
    return invalid_request(without_json_library_tags(parsed_tools.status().message()));
  }
  inputs.tools = std::move(*parsed_tools);
  if (tool_choice != "auto" && tool_choice != "none" && tool_choice != "required") {
    return invalid_request("Invalid tool_choice: " + tool_choice);
  }
  return std::nullopt;
}

// The function a tool_choice object names ("" for the string forms); it must be a tool.
std::optional<ApiError> named_tool(const Json& body, const std::vector<chat::Tool>& tools,
                                   std::string& name) {
  auto it = body.find("tool_choice");
  if (it == body.end() || !it->is_object()) return std::nullopt;
  name = (*it)["function"]["name"].get<std::string>();
  for (const chat::Tool& t : tools) {
    if (t.name == name) return std::nullopt;
  }
  return invalid_request("tool_choice names a function that is not in tools: " + name);
}

chat::Continuation continuation_of(const Json& value) {
  if (value.is_boolean() && value.get<bool>()) return chat::Continuation::kAuto;
  if (value == "reasoning_content") return chat::Continuation::kReasoning;
  if (value == "content") return chat::Continuation::kContent;
  return chat::Continuation::kNone;
}

// The explicit continuation, or the implicit prefill of a trailing assistant message.
std::optional<ApiError> decide_continuation(const Json& body, const ChatSettings& settings,
                                            chat::ChatInputs& inputs) {
  inputs.add_generation_prompt = lenient(body, "add_generation_prompt", true);
  inputs.continuation = body.contains("continue_final_message")
                            ? continuation_of(body["continue_final_message"])
                            : chat::Continuation::kNone;
  const auto& msgs = inputs.messages;
  if (inputs.continuation == chat::Continuation::kNone && settings.prefill_assistant &&
      !msgs.empty() && msgs.back().role == "assistant") {
    if (msgs.size() >= 2 && msgs[msgs.size() - 2].role == "assistant") {
      return invalid_request("Cannot have 2 or more assistant messages at the end of the list.");
    }
    inputs.continuation = chat::Continuation::kAuto;
    inputs.add_generation_prompt = false;
  }
  if (inputs.continuation != chat::Continuation::kNone && inputs.add_generation_prompt) {
    return invalid_request(
        "Cannot set both add_generation_prompt and continue_final_message to true.");
  }
  return std::nullopt;
}

std::optional<ApiError> check_reasoning_format(const Json& body) {
  if (!body.contains("reasoning_format")) return std::nullopt;
  const std::string format = lenient(body, "reasoning_format", std::string("deepseek"));
  if (format != "none" && format != "auto" && format != "deepseek" && format != "deepseek-legacy") {
    return invalid_request("Unknown reasoning format: " + format);
  }
  return std::nullopt;
}

// Server kwargs, then the request's over them; the thinking switches they imply.
std::optional<ApiError> merge_kwargs(const Json& body, const ChatSettings& settings,
                                     chat::ChatInputs& inputs) {
  inputs.kwargs = settings.template_kwargs.is_object() ? settings.template_kwargs : Json::object();
  // The server's reasoning options are template variables the request's kwargs override.
  if (settings.reasoning_effort != "default") {
    inputs.kwargs["reasoning_effort"] = settings.reasoning_effort;
  }
  if (settings.reasoning_preserve >= 0) {
    inputs.kwargs["preserve_reasoning"] = settings.reasoning_preserve == 1;
  }
  const Json request_kwargs = lenient(body, "chat_template_kwargs", Json::object());
  if (request_kwargs.is_object()) {
    for (const auto& [key, value] : request_kwargs.items()) inputs.kwargs[key] = value;
  }
  // -rea on/off set enable_thinking; auto leaves it to the template.
  inputs.enable_thinking =
      settings.reasoning == -1 ? settings.templates->supports_thinking() : settings.reasoning == 1;
  auto thinking = inputs.kwargs.find("enable_thinking");
  if (thinking != inputs.kwargs.end()) {
    if (thinking->is_boolean()) {
      inputs.enable_thinking = thinking->get<bool>();
    } else if (thinking->is_string()) {
      return invalid_request("invalid type for \"enable_thinking\" (expected boolean, got string)");
    }
  }
  if (body.contains("reasoning_effort")) {
    const std::string effort = lenient(body, "reasoning_effort", std::string());
    if (effort == "none") {
      inputs.enable_thinking = false;
      inputs.kwargs.erase("reasoning_effort");
    } else if (!effort.empty()) {
      inputs.kwargs["reasoning_effort"] = effort;
    }
  }
  return std::nullopt;
}

std::optional<ApiError> check_logprobs(const Json& body, bool has_tools) {
  if (lenient(body, "logprobs", false)) {
    if (has_tools && lenient(body, "stream", false)) {
      return invalid_request("logprobs is not supported with tools + stream");
    }
  } else if (body.is_object() && body.contains("top_logprobs") && !body["top_logprobs"].is_null()) {
    return invalid_request("top_logprobs requires logprobs to be set to true");
  }
  return std::nullopt;
}

// Everything before the render: the request checks and the template inputs.
std::optional<ApiError> prepare_inputs(const Json& body, const ChatSettings& settings,
                                       chat::ChatInputs& inputs) {
  const Json tools = lenient(body, "tools", Json());
  const bool has_tools = tools.is_array() && !tools.empty();
  std::string tool_choice = lenient(body, "tool_choice", std::string("auto"));
  if (auto err = check_jinja_only(settings, has_tools, tool_choice)) return err;
  if (auto err = check_constraints(body)) return err;
  if (auto err = check_messages(body)) return err;
  if (auto err = parse_conversation(body, tools, inputs, tool_choice)) return err;
  if (auto err = decide_continuation(body, settings, inputs)) return err;
  if (auto err = check_reasoning_format(body)) return err;
  if (!inputs.tools.empty() && tool_choice != "none" && body.contains("grammar")) {
    return invalid_request("Cannot use custom grammar constraints with tools.");
  }
  return merge_kwargs(body, settings, inputs);
}

}  // namespace

std::optional<ApiError> build_chat_prompt(const Json& body, const ChatSettings& settings,
                                          ChatPromptRequest& out) {
  ChatBody checked;
  if (auto err = fields::parse_fields(chat_body_fields(), body, checked, {})) return err;
  if (auto err = prepare_inputs(body, settings, out.inputs)) return err;
  if (auto err = named_tool(body, out.inputs.tools, out.forced_tool)) return err;
  Result<chat::ChatPrompt> prompt = settings.templates->apply(out.inputs);
  // A template that refuses the conversation (raise_exception, or a message it cannot
  // render) is answered as the client's mistake; the reference answers 500.
  if (!prompt.is_ok()) return invalid_request(prompt.status().message());
  out.prompt = std::move(*prompt);
  const Json tools = lenient(body, "tools", Json());
  return check_logprobs(body, tools.is_array() && !tools.empty());
}

}  // namespace hearth::server
