// POST /v1/responses and /v1/responses/input_tokens (openai-compat.md §7, §9): a Responses
// body translated to a chat body, run through the chat pipeline, answered as a `response`
// object or as its typed events.
#include <memory>

#include "server/completion_run.h"
#include "server/openai/openai_routes.h"
#include "server/request_body.h"
#include "server/server_state.h"

namespace hearth::server::openai {

namespace {

bool is_string_member(const Json& item, const char* key) {
  return item.contains(key) && item[key].is_string();
}

std::optional<ApiError> user_parts(const Json& content, Json& parts) {
  for (const Json& part : content) {
    const std::string type = part.is_object() ? str_of(part, "type") : "";
    if (type == "input_text") {
      parts.push_back(Json{{"type", "text"}, {"text", member_of(part, "text", Json(""))}});
    } else if (type == "input_image") {
      if (!part.contains("image_url")) return invalid_request("'image_url' is required");
      parts.push_back(Json{{"type", "image_url"}, {"image_url", Json{{"url", part["image_url"]}}}});
    } else if (type == "input_file") {
      return invalid_request("'input_file' is not supported by llamacpp at this moment");
    } else {
      return invalid_request("'type' must be one of 'input_text', 'input_image', or 'input_file'");
    }
  }
  return std::nullopt;
}

std::optional<ApiError> assistant_parts(const Json& content, Json& parts) {
  for (const Json& part : content) {
    const std::string type = part.is_object() ? str_of(part, "type") : "";
    if (type == "output_text" || type == "input_text") {
      if (!is_string_member(part, "text")) return invalid_request("'text' is required");
      parts.push_back(Json{{"type", "text"}, {"text", part["text"]}});
    } else if (type == "refusal") {
      if (!is_string_member(part, "refusal"))
        return invalid_request("'Refusal' requires 'refusal'");
      parts.push_back(Json{{"type", "refusal"}, {"refusal", part["refusal"]}});
    } else {
      return invalid_request("'type' must be one of 'output_text' or 'refusal'");
    }
  }
  return std::nullopt;
}

// The assistant message new items attach to: the last one, or a new one.
Json& assistant_for(Json& messages) {
  if (messages.empty() || str_of(messages.back(), "role") != "assistant") {
    messages.push_back(Json{{"role", "assistant"}, {"content", ""}});
  }
  return messages.back();
}

std::optional<ApiError> convert_item(Json item, Json& messages) {
  if (!item.is_object()) return invalid_request("Cannot determine type of 'item'");
  if (item.contains("content") && item["content"].is_string()) {
    item["content"] = Json::array({Json{{"type", "input_text"}, {"text", item["content"]}}});
  }
  const std::string role = str_of(item, "role");
  const std::string type = str_of(item, "type");
  const bool array_content = item.contains("content") && item["content"].is_array();
  if ((role == "user" || role == "system" || role == "developer") && array_content) {
    Json parts = Json::array();
    if (auto err = user_parts(item["content"], parts)) return err;
    messages.push_back(Json{{"role", role}, {"content", std::move(parts)}});
  } else if (role == "assistant" && type == "message" && array_content) {
    Json parts = Json::array();
    if (auto err = assistant_parts(item["content"], parts)) return err;
    if (!messages.empty() && str_of(messages.back(), "role") == "assistant" &&
        messages.back()["content"].is_array()) {
      for (Json& p : parts) messages.back()["content"].push_back(std::move(p));
    } else {
      messages.push_back(Json{{"role", "assistant"}, {"content", std::move(parts)}});
    }
  } else if (type == "function_call" && is_string_member(item, "arguments") &&
             is_string_member(item, "call_id") && is_string_member(item, "name")) {
    Json& msg = assistant_for(messages);
    Json call = {{"id", item["call_id"]},
                 {"type", "function"},
                 {"function", Json{{"name", item["name"]}, {"arguments", item["arguments"]}}}};
    if (!msg.contains("tool_calls")) msg["tool_calls"] = Json::array();
    msg["tool_calls"].push_back(std::move(call));
  } else if (type == "function_call_output" && is_string_member(item, "call_id") &&
             item.contains("output") && (item["output"].is_string() || item["output"].is_array())) {
    Json output = item["output"];
    if (output.is_array()) {
      Json parts = Json::array();
      for (const Json& p : output) {
        if (!p.is_object() || str_of(p, "type") != "input_text") {
          return invalid_request("Output of tool call should be 'Input text'");
        }
        parts.push_back(Json{{"type", "text"}, {"text", member_of(p, "text", Json(""))}});
      }
      output = std::move(parts);
    }
    messages.push_back(
        Json{{"role", "tool"}, {"tool_call_id", item["call_id"]}, {"content", std::move(output)}});
  } else if (type == "reasoning" && item.contains("summary") && item["summary"].is_array() &&
             array_content && !item["content"].empty() &&
             is_string_member(item["content"][0], "text")) {
    assistant_for(messages)["reasoning_content"] = item["content"][0]["text"];
  } else {
    return invalid_request("Cannot determine type of 'item'");
  }
  return std::nullopt;
}

std::optional<ApiError> convert_tools(const Json& tools, Json& chat) {
  if (!tools.is_array()) return invalid_request("'tools' must be an array of objects");
  Json out = Json::array();
  for (const Json& t : tools) {
    if (!t.is_object() || str_of(t, "type") != "function") continue;
    Json function = t;
    function.erase("type");
    if (!function.contains("strict")) function["strict"] = true;
    out.push_back(Json{{"type", "function"}, {"function", std::move(function)}});
  }
  chat.erase("tools");
  if (!out.empty()) chat["tools"] = std::move(out);
  return std::nullopt;
}

// The chat body of a Responses body (openai-compat.md §7.1).
std::optional<ApiError> to_chat_body(const Json& body, Json& chat) {
  chat = body;
  if (!body.contains("input")) return invalid_request("'input' is required");
  if (body.contains("previous_response_id") && body["previous_response_id"].is_string() &&
      !body["previous_response_id"].get<std::string>().empty()) {
    return invalid_request("llama.cpp does not support 'previous_response_id'.");
  }
  Json messages = Json::array();
  if (is_string_member(body, "instructions")) {
    messages.push_back(Json{{"role", "system"}, {"content", body["instructions"]}});
  }
  const Json& input = body["input"];
  if (input.is_string()) {
    messages.push_back(Json{{"role", "user"}, {"content", input}});
  } else if (input.is_array()) {
    for (const Json& item : input) {
      if (auto err = convert_item(item, messages)) return err;
    }
  } else {
    return invalid_request("'input' must be a string or array of objects");
  }
  chat.erase("input");
  chat.erase("instructions");
  chat["messages"] = std::move(messages);
  if (body.contains("tools")) {
    if (auto err = convert_tools(body["tools"], chat)) return err;
  }
  if (body.contains("max_output_tokens")) {
    chat["max_tokens"] = body["max_output_tokens"];
    chat.erase("max_output_tokens");
  }
  if (body.contains("reasoning")) {
    const Json& reasoning = body["reasoning"];
    if (reasoning.is_object() && reasoning.contains("effort")) {
      chat["reasoning_effort"] = reasoning["effort"];
    }
    chat.erase("reasoning");
  }
  return std::nullopt;
}

Json responses_usage(const scheduler::FinalResult& r) {
  const int32_t prompt = r.timings.cache_n + r.timings.prompt_n;
  return Json{{"input_tokens", prompt},
              {"output_tokens", r.n_predicted},
              {"total_tokens", prompt + r.n_predicted},
              {"input_tokens_details", Json{{"cached_tokens", r.timings.cache_n}}}};
}

Json output_text(const std::string& text) {
  return Json{{"type", "output_text"},
              {"annotations", Json::array()},
              {"logprobs", Json::array()},
              {"text", text}};
}

Json call_item(const AnsweredCall& c, const char* status) {
  return Json{{"id", "fc_" + c.id},       {"type", "function_call"},   {"status", status},
              {"arguments", c.arguments}, {"call_id", "call_" + c.id}, {"name", c.name}};
}

class ResponsesFormat final : public ResultFormat {
 public:
  explicit ResponsesFormat(ChatRun& run)
      : output_(run.output),
        meta_(run.meta),
        response_id_("resp_" + random_id()),
        reasoning_id_("rs_" + random_id()),
        message_id_("msg_" + random_id()) {}

