// The checks run in the reference's order (server-common.cpp's oaicompat_chat_params_parse),
// so a body with several problems gets the same first error.
#include "server/chat_request.h"

#include <string>

#include "chat/openai_messages.h"

namespace hearth::server {

namespace {

// A message's string member ("" when absent or another type; the message parser reports
// wrong types with the reference's texts after these checks).
std::string string_member(const Json& object, const char* key) {
  if (!object.is_object()) return {};
  auto it = object.find(key);
  return it != object.end() && it->is_string() ? it->get<std::string>() : std::string();
}

std::optional<ApiError> check_jinja_only(const ChatSettings& settings, bool has_tools,
                                         const std::string& tool_choice) {
  if (settings.use_jinja) return std::nullopt;
  if (has_tools) return invalid_request("tools param requires --jinja flag");
  if (tool_choice != "auto") return invalid_request("tool_choice param requires --jinja flag");
  return std::nullopt;
}

std::optional<ApiError> check_constraints(const ChatRequest& request) {
  if (!request.json_schema.is_null() && !request.grammar.empty()) {
    return invalid_request("Cannot use both json_schema and grammar");
  }
  return std::nullopt;
}

const char* const kMediaHint =
    " input is not supported - hint: if this is unexpected, you may need to provide the mmproj";

// An image or audio part: its bytes join `files` and the part becomes the media marker
// (the reference rewrites it to {"type": "media_marker", "text": marker}).
std::optional<ApiError> take_media_part(Json& part, const std::string& type,
                                        const ChatMediaContext* media,
                                        std::vector<MediaBytes>& files) {
  const bool image = type == "image_url";
  const bool allowed = media != nullptr && (image ? media->support.vision
                                                  : type == "input_audio" && media->support.audio);
  if (!allowed) {
    return invalid_request((image                   ? "image"
                            : type == "input_audio" ? "audio"
                                                    : "video") +
                           std::string(kMediaHint));
  }
  std::string url;
  const Json& holder = part.is_object() && part.contains(type) ? part[type] : Json();
  if (image) {
    url = string_member(holder, "url");
  } else {
    // input_audio: "data", else "url".
    url = holder.is_object() && holder.contains("data") ? string_member(holder, "data")
                                                        : string_member(holder, "url");
  }
  if (auto err = load_media(url, image, media->fetch, files)) return err;
  part = Json{{"type", "media_marker"}, {"text", media->marker}};
  return std::nullopt;
}

std::optional<ApiError> check_content_parts(Json& content, const ChatMediaContext* media,
                                            std::vector<MediaBytes>& files) {
  for (Json& part : content) {
    const std::string type = string_member(part, "type");
    if (type == "image_url" || type == "input_audio" || type == "input_video") {
      if (auto err = take_media_part(part, type, media, files)) return err;
      continue;
    }
    if (type != "text") return invalid_request("unsupported content[].type");
  }
  return std::nullopt;
}

// Checks the messages in the reference's order; image and audio parts are taken out into
// `files` in a copy of the messages (`rewritten`, left null when there are none).
std::optional<ApiError> check_messages(const ChatRequest& request, ChatPromptRequest& out,
                                       std::optional<Json>& rewritten) {
  if (!request.messages) return invalid_request("'messages' is required");
  const Json& messages = *request.messages;
  if (!messages.is_array()) return invalid_request("Expected 'messages' to be an array");
  for (size_t i = 0; i < messages.size(); ++i) {
    const Json& msg = messages[i];
    const std::string role = string_member(msg, "role");
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
    // Parts are rewritten in a copy, made when the first message with parts is met.
    if (!rewritten) rewritten = messages;
    if (auto err = check_content_parts((*rewritten)[i]["content"], out.media, out.files)) {
      return err;
    }
  }
  return std::nullopt;
}

std::optional<ApiError> parse_conversation(const ChatRequest& request, const Json& messages_json,
                                           chat::ChatInputs& inputs) {
  Result<std::vector<chat::Message>> messages = chat::parse_openai_messages(messages_json);
  if (!messages.is_ok())
    return invalid_request(without_json_library_tags(messages.status().message()));
  inputs.messages = std::move(*messages);
  Result<std::vector<chat::Tool>> parsed_tools = chat::parse_openai_tools(request.tools);
  if (!parsed_tools.is_ok()) {
    return invalid_request(without_json_library_tags(parsed_tools.status().message()));
  }
  inputs.tools = std::move(*parsed_tools);
  const std::string& choice = request.tool_choice;
  if (choice != "auto" && choice != "none" && choice != "required") {
    return invalid_request("Invalid tool_choice: " + choice);
  }
  return std::nullopt;
}

// The function a tool_choice object names ("" for the string forms); it must be a tool.
std::optional<ApiError> named_tool(const ChatRequest& request, const std::vector<chat::Tool>& tools,
                                   std::string& name) {
  if (request.tool_choice_function.empty()) return std::nullopt;
  name = request.tool_choice_function;
  for (const chat::Tool& t : tools) {
    if (t.name == name) return std::nullopt;
  }
  return invalid_request("tool_choice names a function that is not in tools: " + name);
}

// The explicit continuation, or the implicit prefill of a trailing assistant message.
std::optional<ApiError> decide_continuation(const ChatRequest& request,
                                            const ChatSettings& settings,
                                            chat::ChatInputs& inputs) {
  inputs.add_generation_prompt = request.add_generation_prompt;
  inputs.continuation = request.continuation;
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

std::optional<ApiError> check_reasoning_format(const ChatRequest& request) {
  if (!request.reasoning_format) return std::nullopt;
  const std::string& format = *request.reasoning_format;
  if (format != "none" && format != "auto" && format != "deepseek" && format != "deepseek-legacy") {
    return invalid_request("Unknown reasoning format: " + format);
  }
  return std::nullopt;
}

// Server kwargs, then the request's over them; the thinking switches they imply.
std::optional<ApiError> merge_kwargs(const ChatRequest& request, const ChatSettings& settings,
                                     chat::ChatInputs& inputs) {
  inputs.kwargs = settings.template_kwargs.is_object() ? settings.template_kwargs : Json::object();
  // The server's reasoning options are template variables the request's kwargs override.
  if (settings.reasoning_effort != "default") {
    inputs.kwargs["reasoning_effort"] = settings.reasoning_effort;
  }
  if (settings.reasoning_preserve >= 0) {
    inputs.kwargs["preserve_reasoning"] = settings.reasoning_preserve == 1;
  }
  for (const auto& [key, value] : request.chat_template_kwargs.items()) {
    inputs.kwargs[key] = value;
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
  if (request.reasoning_effort) {
    const std::string& effort = *request.reasoning_effort;
    if (effort == "none") {
      inputs.enable_thinking = false;
      inputs.kwargs.erase("reasoning_effort");
    } else if (!effort.empty()) {
      inputs.kwargs["reasoning_effort"] = effort;
    }
  }
  return std::nullopt;
}

std::optional<ApiError> check_logprobs(const ChatRequest& request, bool has_tools) {
  if (request.logprobs) {
    if (has_tools && request.stream) {
      return invalid_request("logprobs is not supported with tools + stream");
    }
  } else if (request.top_logprobs) {
    return invalid_request("top_logprobs requires logprobs to be set to true");
  }
  return std::nullopt;
}

// Everything before the render: the request checks and the template inputs.
bool has_tools(const ChatRequest& request) {
  return request.tools.is_array() && !request.tools.empty();
}

std::optional<ApiError> prepare_inputs(const ChatRequest& request, const ChatSettings& settings,
                                       ChatPromptRequest& out) {
  chat::ChatInputs& inputs = out.inputs;
  if (auto err = check_jinja_only(settings, has_tools(request), request.tool_choice)) return err;
  if (auto err = check_constraints(request)) return err;
  std::optional<Json> rewritten;
  if (auto err = check_messages(request, out, rewritten)) return err;
  if (auto err = parse_conversation(request, rewritten ? *rewritten : *request.messages, inputs)) {
    return err;
  }
  if (auto err = decide_continuation(request, settings, inputs)) return err;
  if (auto err = check_reasoning_format(request)) return err;
  if (!inputs.tools.empty() && request.tool_choice != "none" && request.grammar_given) {
    return invalid_request("Cannot use custom grammar constraints with tools.");
  }
  return merge_kwargs(request, settings, inputs);
}

}  // namespace

std::optional<ApiError> build_chat_prompt(const ChatRequest& request, const ChatSettings& settings,
                                          ChatPromptRequest& out) {
  out.files = request.files;
  if (auto err = prepare_inputs(request, settings, out)) return err;
  if (auto err = named_tool(request, out.inputs.tools, out.forced_tool)) return err;
  Result<chat::ChatPrompt> prompt = settings.templates->apply(out.inputs);
  // A template that refuses the conversation (raise_exception, or a message it cannot
  // render) is answered as the client's mistake; the reference answers 500.
  if (!prompt.is_ok()) return invalid_request(prompt.status().message());
  out.prompt = std::move(*prompt);
  return check_logprobs(request, has_tools(request));
}

}  // namespace hearth::server