  Json final_body(const std::vector<scheduler::FinalResult>& finals) override {
    output_->finished();
    const scheduler::FinalResult& r = finals.front();
    chat::ParsedMessage m = output_->parse_final(r.content);
    Json output = Json::array();
    if (!m.reasoning.empty()) {
      output.push_back(Json{{"id", reasoning_id_},
                            {"summary", Json::array()},
                            {"type", "reasoning"},
                            {"content", reasoning_content(m.reasoning)},
                            {"encrypted_content", ""},
                            {"status", "completed"}});
    }
    if (!m.content.empty()) {
      output.push_back(Json{{"content", Json::array({output_text(m.content)})},
                            {"id", message_id_},
                            {"role", "assistant"},
                            {"status", "completed"},
                            {"type", "message"}});
    }
    for (const AnsweredCall& c : output_->answered_calls(r.index, m)) {
      output.push_back(call_item(c, "completed"));
    }
    const int64_t now = unix_seconds();
    Json j = Json::object();
    j["completed_at"] = now;
    j["created_at"] = now;
    j["id"] = response_id_;
    j["model"] = meta_.model;
    j["object"] = "response";
    j["output"] = std::move(output);
    j["status"] = "completed";
    j["usage"] = responses_usage(r);
    return j;
  }

  std::string progress_frames(int32_t, const scheduler::ProgressInfo&) override { return ""; }

  std::string partial_frames(const scheduler::PartialResult& p) override {
    std::string out = start(p.index);
    return out + deltas(p.index, output_->step(p.index, p.content));
  }

  std::string final_frames(const scheduler::FinalResult& r) override {
    std::string out = start(r.index);
    output_->finish(r.index);  // held-back text shows only in the done events
    const chat::ParsedMessage& m = output_->parsed(r.index);
    Json items = Json::array();
    if (!m.reasoning.empty()) {
      Json item = {{"id", reasoning_id_},
                   {"summary", Json::array()},
                   {"type", "reasoning"},
                   {"content", reasoning_content(m.reasoning)},
                   {"encrypted_content", ""}};
      out += event("response.output_item.done", Json{{"item", item}});
      items.push_back(std::move(item));
    }
    if (!m.content.empty()) {
      out +=
          event("response.output_text.done", Json{{"item_id", message_id_}, {"text", m.content}});
      out += event("response.content_part.done",
                   Json{{"item_id", message_id_}, {"part", output_text(m.content)}});
      Json item = {{"type", "message"},
                   {"status", "completed"},
                   {"id", message_id_},
                   {"content", Json::array({output_text(m.content)})},
                   {"role", "assistant"}};
      out += event("response.output_item.done", Json{{"item", item}});
      items.push_back(std::move(item));
    }
    for (const AnsweredCall& c : output_->answered_calls(r.index, m)) {
      Json item = call_item(c, "completed");
      out += event("response.output_item.done", Json{{"item", item}});
      items.push_back(std::move(item));
    }
    Json response = {{"id", response_id_},           {"object", "response"},
                     {"created_at", unix_seconds()}, {"status", "completed"},
                     {"model", meta_.model},         {"output", std::move(items)},
                     {"usage", responses_usage(r)}};
    Json completed = {{"type", "response.completed"},
                      {"response", std::move(response)},
                      {"timings", timings_json(r.timings)}};
    return out + sse_event("response.completed", completed);
  }

  std::string next_prompt_frames() override { return ""; }
  std::string end_frames() override {
    output_->finished();
    return "";
  }

 private:
  static Json reasoning_content(const std::string& text) {
    return Json::array({Json{{"text", text}, {"type", "reasoning_text"}}});
  }

  // An event whose data starts with its type.
  static std::string event(const std::string& type, const Json& members) {
    Json j = {{"type", type}};
    for (const auto& [k, v] : members.items()) j[k] = v;
    return sse_event(type, j);
  }

  std::string start(int32_t index) {
    if (!output_->begin(index)) return "";
    const Json response = {{"id", response_id_}, {"object", "response"}, {"status", "in_progress"}};
    return event("response.created", Json{{"response", response}}) +
           event("response.in_progress", Json{{"response", response}});
  }

  std::string deltas(int32_t index, const chat::MessageDelta& d) {
    std::string out;
    if (!d.reasoning.empty()) {
      if (!reasoning_started_) {
        reasoning_started_ = true;
        out += event("response.output_item.added", Json{{"item", Json{{"id", reasoning_id_},
                                                                      {"summary", Json::array()},
                                                                      {"type", "reasoning"},
                                                                      {"content", Json::array()},
                                                                      {"encrypted_content", ""},
                                                                      {"status", "in_progress"}}}});
      }
      out += event("response.reasoning_text.delta",
                   Json{{"delta", d.reasoning}, {"item_id", reasoning_id_}});
    }
    if (!d.content.empty()) {
      if (!message_started_) {
        message_started_ = true;
        out += event("response.output_item.added", Json{{"item", Json{{"content", Json::array()},
                                                                      {"id", message_id_},
                                                                      {"role", "assistant"},
                                                                      {"status", "in_progress"},
                                                                      {"type", "message"}}}});
        out += event(
            "response.content_part.added",
            Json{{"item_id", message_id_}, {"part", Json{{"type", "output_text"}, {"text", ""}}}});
      }
      out +=
          event("response.output_text.delta", Json{{"item_id", message_id_}, {"delta", d.content}});
    }
    for (const chat::ToolCallDelta& t : d.tool_calls) {
      const std::string id = output_->call_id(index, t.index, t.id);
      if (t.is_new) {
        out += event("response.output_item.added", Json{{"item", Json{{"id", "fc_" + id},
                                                                      {"arguments", ""},
                                                                      {"call_id", "call_" + id},
                                                                      {"name", t.name},
                                                                      {"type", "function_call"},
                                                                      {"status", "in_progress"}}}});
      }
      if (!t.arguments.empty()) {
        out += event("response.function_call_arguments.delta",
                     Json{{"delta", t.arguments}, {"item_id", "fc_" + id}});
      }
    }
    return out;
  }

  std::shared_ptr<ChatOutput> output_;
  ResponseMeta meta_;
  std::string response_id_, reasoning_id_, message_id_;
  bool reasoning_started_ = false;
  bool message_started_ = false;
};

}  // namespace

http::Response handle_responses(ServerState& s, const http::Request& r) {
  Json body, chat;
  if (auto err = parse_json_object(r.body, body)) return error_response(*err);
  if (auto err = to_chat_body(body, chat)) return error_response(*err);
  ChatRun run;
  if (auto err = prepare_chat(s, chat, run)) return error_response(*err);
  auto format = std::make_shared<ResponsesFormat>(run);
  return start_chat(s, std::move(run), std::move(format));
}

http::Response handle_responses_input_tokens(ServerState& s, const http::Request& r) {
  Json body, chat;
  if (auto err = parse_json_object(r.body, body)) return error_response(*err);
  if (auto err = to_chat_body(body, chat)) return error_response(*err);
  return count_chat_tokens(s, chat, true);
}

}  // namespace hearth::server::openai
